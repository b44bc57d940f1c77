"""``BrowseReads``: what the dashboard and ``/mem list`` read (pages, counts, places, people, titles).
Run on every backend (``conftest.BACKENDS``)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from astrbot_plugin_engram.memory import Episode, InvalidInputError, Memory
from astrbot_plugin_engram.memory.scopes import Visibility
from astrbot_plugin_engram.memory.store import Store

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=timezone(timedelta(hours=8)))
A, B = "qq:group:1", "qq:group:2"


def ep(text: str, place: str = A, minutes: float = 0, **kw: object) -> Episode:
    return Episode(place=place, content=text, time=T0 + timedelta(minutes=minutes), **kw)  # type: ignore[arg-type]


async def test_each_place_keeps_the_latest_title_it_went_by_and_a_line_keeps_none(store: Store) -> None:
    """A group renamed keeps its new name (the latest line's, whatever order a batch holds them in);
    a late line with the old name does not undo it; a place never titled has none."""
    async with store.transaction() as tx:
        await tx.add_episodes([ep("hi", A, 2, place_title="Book club"),
                               ep("yo", A, 1, place_title="Old club"), ep("hey", B)])
    assert await store.place_titles() == {A: "Book club"}
    async with store.transaction() as tx:
        await tx.add_episodes([ep("renamed", A, 5, place_title="读书会"),
                               ep("late", A, 3, place_title="Old")])
    async with store.transaction() as tx:
        await tx.add_episodes([ep("later", A, 4, place_title="Old club")])
    assert await store.place_titles() == {A: "读书会"}
    assert all(e.place_title == "" for e in await store.place_episodes(A, 10))  # not kept per line


async def test_memories_are_listed_by_filter_newest_first_a_page_at_a_time(store: Store) -> None:
    async with store.transaction() as tx:
        [e1, e2] = await tx.add_episodes([ep("in A", A), ep("in B", B)])
    async with store.transaction() as tx:
        ids = [await tx.add_memory(Memory(f"fact {n}", "public", sources=(e2,))) for n in range(5)]
    async with store.transaction() as tx:
        liked = await tx.add_memory(Memory("Ann likes tea", "space:" + A, kind="preference",
                                           subjects=("qq:1",)))
    async with store.transaction() as tx:
        learned = await tx.add_memory(Memory("from A", "self", kind="event", sources=(e1,)))
    async with store.transaction() as tx:
        await tx.set_memory_fields(ids[0], status="archived")

    async def listed(**kw: object) -> list[int]:
        return [m.id for m in (await store.list_memories(**kw))[0]]  # type: ignore[arg-type,misc]

    assert await listed(kind="fact", limit=2) == [ids[4], ids[3]]  # active ones, by default
    assert await listed(kind="fact", status=None, limit=2, offset=4) == [ids[0]]
    assert (await store.list_memories(kind="fact", status=None, limit=2))[1] == 5  # how many in all
    assert await listed(scope="space:" + A) == [liked]
    assert await listed(place=A) == [learned, liked]  # said there, or scoped there
    assert await listed(people=["qq:1"]) == [liked]
    async with store.transaction() as tx:
        named = await tx.add_memory(Memory("ann's cat is Miso", "public"))
    assert await listed(people=["qq:1"], named="Ann") == [named, liked]  # or about no one, naming her
    assert await listed(named="miso") == [named]
    assert await listed(status="archived") == [ids[0]]
    assert await listed(vis=Visibility(frozenset({"self"}), frozenset({A}))) == [learned]


async def test_a_places_episodes_are_paged_in_order(store: Store) -> None:
    async with store.transaction() as tx:
        await tx.add_episodes([ep(f"line {n}", A if n % 2 else B, n) for n in range(9)])
    page2 = await store.place_episodes(A, limit=2, offset=2)
    assert [e.content for e in page2] == ["line 5", "line 7"]
    assert await store.place_episodes(A, limit=2, offset=4) == []
    with pytest.raises(InvalidInputError):
        await store.place_episodes(A, limit=0)


async def test_memories_are_counted_by_kind_scope_and_status(store: Store) -> None:
    async with store.transaction() as tx:
        await tx.add_memory(Memory("a", "public", kind="fact"))
    async with store.transaction() as tx:
        old = await tx.add_memory(Memory("b", "self", kind="diary"))
    async with store.transaction() as tx:
        await tx.add_memory(Memory("b2", "self", kind="diary"), supersedes=old)
    assert await store.memory_counts("kind") == {"diary": 2, "fact": 1}
    assert await store.memory_counts("scope") == {"public": 1, "self": 2}
    assert await store.memory_counts("status") == {"active": 2, "superseded": 1}
    with pytest.raises(InvalidInputError):
        await store.memory_counts("text")


async def test_episodes_are_counted_per_day_in_their_own_zone(store: Store) -> None:
    late = datetime(2024, 5, 1, 23, 30, tzinfo=timezone(timedelta(hours=8)))  # 15:30 UTC
    async with store.transaction() as tx:
        await tx.add_episodes([Episode(place=A, content="late", time=late),
                               Episode(place=A, content="later", time=late + timedelta(hours=1)),
                               Episode(place=B, content="elsewhere", time=late)])
    assert await store.episodes_per_day(A) == [("2024-05-01", 1), ("2024-05-02", 1)]
    assert await store.episodes_per_day() == [("2024-05-01", 2), ("2024-05-02", 1)]


async def test_memories_are_searched_by_text(store: Store) -> None:
    async with store.transaction() as tx:
        await tx.add_memory(Memory("Ann likes GREEN tea", "public", subjects=("qq:1",)))
    async with store.transaction() as tx:
        await tx.add_memory(Memory("王磊喜欢绿茶", "space:" + A, kind="preference"))
    async with store.transaction() as tx:
        await tx.add_memory(Memory("coffee", "public"))

    async def found(**kw: object) -> tuple[list[str], int]:
        memories, total = await store.list_memories(**kw)  # type: ignore[arg-type]
        return [m.text for m in memories], total

    assert await found(text="green") == (["Ann likes GREEN tea"], 1)
    assert await found(text="绿茶") == (["王磊喜欢绿茶"], 1)
    assert (await found(text="e", limit=1))[1] == 2
    assert await found(people=("qq:1",), text="tea") == (["Ann likes GREEN tea"], 1)


async def test_places_people_and_who_answers_whom(store: Store) -> None:
    said = [ep("hi", A, 0, actor="qq:1", actor_name="Ann"), ep("hello", A, 1, actor="qq:2", actor_name="Bo"),
            ep("hey", A, 2, actor="qq:1", actor_name="Ann"), ep("alone", B, 3, actor="qq:3", actor_name="Cy")]
    async with store.transaction() as tx:
        ids = await tx.add_episodes(said)
    assert [(s, n) for s, n, _ in await store.places()] == [(A, 3), (B, 1)]
    assert await store.people() == [("qq:1", "Ann", 2), ("qq:2", "Bo", 1), ("qq:3", "Cy", 1)]
    assert await store.talks(10) == [("qq:1", "qq:2", 2)]  # Ann -> Bo -> Ann; Cy spoke alone
    assert await store.count_place_episodes(A) == 3 and await store.count_place_episodes("none") == 0
    middle = (await store.get_episodes([ids[1]]))[ids[1]]
    assert [e.content for e in await store.episodes_around(middle, 1, 1)] == ["hi", "hello", "hey"]
    assert await store.has_place(A) and not await store.has_place("qq:group:9")
    async with store.transaction() as tx:
        await tx.add_memory(Memory("about Bo", "space:qq:group:9", subjects=("qq:2",), importance=0.9))
    async with store.transaction() as tx:
        await tx.add_memory(Memory("about no one", "public"))
    assert await store.has_place("qq:group:9")  # a memory scoped there
    assert [m.text for m in await store.memories_about(10)] == ["about Bo"]
