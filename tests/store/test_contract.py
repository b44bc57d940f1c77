"""The Store contract: what every backend must do, stated once and run on each (``conftest.BACKENDS``)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest

from astrbot_plugin_engram.memory import Episode, InvalidInputError, Memory, StoreError, UnknownIdError
from astrbot_plugin_engram.memory.scopes import Visibility
from astrbot_plugin_engram.memory.store import (
    EmbedRow,
    EpisodesAdded,
    MemoriesDeleted,
    MemoryAdded,
    MemoryChanged,
    Store,
    VectorsSaved,
)
from astrbot_plugin_engram.memory.text import prepare_episode, query_words

from .conftest import Opener

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=timezone(timedelta(hours=8)))
A, B = "qq:group:1", "qq:group:2"


def ep(text: str, place: str = A, minutes: float = 0, **kw: object) -> Episode:
    return Episode(place=place, content=text, time=T0 + timedelta(minutes=minutes), **kw)  # type: ignore[arg-type]


# ---- episodes ---------------------------------------------------------------------------------
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


async def test_episode_columns_and_places_describe_what_was_written(store: Store) -> None:
    async with store.transaction() as tx:
        await tx.add_episodes([ep("look at this?", A, actor_name="Ann", kind="image"), ep("plain", B)])
    rows = await store.episode_columns(0, 10)
    assert [(r.id, r.place, r.seq, r.actor_name, r.image) for r in rows] == [
        (1, A, 1, "Ann", True), (2, B, 1, "", False)]
    assert rows[0].shape == prepare_episode(ep("look at this?"))[1] and rows[0].tz == 480
    assert await store.episode_columns(1, 10) == rows[1:]
    assert await store.last_episode_id() == 2
    places = await store.keyed_places()
    assert sorted(places.values()) == [A, B]
    assert await store.place_key(A) in places and await store.place_key("never") is None


async def test_last_episode_time_of_a_place(store: Store) -> None:
    async with store.transaction() as tx:
        await tx.add_episodes([ep("a", A, 0), ep("b", A, 10), ep("c", B, 20)])
    assert await store.last_episode_time(A) == T0 + timedelta(minutes=10)
    assert await store.last_episode_time(A, before=T0 + timedelta(minutes=5)) == T0
    assert await store.last_episode_time("elsewhere") is None


async def test_aliases_of_a_person_most_recent_first(store: Store) -> None:
    async with store.transaction() as tx:
        await tx.add_episodes([ep("hi", actor="qq:1", actor_name="Alice"),
                                  ep("hi again", minutes=5, actor="qq:1", actor_name="Ally")])
    assert await store.aliases("qq:1") == ["Ally", "Alice"]


async def test_each_place_knows_the_name_a_person_last_went_by_there(store: Store) -> None:
    async with store.transaction() as tx:
        await tx.add_episodes([ep("hi", A, actor="qq:1", actor_name="Ann"),
                                  ep("yo", B, 1, actor="qq:1", actor_name="Annie"),
                                  ep("hey", A, 2, actor="qq:2", actor_name="Bo")])
    async with store.transaction() as tx:
        await tx.add_episodes([ep("back", A, 3, actor="qq:1", actor_name="Ann (away)")])
    assert await store.names_in_place(A, ["qq:1", "qq:2", "qq:3"]) == {"qq:1": "Ann (away)", "qq:2": "Bo"}
    assert await store.names_in_place(B, ["qq:1", "qq:2"]) == {"qq:1": "Annie"}  # not A's names
    assert await store.names_in_place(A, []) == {}
    assert await store.people_named_in(B, " annie ") == ["qq:1"]
    assert await store.people_named_in(A, "Annie") == []  # a name from another place
    assert await store.people_named("Annie") == ["qq:1"]  # ... which people_named still knows
    assert sorted(await store.people_mentioned_in(A, "I saw bo and ANN (AWAY) today")) == ["qq:1", "qq:2"]
    assert await store.people_mentioned_in(A, "Annie was there, and a bonbon") == []  # B's name; not a word


async def test_each_place_keeps_the_latest_title_it_went_by_and_a_line_keeps_none(store: Store) -> None:
    """A group renamed keeps its new name (the latest line's, whatever order a batch holds them in);
    a late line with the old name does not undo it; a place never titled has none."""
    async with store.transaction() as tx:
        await tx.add_episodes([ep("hi", A, 2, place_title="Book club"), ep("yo", A, 1, place_title="Old club"),
                                  ep("hey", B)])
    assert await store.place_titles() == {A: "Book club"}
    async with store.transaction() as tx:
        await tx.add_episodes([ep("renamed", A, 5, place_title="读书会"), ep("late", A, 3, place_title="Old")])
    async with store.transaction() as tx:
        await tx.add_episodes([ep("later", A, 4, place_title="Old club")])
    assert await store.place_titles() == {A: "读书会"}
    assert all(e.place_title == "" for e in await store.place_episodes(A, 10))  # not kept per line


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


# ---- memories ---------------------------------------------------------------------------------
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


async def test_rank_rows_carry_what_recall_checks(store: Store) -> None:
    async with store.transaction() as tx:
        mid = await tx.add_memory(Memory("tea", "public", importance=0.7, strength=0.5, created_at=T0))
    [row] = await store.memory_rank_rows([mid, 999])
    assert (row.id, row.text, row.scope, row.status, row.importance, row.strength) == (
        mid, "tea", "public", "active", 0.7, 0.5)
    assert row.created_at == T0.timestamp() and row.valid_from is None
    assert await store.memory_rank_rows([]) == []


# ---- transactions and listeners ---------------------------------------------------------------
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


async def test_cursors_start_at_zero_and_keep_what_was_set(store: Store) -> None:
    assert await store.cursor("jobs:diary") == 0
    async with store.transaction() as tx:
        await tx.set_cursor("jobs:diary", 42)
    async with store.transaction() as tx:
        await tx.set_cursor("jobs:diary", 43)
    assert await store.cursor("jobs:diary") == 43


# ---- keyword postings -------------------------------------------------------------------------
async def test_postings_name_the_rows_holding_each_word_in_the_places_asked(store: Store) -> None:
    words = query_words("lighthouse keeper")
    async with store.transaction() as tx:
        await tx.add_episodes([ep("the lighthouse keeper", A), ep("a lighthouse", B), ep("nothing", A)])
    a, b = await store.place_key(A), await store.place_key(B)
    assert a is not None and b is not None
    lists, exact = await store.episode_postings(words, [a])
    assert exact and [sorted(x.tolist()) for x in lists] == [[1], [1]]
    lists, exact = await store.episode_postings(words, None)  # every place
    assert exact and [sorted(x.tolist()) for x in lists] == [[1, 2], [1]]
    many = [a, b, *range(1000, 1020)]  # a wide audience: the rows may hold other places too
    lists, exact = await store.episode_postings(words, many)
    assert {1, 2} <= set(lists[0].tolist())
    async with store.transaction() as tx:
        mid = await tx.add_memory(Memory("the keeper waved", "public"))
    assert [x.tolist() for x in await store.memory_postings(words)] == [[], [mid]]


async def test_keyword_rows_give_each_rows_group_and_length(store: Store) -> None:
    async with store.transaction() as tx:
        await tx.add_episodes([ep("the lighthouse keeper waved", A), ep("rain", B)])
    async with store.transaction() as tx:
        mid = await tx.add_memory(Memory("Ann keeps bees", "self"))
    rows = await store.episode_keyword_rows(0, 10)
    a = await store.place_key(A)
    assert [(r.id, r.group, r.length) for r in rows][0] == (1, a, 3 + 2)  # 3 words, month and year
    assert [r.id for r in await store.episode_keyword_rows(0, 10, [2])] == [2]
    assert [(r.id, r.group, r.length) for r in await store.memory_keyword_rows(0, 10)] == [
        (mid, ("self", "active"), 3)]


async def test_index_words_of_episodes_read_back(store: Store) -> None:
    async with store.transaction() as tx:
        [eid] = await tx.add_episodes([ep("Lighthouses shine", actor_name="Ann")])
    assert await store.episode_index_words([eid]) == {eid: ["lighthous", "shine", "ann", "may", "2024"]}


# ---- vectors ----------------------------------------------------------------------------------
async def test_vectors_are_kept_per_model_and_read_back_in_pages(store: Store) -> None:
    async with store.transaction() as tx:
        await tx.add_episodes([ep("a", A), ep("b", B), ep("c", A)])
    todo = await store.items_to_embed("e", 0, 10)
    assert [(r.id, r.group, r.status, r.text) for r in todo] == [(1, A, "active", "a"), (2, B, "active", "b"),
                                                                  (3, A, "active", "c")]
    vecs = np.arange(9, dtype=np.float32).reshape(3, 3)
    heard: list[object] = []
    store.listen(heard.append)
    async with store.transaction() as tx:
        await tx.save_vectors("m1", "e", todo, vecs)
        await tx.set_cursor("vectors:m1:e", 3)
    assert isinstance(heard[0], VectorsSaved) and heard[0].model == "m1"
    rows, got = await store.vectors_page("m1", "e", 1, 10)
    assert [r.id for r in rows] == [2, 3] and np.array_equal(got, vecs[1:])
    assert sorted(await store.vector_counts("m1")) == [("e", A, 2), ("e", B, 1)]
    assert (await store.vectors_page("m2", "e", 0, 10))[0] == []
    async with store.transaction() as tx:
        await tx.drop_vectors("m1")
    assert await store.vector_counts("m1") == []
    async with store.transaction() as tx:
        await tx.save_vectors("m2", "e", todo[:1], vecs[:1])  # a write of its own
    assert await store.vector_counts("m2") == [("e", A, 1)]


async def test_second_vectors_are_kept_compact_per_model_and_read_back_in_pages(store: Store) -> None:
    async with store.transaction() as tx:
        await tx.add_episodes([ep("a", A), ep("b", B)])
    async with store.transaction() as tx:
        mid = await tx.add_memory(Memory("m", "self"))
    todo = await store.items_to_embed("e", 0, 10)
    rng = np.random.default_rng(3)
    vecs = rng.normal(size=(2, 16)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    heard: list[VectorsSaved] = []
    store.listen(lambda c: heard.append(c) if isinstance(c, VectorsSaved) else None)
    async with store.transaction() as tx:
        await tx.save_query_vectors("m1#as-query", "e", todo, vecs)
        await tx.save_query_vectors("m1#as-query", "m", await store.items_to_embed("m", 0, 10), vecs[:1])
    assert [(c.model, c.kind) for c in heard] == [("m1#as-query", "e"), ("m1#as-query", "m")]
    ids, got = await store.query_vectors_page("m1#as-query", "e", 1, 10)
    assert ids == [2] and np.allclose(got[0], vecs[1], atol=0.01)  # compact: int8 of the largest
    ids, got = await store.query_vectors_page("m1#as-query", "m", 0, 10)
    assert ids == [mid] and np.allclose(got[0], vecs[0], atol=0.01)
    assert (await store.query_vectors_page("m2#as-query", "e", 0, 10))[0] == []  # kept per model
    assert await store.vector_counts("m1") == []
    async with store.transaction() as tx:
        await tx.drop_vectors("m1#as-query")
    assert (await store.query_vectors_page("m1#as-query", "e", 0, 10))[0] == []


async def test_memories_to_embed_carry_scope_and_status(store: Store) -> None:
    async with store.transaction() as tx:
        old = await tx.add_memory(Memory("v1", "self"))
    async with store.transaction() as tx:
        new = await tx.add_memory(Memory("v2", "owner"), supersedes=old)  # a version keeps the scope
    rows = await store.items_to_embed("m", 0, 10)
    assert rows == [EmbedRow(old, "self", "superseded", "v1"), EmbedRow(new, "self", "active", "v2")]


# ---- browsing (the dashboard) -----------------------------------------------------------------
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


# ---- opening read-only ------------------------------------------------------------------------
async def test_a_read_only_store_reads_and_refuses_every_write(open_store: Opener, tmp_path: Path) -> None:
    writer = await open_store(tmp_path)
    try:
        async with writer.transaction() as tx:
            await tx.add_episodes([ep("hello")])
        reader = await open_store(tmp_path, read_only=True)
        try:
            assert reader.read_only and not writer.read_only
            assert (await reader.get_episodes([1]))[1].content == "hello"
            async with writer.transaction() as tx:
                await tx.add_episodes([ep("new, seen at once")])
            assert await reader.last_episode_id() == 2
            with pytest.raises(StoreError, match="read-only"):
                async with reader.transaction() as tx:
                    await tx.add_episodes([ep("refused")])
            with pytest.raises(StoreError, match="read-only"):
                async with reader.transaction() as tx:
                    await tx.set_cursor("c", 1)
            assert await reader.integrity() == []
        finally:
            await reader.close()
    finally:
        await writer.close()


async def test_read_only_needs_an_existing_store(open_store: Opener, tmp_path: Path) -> None:
    with pytest.raises(StoreError):
        await open_store(tmp_path, read_only=True)
    assert not any(tmp_path.iterdir())  # noqa: ASYNC240 - nothing was created


async def test_a_store_reports_itself_sound(store: Store) -> None:
    async with store.transaction() as tx:
        await tx.add_episodes([ep("hello")])
    async with store.transaction() as tx:
        await tx.add_memory(Memory("tea", "self"))
    assert await store.integrity() == []


# ---- where background work stands (consolidation, the scheduler) -------------------------------
async def test_a_places_backlog_and_the_episodes_past_its_cursor(store: Store) -> None:
    async with store.transaction() as tx:
        await tx.add_episodes([ep("a", A, 0), ep("b", B, 1), ep("c", A, 2), ep("d", A, 3)])
    backlog = {row[0]: row[1:] for row in await store.episode_backlog({A: 1})}

    def at(minutes: int) -> float:
        return (T0 + timedelta(minutes=minutes)).timestamp()

    assert backlog == {A: (2, 4, at(2), at(3)), B: (1, 2, at(1), at(1))}
    assert await store.episode_backlog({A: 4, B: 2}) == []
    assert [e.content for e in await store.episodes_after(A, 1, 10)] == ["c", "d"]
    assert [e.content for e in await store.episodes_after(A, 0, 2)] == ["a", "c"]


async def test_cursors_by_prefix_move_with_the_memories_of_one_transaction(store: Store) -> None:
    async with store.transaction() as tx:
        await tx.set_cursor("consolidate:x", 5)
    async with store.transaction() as tx:
        await tx.set_cursor("vectors:m:e", 9)
    with pytest.raises(RuntimeError):
        async with store.transaction() as tx:
            await tx.add_memory(Memory("learned", "public"))
            await tx.set_cursor("consolidate:x", 7)
            raise RuntimeError("the batch failed half way")
    assert await store.cursors("consolidate:") == {"consolidate:x": 5}
    assert (await store.counts())["memories"] == 0
    async with store.transaction() as tx:
        await tx.add_memory(Memory("learned", "public"))
        await tx.set_cursor("consolidate:x", 7)
    assert await store.cursors("consolidate") == {"consolidate:x": 7}
    assert (await store.counts())["memories"] == 1


async def test_job_runs_are_kept_by_name(store: Store) -> None:
    assert await store.job_runs() == {}
    await store.save_job_run("consolidate", {"status": "ok", "totals": {"added": 3}})
    await store.save_job_run("consolidate", {"status": "failed", "error": "boom"})
    await store.save_job_run("diary", {"status": "ok"})
    assert await store.job_runs() == {"consolidate": {"status": "failed", "error": "boom"},
                                      "diary": {"status": "ok"}}
