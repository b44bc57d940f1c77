"""What a transaction offers (``Writes``, the one door for writes): episodes and memories as written,
versions, bookkeeping fields, deletes, several writes committed together, listeners after COMMIT.
Run on every backend (``conftest.BACKENDS``)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from astrbot_plugin_engram.memory import Episode, Memory, UnknownIdError
from astrbot_plugin_engram.memory.store import (
    EpisodesAdded,
    MemoriesDeleted,
    MemoryAdded,
    MemoryChanged,
    Store,
)

from .conftest import Opener

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=timezone(timedelta(hours=8)))
A, B = "qq:group:1", "qq:group:2"


def ep(text: str, place: str = A, minutes: float = 0, **kw: object) -> Episode:
    return Episode(place=place, content=text, time=T0 + timedelta(minutes=minutes), **kw)  # type: ignore[arg-type]


async def test_episodes_come_back_as_written_with_ids_in_order(store: Store) -> None:
    async with store.transaction() as tx:
        ids = await tx.add_episodes([ep("hello", actor="qq:7", actor_name="Ann", meta={"image": "a.png"}),
                                     ep("world", B, 1)])
    assert ids == [1, 2]
    got = await store.get_episodes([2, 1, 99])
    assert set(got) == {1, 2}
    first = got[1]
    assert (first.content, first.actor, first.actor_name) == ("hello", "qq:7", "Ann")
    assert first.meta == {"image": "a.png"}
    assert first.time == T0 and first.time.utcoffset() == timedelta(hours=8)  # its own zone kept


async def test_each_place_numbers_its_episodes_and_a_silence_starts_a_section(store: Store) -> None:
    async with store.transaction() as tx:
        await tx.add_episodes([ep("a", A, 0), ep("b", B, 1), ep("c", A, 2), ep("d", A, 60 * 4)])
    async with store.transaction() as tx:
        await tx.add_episodes([ep("e", A, 60 * 4 + 1, meta={"section_break": True})])
    got = await store.get_episodes([1, 2, 3, 4, 5])
    assert [(got[i].place, got[i].seq, got[i].section) for i in range(1, 6)] == [
        (A, 1, 0), (B, 1, 0), (A, 2, 0), (A, 3, 1), (A, 4, 2)]


async def test_a_second_store_on_the_same_file_never_shares_a_place_in_a_place(
        open_store: Opener, tmp_path: Path) -> None:
    """Two writers on one file (the bot and the CLI): each re-reads the places the other wrote in."""
    first, second = await open_store(tmp_path), await open_store(tmp_path)
    try:
        async with first.transaction() as tx:
            await tx.add_episodes([ep("1", A), ep("2", A)])  # first now knows A's last number
        async with second.transaction() as tx:
            await tx.add_episodes([ep("3", A, 1), ep("b1", B, 1)])
        async with first.transaction() as tx:
            await tx.add_episodes([ep("4", A, 2), ep("b2", B, 2)])
        async with second.transaction() as tx:
            await tx.add_episodes([ep("5", A, 3)])
        got = await first.get_episodes(range(1, 8))
        assert sorted((e.place, e.seq, e.content) for e in got.values()) == [
            (A, 1, "1"), (A, 2, "2"), (A, 3, "3"), (A, 4, "4"), (A, 5, "5"), (B, 1, "b1"), (B, 2, "b2")]
    finally:
        await second.close()
        await first.close()


async def test_a_memory_comes_back_with_its_sources_sorted(store: Store) -> None:
    async with store.transaction() as tx:
        await tx.add_episodes([ep("a"), ep("b"), ep("c")])
    async with store.transaction() as tx:
        mid = await tx.add_memory(Memory("Ann likes tea", "space:" + A, kind="preference", subjects=("qq:1",),
                                         sources=(3, 1), importance=0.8))
    m = (await store.get_memories([mid]))[mid]
    assert (m.text, m.scope, m.kind, m.subjects, m.sources, m.importance, m.status) == (
        "Ann likes tea", "space:" + A, "preference", ("qq:1",), (1, 3), 0.8, "active")


async def test_a_new_version_supersedes_the_old_and_both_are_kept(store: Store) -> None:
    async with store.transaction() as tx:
        old = await tx.add_memory(Memory("v1", "self"))
    async with store.transaction() as tx:
        new = await tx.add_memory(Memory("v2", "self"), supersedes=old)
    assert await store.versions(new) == await store.versions(old) == [old, new]
    got = await store.get_memories([old, new])
    assert (got[old].status, got[new].status, got[new].supersedes) == ("superseded", "active", old)
    with pytest.raises(UnknownIdError):
        async with store.transaction() as tx:
            await tx.add_memory(Memory("v3", "self"), supersedes=old)
    with pytest.raises(UnknownIdError):
        async with store.transaction() as tx:
            await tx.add_memory(Memory("v3", "self"), supersedes=999)


async def test_bookkeeping_fields_change_in_place_and_nothing_else_does(store: Store) -> None:
    async with store.transaction() as tx:
        mid = await tx.add_memory(Memory("note", "self"))
    async with store.transaction() as tx:
        await tx.set_memory_fields(mid, strength=0.3, status="archived", scope="owner")
    m = (await store.get_memories([mid]))[mid]
    assert (m.strength, m.status, m.scope) == (0.3, "archived", "owner")
    with pytest.raises(ValueError, match="in place"):
        async with store.transaction() as tx:
            await tx.set_memory_fields(mid, text="rewritten")
    assert (await store.get_memories([mid]))[mid].text == "note"


async def test_deleting_a_memory_deletes_every_version(store: Store) -> None:
    async with store.transaction() as tx:
        old = await tx.add_memory(Memory("v1", "self"))
    async with store.transaction() as tx:
        new = await tx.add_memory(Memory("v2", "self"), supersedes=old)
    async with store.transaction() as tx:
        keep = await tx.add_memory(Memory("other", "self"))
    async with store.transaction() as tx:
        assert sorted(await tx.delete_memories([new])) == [old, new]
    assert set(await store.get_memories([old, new, keep])) == {keep}
    assert await store.versions(old) == []


async def test_a_transaction_commits_several_writes_together(store: Store) -> None:
    async with store.transaction() as tx:
        [eid] = await tx.add_episodes([ep("the batch's source")])
        mid = await tx.add_memory(Memory("learned", "self", sources=(eid,)))
        await tx.set_cursor("consolidate:" + A, eid)
    assert (await store.get_memories([mid]))[mid].sources == (eid,)
    assert await store.cursor("consolidate:" + A) == eid


async def test_a_failed_transaction_leaves_nothing_behind(store: Store) -> None:
    with pytest.raises(RuntimeError, match="model failed"):
        async with store.transaction() as tx:
            await tx.add_episodes([ep("never")])
            await tx.add_memory(Memory("never", "self"))
            await tx.set_cursor("c", 5)
            raise RuntimeError("model failed")
    assert await store.counts() == {"episodes": 0, "memories": 0, "archived": 0, "superseded": 0,
                                    "spaces": 0, "people": 0, "vectors": 0}
    assert await store.cursor("c") == 0
    async with store.transaction() as tx:
        assert await tx.add_episodes([ep("after")]) == [1]  # numbering not thrown off
    assert (await store.get_episodes([1]))[1].seq == 1


async def test_listeners_hear_each_change_only_after_commit(store: Store) -> None:
    heard: list[object] = []
    store.listen(heard.append)
    with pytest.raises(RuntimeError):
        async with store.transaction() as tx:
            await tx.add_memory(Memory("rolled back", "self"))
            raise RuntimeError
    assert heard == []
    async with store.transaction() as tx:
        [eid] = await tx.add_episodes([ep("hello there")])
        mid = await tx.add_memory(Memory("tea", "self"))
        assert heard == []  # not before COMMIT
    async with store.transaction() as tx:
        await tx.set_memory_fields(mid, scope="public")
    async with store.transaction() as tx:
        await tx.set_memory_fields(mid, strength=0.2)  # who may find it is unchanged: nothing to hear
    async with store.transaction() as tx:
        await tx.delete_memories([mid])
    assert [type(c) for c in heard] == [EpisodesAdded, MemoryAdded, MemoryChanged, MemoriesDeleted]
    added = heard[0]
    assert isinstance(added, EpisodesAdded) and [r.id for r in added.rows] == [eid]
    assert added.lengths == [3]  # hello, may, 2024
    changed = heard[2]
    assert isinstance(changed, MemoryChanged) and (changed.scope, changed.fields) == ("public", {"scope"})
