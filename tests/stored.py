"""A memory read back by the id a call returned, known to be there: a test fails at the read (the id
was None, or nothing is stored under it), not later at an attribute of None."""

from __future__ import annotations

from astrbot_plugin_engram.memory import Engram, Memory


async def stored(engram: Engram, memory_id: int | None) -> Memory:
    assert memory_id is not None, "no memory was written"
    m = await engram.get(memory_id)
    assert m is not None, f"m{memory_id} is not in the store"
    return m
