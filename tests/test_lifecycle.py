"""Keyed lifecycle: record, add, get, update, history, forget."""

from __future__ import annotations

import pytest

from astrbot_plugin_engram.memory import Audience, Engram, Episode, Memory, UnknownIdError


async def test_record_returns_increasing_ids(engram: Engram) -> None:
    a = await engram.record(Episode(space="qq:group:1", content="hello"))
    b = await engram.record(Episode(space="qq:group:1", content="again"))
    assert b > a
    assert (await engram.get_episode(a)).content == "hello"


async def test_update_keeps_old_version_superseded(engram: Engram) -> None:
    m = await engram.add_memory(Memory(text="likes tea", scope="public"))
    m2 = await engram.update(m, "likes green tea")
    versions = await engram.history(m2)
    assert [v.text for v in versions] == ["likes tea", "likes green tea"]
    assert [v.status for v in versions] == ["superseded", "active"]


async def test_forget_removes_every_version(engram: Engram) -> None:
    m = await engram.add_memory(Memory(text="likes tea", scope="public"))
    m2 = await engram.update(m, "likes green tea")
    assert await engram.forget([m2]) == 2
    with pytest.raises(UnknownIdError):
        await engram.get(m)
    assert await engram.recall("tea", Audience("x")) == []
