"""``RecallReads``: what recall and its in-memory indexes read (episode columns, rank rows, keyword
postings and rows, index words, vectors).
Run on every backend (``conftest.BACKENDS``)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np

from astrbot_plugin_engram.memory import Episode, Memory
from astrbot_plugin_engram.memory.store import (
    Store,
    VectorsSaved,
    int8_codes,
    int8_factor,
    normalise,
)
from astrbot_plugin_engram.memory.text.words import prepare_episode, query_words

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=timezone(timedelta(hours=8)))
A, B = "qq:group:1", "qq:group:2"


def ep(text: str, place: str = A, minutes: float = 0, **kw: object) -> Episode:
    return Episode(place=place, content=text, time=T0 + timedelta(minutes=minutes), **kw)  # type: ignore[arg-type]


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


async def test_rank_rows_carry_what_recall_checks(store: Store) -> None:
    async with store.transaction() as tx:
        mid = await tx.add_memory(Memory("tea", "public", importance=0.7, strength=0.5, created_at=T0))
    [row] = await store.memory_rank_rows([mid, 999])
    assert (row.id, row.text, row.scope, row.status, row.importance, row.strength) == (
        mid, "tea", "public", "active", 0.7, 0.5)
    assert row.created_at == T0.timestamp() and row.valid_from is None
    assert await store.memory_rank_rows([]) == []


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


async def test_a_keyword_page_is_the_keyword_rows_as_columns(store: Store) -> None:
    async with store.transaction() as tx:
        await tx.add_episodes([ep("the lighthouse keeper waved", A), ep("rain", B), ep("Lighthouses shine", B,
                               actor_name="Ann"), ep("一个 灯塔 守护者", A), ep("", A)])
    rows = await store.episode_keyword_rows(0, 10)
    page = await store.episode_keyword_page(0, 10)
    assert list(zip(page.ids.tolist(), page.groups.tolist(), page.lengths.tolist())) == [
        (r.id, r.group, r.length) for r in rows]
    second = await store.episode_keyword_page(2, 2)  # a page past an id, of a limited size
    assert second.ids.tolist() == [3, 4] and second.lengths.tolist() == [r.length for r in rows[2:4]]
    assert (await store.episode_keyword_page(5, 10)).ids.tolist() == []


async def test_index_words_of_episodes_read_back(store: Store) -> None:
    async with store.transaction() as tx:
        [eid] = await tx.add_episodes([ep("Lighthouses shine", actor_name="Ann")])
    assert await store.episode_index_words([eid]) == {eid: ["lighthous", "shine", "ann", "may", "2024"]}


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


async def test_each_vector_is_kept_as_its_int8_codes_under_one_factor_per_model(store: Store) -> None:
    """What the index loads at open: the codes as the live index made them when they were saved (the
    factor fixed by the model's first vectors), with each item's place or scope and status."""
    async with store.transaction() as tx:
        await tx.add_episodes([ep("a", A), ep("b", B), ep("c", A)])
        mid = await tx.add_memory(Memory("m", "self"))
    todo = await store.items_to_embed("e", 0, 10)
    rng = np.random.default_rng(5)
    vecs = rng.normal(size=(4, 16)).astype(np.float32)
    heard: list[VectorsSaved] = []
    store.listen(lambda c: heard.append(c) if isinstance(c, VectorsSaved) else None)
    assert await store.vector_scale("m1") is None
    async with store.transaction() as tx:
        await tx.save_vectors("m1", "e", todo[:2], vecs[:2])
    factor = await store.vector_scale("m1")
    assert factor == int8_factor(normalise(vecs[:2])) == heard[0].factor
    async with store.transaction() as tx:  # later vectors: the same factor, even if they are larger
        await tx.save_vectors("m1", "e", todo[2:], 3 * vecs[2:3])
        await tx.save_vectors("m1", "m", await store.items_to_embed("m", 0, 10), vecs[3:])
    assert await store.vector_scale("m1") == factor
    page = await store.vector_codes_page("m1", "e", 0, 10)
    assert page.ids.tolist() == [1, 2, 3]
    assert np.array_equal(page.codes, int8_codes(normalise(vecs[:3]), factor))
    codes = heard[0].codes  # as the index heard them after the commit
    assert codes is not None and np.array_equal(page.codes[:2], codes)
    assert [page.groups[g] for g in page.group_at] == [A, B, A]
    assert [page.statuses[s] for s in page.status_at] == ["active"] * 3
    assert (await store.vector_codes_page("m1", "e", 3, 10)).ids.tolist() == []
    mem = await store.vector_codes_page("m1", "m", 0, 10)
    assert mem.ids.tolist() == [mid] and [mem.groups[g] for g in mem.group_at] == ["self"]
    async with store.transaction() as tx:
        await tx.set_memory_fields(mid, status="archived", scope="space:" + B)
    mem = await store.vector_codes_page("m1", "m", 0, 10)  # a memory's scope and status as they are now
    assert [mem.groups[g] for g in mem.group_at] == ["space:" + B]
    assert [mem.statuses[s] for s in mem.status_at] == ["archived"]
    assert (await store.vector_codes_page("m2", "e", 0, 10)).ids.tolist() == []  # kept per model
    async with store.transaction() as tx:  # a model dropped (a reindex): its codes and factor go
        await tx.drop_vectors("m1")
    assert await store.vector_scale("m1") is None
    assert (await store.vector_codes_page("m1", "e", 0, 10)).ids.tolist() == []


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
    ids, got = await store.query_vectors("m1#as-query", "e", [2, 7, 1])  # by id: those that have one
    assert sorted(ids) == [1, 2] and np.allclose(got[ids.index(2)], vecs[1], atol=0.01)
    assert (await store.query_vectors("m1#as-query", "m", [2]))[0] == []  # another kind's id
    assert await store.vector_counts("m1") == []
    async with store.transaction() as tx:
        await tx.drop_vectors("m1#as-query")
    assert (await store.query_vectors_page("m1#as-query", "e", 0, 10))[0] == []
