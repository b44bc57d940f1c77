"""Metabolism (issue 14): archiving, strengths, merging and pairs kept apart (``Writes`` and
``MetabolismReads``).
Run on every backend (``conftest.BACKENDS``)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from astrbot_plugin_engram.memory import Episode, Memory
from astrbot_plugin_engram.memory.store import (
    MemoriesArchived,
    MemoryAdded,
    MemoryChanged,
    Store,
)

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)
A, B = "qq:group:1", "qq:group:2"


def ep(text: str, place: str = A, minutes: float = 0, **kw: object) -> Episode:
    return Episode(place=place, content=text, time=T0 + timedelta(minutes=minutes), **kw)  # type: ignore[arg-type]


async def test_archiving_is_heard_at_once_and_only_active_memories_are_archived(store: Store) -> None:
    async with store.transaction() as tx:
        a = await tx.add_memory(Memory("weak", "self"))
    async with store.transaction() as tx:
        b = await tx.add_memory(Memory("weak too", "public"))
    async with store.transaction() as tx:
        old = await tx.add_memory(Memory("v1", "self"))
    async with store.transaction() as tx:
        await tx.add_memory(Memory("v2", "self"), supersedes=old)
    heard: list[object] = []
    store.listen(heard.append)
    async with store.transaction() as tx:
        assert sorted(await tx.archive([a, b, old])) == [(a, "self"), (b, "public")]
    assert heard == [MemoriesArchived([a, b], ["self", "public"])]
    async with store.transaction() as tx:
        assert await tx.archive([a]) == []  # already archived
    assert [r[0] for r in await store.strength_rows()] == [old + 1]  # only active ones are faded


async def test_strengths_are_set_together_and_superseded_memories_left_alone(store: Store) -> None:
    async with store.transaction() as tx:
        a = await tx.add_memory(Memory("recalled", "self", strength=0.4, created_at=T0))
    async with store.transaction() as tx:
        old = await tx.add_memory(Memory("v1", "self"))
    async with store.transaction() as tx:
        await tx.add_memory(Memory("v2", "self"), supersedes=old)
    async with store.transaction() as tx:
        await tx.archive([a])
    heard: list[object] = []
    store.listen(heard.append)
    later = T0.timestamp() + 3600
    async with store.transaction() as tx:
        await tx.set_strengths([(a, 0.9, later, "active"), (old, 1.0, later, "active")])
    assert (await store.strength_of([a]))[a] == (0.9, later, "active")
    assert (await store.strength_of([old]))[old][2] == "superseded"
    got = await store.get_memories([a, old])
    assert (got[a].strength, got[a].status) == (0.9, "active")
    assert got[old].status == "superseded"
    assert [(type(c), c.id) for c in heard if isinstance(c, MemoryChanged)] == [(MemoryChanged, a)]


async def test_merging_keeps_the_originals_as_versions_and_cites_all_sources(store: Store) -> None:
    async with store.transaction() as tx:
        e1, e2 = await tx.add_episodes([ep("tea"), ep("green tea", minutes=1)])
    async with store.transaction() as tx:
        a = await tx.add_memory(Memory("likes tea", "self", sources=(e1,)))
    async with store.transaction() as tx:
        b = await tx.add_memory(Memory("likes green tea", "self", sources=(e2,)))
    heard: list[object] = []
    store.listen(heard.append)
    async with store.transaction() as tx:
        mid = await tx.merge_memories(Memory("likes tea, green tea most", "self", sources=(e1, e2)), [a, b])
    assert mid is not None
    assert await store.versions(mid) == [a, b, mid]
    got = await store.get_memories([a, b, mid])
    assert [got[i].status for i in (a, b, mid)] == ["superseded", "superseded", "active"]
    assert got[mid].sources == (e1, e2) and got[mid].supersedes == a
    assert got[a].valid_to is not None
    assert isinstance(heard[0], MemoryAdded) and heard[0].id == mid
    assert {(c.id, c.status) for c in heard[1:] if isinstance(c, MemoryChanged)} == {
        (a, "superseded"), (b, "superseded")}
    async with store.transaction() as tx:
        assert await tx.merge_memories(Memory("again", "self"), [a, mid]) is None  # a is no longer active
    assert set(await store.get_memories([mid + 1])) == set()


async def test_groups_kept_apart_are_remembered_until_a_member_is_erased(store: Store) -> None:
    async with store.transaction() as tx:
        a = await tx.add_memory(Memory("tea", "self"))
    async with store.transaction() as tx:
        b = await tx.add_memory(Memory("coffee", "self"))
    async with store.transaction() as tx:
        c = await tx.add_memory(Memory("water", "self"))
    async with store.transaction() as tx:
        await tx.keep_apart([a, b, c])
    assert await store.kept_apart([a, b, c]) == {(a, b), (a, c), (b, c)}
    async with store.transaction() as tx:
        await tx.erase([], [b])
    assert await store.kept_apart([a, c]) == {(a, c)}
