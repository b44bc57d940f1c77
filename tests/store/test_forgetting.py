"""Hard forgetting (issue 14): ``Writes.erase`` and ``ForgettingReads``, what a forget reaches.
Run on every backend (``conftest.BACKENDS``)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest

from astrbot_plugin_engram.memory import Episode, Memory, StoreError
from astrbot_plugin_engram.memory.store import (
    EpisodesAdded,
    EpisodesDeleted,
    MemoriesDeleted,
    PlacesDeleted,
    Store,
)

from .conftest import Opener

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)
A, B = "qq:group:1", "qq:group:2"


def ep(text: str, place: str = A, minutes: float = 0, **kw: object) -> Episode:
    return Episode(place=place, content=text, time=T0 + timedelta(minutes=minutes), **kw)  # type: ignore[arg-type]


async def test_erase_deletes_exactly_what_it_is_given_and_is_heard_after_commit(store: Store) -> None:
    async with store.transaction() as tx:
        e1, e2, e3 = await tx.add_episodes([ep("one"), ep("two", minutes=1), ep("three", minutes=2)])
    async with store.transaction() as tx:
        m1 = await tx.add_memory(Memory("from one", "self", sources=(e1,)))
    async with store.transaction() as tx:
        m2 = await tx.add_memory(Memory("from two", "self", sources=(e2,)))
    heard: list[object] = []
    store.listen(heard.append)
    async with store.transaction() as tx:
        assert await tx.erase([e1, 999], [m1, 998]) == ([e1], [m1])
    assert set(await store.get_episodes([e1, e2, e3])) == {e2, e3}
    assert set(await store.get_memories([m1, m2])) == {m2}
    assert await store.memories_citing([e1, e2]) == [m2]  # the erased memory's source link went too
    assert [type(c) for c in heard] == [EpisodesDeleted, MemoriesDeleted]
    assert heard[0] == EpisodesDeleted([e1]) and heard[1] == MemoriesDeleted([m1])
    async with store.transaction() as tx:
        assert await tx.erase([], []) == ([], [])
    assert len(heard) == 2  # nothing erased: nothing to hear


async def test_erasing_a_line_takes_every_memory_drawn_from_it_with_its_versions(store: Store) -> None:
    """Even one the caller did not name (committed after its plan was read): no memory outlives its line."""
    async with store.transaction() as tx:
        e1, e2 = await tx.add_episodes([ep("one"), ep("two", minutes=1)])
    async with store.transaction() as tx:
        m1 = await tx.add_memory(Memory("from one", "self", sources=(e1,)))
        other = await tx.add_memory(Memory("from two", "self", sources=(e2,)))
    async with store.transaction() as tx:
        m1b = await tx.add_memory(Memory("from one, later", "self", sources=(e2,)), supersedes=m1)
    async with store.transaction() as tx:
        assert await tx.erase([e1], []) == ([e1], sorted([m1, m1b]))
    assert set(await store.get_memories([m1, m1b, other])) == {other}
    assert await store.memories_citing([e1, e2]) == [other]


async def test_erase_takes_every_vector_of_the_item_the_second_ones_too(store: Store) -> None:
    async with store.transaction() as tx:
        e1, e2 = await tx.add_episodes([ep("one"), ep("two", minutes=1)])
    rows = await store.items_to_embed("e", 0, 10)
    vecs = np.eye(2, 4, dtype=np.float32)
    async with store.transaction() as tx:
        await tx.save_vectors("m1", "e", rows, vecs)
        await tx.save_query_vectors("m1#as-query", "e", rows, vecs)
    async with store.transaction() as tx:
        await tx.erase([e1], [])
    assert (await store.query_vectors_page("m1#as-query", "e", 0, 10))[0] == [e2]
    assert [r.id for r in (await store.vectors_page("m1", "e", 0, 10))[0]] == [e2]


async def test_erased_ids_are_never_given_out_again(store: Store) -> None:
    async with store.transaction() as tx:
        [e1, e2] = await tx.add_episodes([ep("a"), ep("b", minutes=1)])
    async with store.transaction() as tx:
        mid = await tx.add_memory(Memory("last", "self"))
    async with store.transaction() as tx:
        await tx.erase([e2], [mid])
    async with store.transaction() as tx:
        assert await tx.add_episodes([ep("c", minutes=2)]) == [e2 + 1]
    async with store.transaction() as tx:
        assert await tx.add_memory(Memory("next", "self")) == mid + 1


async def test_erasing_a_place_drops_its_name_and_cursors(store: Store) -> None:
    async with store.transaction() as tx:
        [a, b] = await tx.add_episodes([ep("here", A), ep("there", B, 1)])
    async with store.transaction() as tx:
        await tx.set_cursor("consolidate:" + A, a)
    async with store.transaction() as tx:
        await tx.set_cursor("consolidate:" + B, b)
    heard: list[object] = []
    store.listen(heard.append)
    async with store.transaction() as tx:
        await tx.erase([a], [], places=[A])
    assert await store.place_key(A) is None and await store.place_key(B) is not None
    assert await store.cursors("consolidate:") == {"consolidate:" + B: b}
    assert isinstance(heard[-1], PlacesDeleted) and heard[-1].names == [A]
    async with store.transaction() as tx:
        [again] = await tx.add_episodes([ep("back again", A, 5)])  # the place starts afresh
    assert (await store.get_episodes([again]))[again].seq == 1
    assert isinstance(heard[-1], EpisodesAdded)


async def test_erasing_a_person_drops_their_names(store: Store) -> None:
    async with store.transaction() as tx:
        await tx.add_episodes([ep("hi", actor="qq:1", actor_name="Ming"),
                               ep("yo", actor="qq:2", actor_name="Li")])
    async with store.transaction() as tx:
        await tx.erase([], [], people=["qq:1"])
    assert await store.aliases("qq:1") == [] and await store.aliases("qq:2") == ["Li"]


async def test_what_a_forget_reaches_is_read_by_actor_place_mention_subject_and_scope(store: Store) -> None:
    async with store.transaction() as tx:
        e1, e2, e3 = await tx.add_episodes([ep("I am Ming", actor="qq:1"), ep("ask ming later", B, 1),
                                            ep("nothing", B, 2)])
    async with store.transaction() as tx:
        about = await tx.add_memory(Memory("likes tea", "self", subjects=("qq:1",), sources=(e1,)))
    async with store.transaction() as tx:
        named = await tx.add_memory(Memory("Ming moved", "space:" + B))
    assert [i for i, _ in await store.episodes_where(actor="qq:1")] == [e1]
    assert sorted(i for i, _ in await store.episodes_where(mentions=["Ming"])) == [e1, e2]
    assert sorted(i for i, _ in await store.episodes_where(place=B)) == [e2, e3]
    assert await store.episodes_where() == []
    assert await store.memories_where(subject="qq:1") == [about]
    assert await store.memories_where(scope="space:" + B) == [named]
    assert [i for i, _ in await store.memories_mentioning(["ming"])] == [named]
    assert await store.source_ids([about, named]) == [e1]
    async with store.transaction() as tx:
        newer = await tx.add_memory(Memory("likes green tea", "self"), supersedes=about)
    assert await store.all_versions([newer]) == [about, newer]


async def test_a_write_sees_which_sources_are_still_there(store: Store) -> None:
    async with store.transaction() as tx:
        e1, e2 = await tx.add_episodes([ep("kept"), ep("forgotten", minutes=1)])
    async with store.transaction() as tx:
        await tx.erase([e2], [])
    async with store.transaction() as tx:
        assert await tx.existing("episodes", [e1, e2, e2]) == [e1]
    with pytest.raises(ValueError):
        async with store.transaction() as tx:
            await tx.existing("aliases", [1])


async def test_a_read_only_store_refuses_to_erase(open_store: Opener, tmp_path: Path) -> None:
    writer = await open_store(tmp_path)
    try:
        async with writer.transaction() as tx:
            [eid] = await tx.add_episodes([ep("hello")])
        reader = await open_store(tmp_path, read_only=True)
        try:
            with pytest.raises(StoreError, match="read-only"):
                async with reader.transaction() as tx:
                    await tx.erase([eid], [])
            with pytest.raises(StoreError, match="read-only"):
                await reader.checkpoint()
            assert set(await reader.get_episodes([eid])) == {eid}
        finally:
            await reader.close()
    finally:
        await writer.close()
