"""A `/mem scope` that narrows a memory while a new version of it is being written (an update, a
consolidation batch, the self-image) is never undone: the new version takes the scope the memory has
when it is committed, and the scope change covers every version that exists when it commits.

Each test interleaves the two writes deterministically at the moment the race needs: between the
writer's read of the old version and its commit."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from astrbot_plugin_engram.memory import Audience, Engram, Memory
from astrbot_plugin_engram.memory.model import next_version, now_utc
from astrbot_plugin_engram.memory.scopes import visibility

GROUP = Audience("qq:group:1")


async def _visible_in_group(e: Engram) -> list[str]:
    return [m.text for m in (await e.list_memories(visibility(GROUP)))[0]]


async def test_an_update_read_before_a_scope_change_does_not_undo_it(
        engram: Engram, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: the update wrote its new version with the scope it had read (public), so the memory the
    owner had just made private showed in a group again."""
    mid = await engram.add_memory(Memory("Alice is moving to Berlin", "public"))
    real_get = engram.get

    async def get_then_owner_narrows(memory_id: int) -> Memory:
        old = await real_get(memory_id)
        monkeypatch.setattr(engram, "get", real_get)  # once
        await engram.set_scope(mid, "owner")  # the owner's /mem scope, between the read and the write
        return old

    monkeypatch.setattr(engram, "get", get_then_owner_narrows)
    new = await engram.update(mid, "Alice moved to Berlin")
    assert (await engram.get(new)).scope == "owner"
    assert [m.scope for m in await engram.history(new)] == ["owner", "owner"]
    assert await _visible_in_group(engram) == []


async def test_a_consolidation_version_read_before_a_scope_change_does_not_undo_it(engram: Engram) -> None:
    """Consolidation reads the old version, asks the model, then commits ``next_version(old)``; a scope
    change in the seconds the model took was undone the same way."""
    mid = await engram.add_memory(Memory("Bob likes green tea", "space:qq:group:1"))
    old = await engram.get(mid)  # the batch's read
    await engram.set_scope(mid, "owner")  # the owner, while the model answers
    [new] = await engram.commit_memories([(next_version(old, now_utc(), text="Bob likes tea"), mid)], {})
    assert (await engram.get(new)).scope == "owner"
    assert await _visible_in_group(engram) == []


async def test_a_scope_change_covers_a_version_written_while_it_ran(
        engram: Engram, monkeypatch: pytest.MonkeyPatch) -> None:
    """The other order: the scope change listed the versions, an update committed a new one, then the
    scope change wrote the list it had: the newest (active) version stayed public."""
    mid = await engram.add_memory(Memory("Carol's phone number is 555-0100", "public"))
    store = engram.store
    real_transaction = store.transaction
    updated: list[int] = []

    @asynccontextmanager
    async def update_first(*args: Any, **kw: Any) -> AsyncIterator[Any]:
        if not updated:  # the scope change's transaction: an update commits just before it
            monkeypatch.setattr(store, "transaction", real_transaction)
            updated.append(await engram.update(mid, "Carol's phone number is 555-0199"))
        async with real_transaction(*args, **kw) as tx:
            yield tx

    monkeypatch.setattr(store, "transaction", update_first)
    await engram.set_scope(mid, "owner")
    assert updated and (await engram.get(updated[0])).scope == "owner"
    assert await _visible_in_group(engram) == []


async def test_an_update_that_names_a_scope_moves_the_whole_history(engram: Engram) -> None:
    """A new version takes its memory's scope; one that asks for another moves every version, as
    ``set_scope`` does (an old version left public would still show in the history of a group)."""
    mid = await engram.add_memory(Memory("Dan's birthday is in May", "public"))
    new = await engram.update(mid, "Dan's birthday is on 3 May", scope="owner")
    assert [m.scope for m in await engram.history(new)] == ["owner", "owner"]
    assert await _visible_in_group(engram) == []
