"""Keyword scores: FTS5's BM25, worked out from its postings with each chat's own statistics."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest

from astrbot_plugin_engram.memory import Audience, Engram, Episode, Memory, NoEmbedder
from astrbot_plugin_engram.memory.index.keywords import KeywordIndex, Keywords
from astrbot_plugin_engram.memory.scopes import visibility
from astrbot_plugin_engram.memory.text.words import query_words

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)
LINES = ["my sister adopted a puppy", "the puppy chewed my shoes", "we walked to the lighthouse",
         "lighthouse keeper waved at the puppy and my sister", "rain all day", "pottery class tonight"]


async def scores(eng: Engram, query: str, place: str) -> dict[int, float]:
    vis = visibility(Audience(place))
    return dict(await eng.indexes.keywords.search_episodes(eng.store, query_words(query), vis, 50))


async def test_scores_are_fts5_bm25_when_no_line_repeats_a_word(keyword_engram: Engram, db_path: Path
                                                                ) -> None:
    await keyword_engram.record_many(Episode(place="qq:group:1", content=t, time=T0) for t in LINES)
    query = "puppy sister lighthouse"
    mine = await scores(keyword_engram, query, "qq:group:1")
    db = sqlite3.connect(db_path)
    terms = " OR ".join(f'"{t}\ue0001"' for t in query_words(query))
    theirs = dict(db.execute("SELECT rowid, -bm25(episodes_fts) FROM episodes_fts WHERE episodes_fts MATCH ?",
                             (terms,)).fetchall())
    db.close()
    assert len(theirs) == 4
    assert mine.keys() == theirs.keys()
    assert mine == pytest.approx(theirs, rel=1e-9)


async def test_a_chats_keyword_scores_do_not_depend_on_other_chats(keyword_engram: Engram) -> None:
    await keyword_engram.record_many(Episode(place="qq:private:7", content=t, time=T0) for t in LINES)
    before = await scores(keyword_engram, "puppy sister rain", "qq:private:7")
    # another chat grows a lot, and talks about the same things
    await keyword_engram.record_many(Episode(place="qq:group:9", content=f"{t} {n}", time=T0)
                                     for n in range(300) for t in LINES[:2])
    after = await scores(keyword_engram, "puppy sister rain", "qq:private:7")
    assert after == pytest.approx(before, rel=1e-12) and len(before) == 4


async def test_a_word_most_of_the_chat_says_weighs_less_than_a_rare_one(keyword_engram: Engram) -> None:
    lines = ["rain", "rain again today", "rain rain go away", "the sun came out over the hills at last"]
    ids = await keyword_engram.record_many(Episode(place="qq:group:3", content=t, time=T0) for t in lines)
    await keyword_engram.record_many(Episode(place="qq:group:4", content=f"filler {n}", time=T0)
                                     for n in range(500))
    found = await scores(keyword_engram, "rain sun", "qq:group:3")
    assert max(found, key=found.__getitem__) == ids[3]


async def test_memory_keyword_search_follows_scope_and_status(keyword_engram: Engram) -> None:
    e = keyword_engram
    here, there = Audience("qq:group:1"), Audience("qq:group:2")
    mid = await e.add_memory(Memory(text="Ann keeps bees on the roof", scope="space:qq:group:1"))

    async def found(aud: Audience, archived: bool = False) -> set[int]:
        found = await e.indexes.keywords.search_memories(e.store, ["bee"], visibility(aud), 10, archived)
        return {i for i, _ in found}

    assert await found(here) == {mid} and await found(there) == set()
    await e.set_scope(mid, "space:qq:group:2")
    assert await found(here) == set() and await found(there) == {mid}
    async with e.store.transaction() as tx:
        await tx.set_memory_fields(mid, status="archived")
    assert await found(there) == set() and await found(there, archived=True) == {mid}
    async with e.store.transaction() as tx:
        await tx.set_memory_fields(mid, status="active")
    new = await e.update(mid, "Ann keeps bees and hens")
    assert await found(there) == {new}
    await e.forget([new])
    assert await found(there) == set() and await found(Audience.owner_console()) == set()


async def test_the_statistics_kept_in_step_equal_those_read_at_open(db_path: Path) -> None:
    e = await Engram.open(db_path, NoEmbedder(), background=False)
    await e.record_many(Episode(place=f"qq:group:{n % 3}", content=t, time=T0) for n, t in enumerate(LINES))
    m1 = await e.add_memory(Memory(text="Ann keeps bees", scope="public"))
    m2 = await e.add_memory(Memory(text="the bot likes rain", scope="self"))
    await e.set_scope(m1, "space:qq:group:1")
    await e.update(m2, "the bot likes rain and thunder")
    m3 = await e.add_memory(Memory(text="a secret of the owner", scope="owner"))
    await e.forget([m3])
    kept = e.indexes.keywords
    await e.close()
    e = await Engram.open(db_path, NoEmbedder(), background=False)
    try:
        read = e.indexes.keywords
        assert state(kept.episodes) == state(read.episodes) and len(state(read.episodes)) == 6
        assert state(kept.memories, kept) == state(read.memories, read) and len(state(read.memories)) == 2
        assert totals(kept.episodes) == totals(read.episodes)
        assert totals(kept.memories, kept) == totals(read.memories, read)
        hits = await e.recall("bees", Audience("qq:group:1"), k=3)
        assert [h.id for h in hits if h.kind == "memory"] == [m1]
    finally:
        await e.close()


def state(index: KeywordIndex, kw: Keywords | None = None) -> dict[int, tuple[object, float]]:
    """Each indexed row's group and length; a memory's group by (scope, status): numbers follow load order."""
    names = {g: name for name, g in kw._mgroups.items()} if kw else {}
    rows = np.flatnonzero(index._group >= 0)
    return {int(r): (names.get(int(index._group[r]), int(index._group[r])), float(index._length[r]))
            for r in rows}


def totals(index: KeywordIndex, kw: Keywords | None = None) -> dict[object, tuple[int, float]]:
    """Each non-empty group's row and word counts (what BM25's row count and average length use)."""
    names = {g: name for name, g in kw._mgroups.items()} if kw else {}
    return {names.get(g, g): (int(index._rows[g]), float(index._words[g]))
            for g in range(len(index._rows)) if index._rows[g]}


def test_rows_the_index_never_saw_stay_out_of_filtered_searches() -> None:
    index = KeywordIndex("episodes")
    index.put([1, 2], [0, 1], [3, 3])
    lists = [np.array([1, 2, 5, 10_000])]  # 5 and 10,000: written by another process since open
    assert [i for i, _ in index.best(lists, [0], 10, filtered=True)] == [1]
    # lists known to hold only the groups searched (keyed words): unknown rows get the average length
    found = dict(index.best(lists, [0], 10, filtered=False))
    assert set(found) == {1, 2, 5, 10_000} and found[5] == found[10_000]
    assert all(np.isfinite(v) and v > 0 for v in found.values())


async def test_rows_another_process_wrote_are_found_by_keyword(db_path: Path) -> None:
    bot = await Engram.open(db_path, NoEmbedder(), background=False)
    cli = await Engram.open(db_path, NoEmbedder(), background=False)  # e.g. the CLI, beside the bot
    try:
        await bot.record(Episode(place="qq:group:1", content="the bakery on Elm street", time=T0))
        mid = await cli.add_memory(Memory(text="Ann's bakery opens at seven", scope="space:qq:group:1"))
        eid = await cli.record(Episode(place="qq:group:1", content="bakery closed today", time=T0))
        hits = await bot.recall("bakery", Audience("qq:group:1"), k=5)
        found = {(h.kind, h.id) for h in hits if h.features["kw"] > 0}
        assert {("memory", mid), ("episode", eid)} <= found
        assert await bot.recall("bakery", Audience("qq:group:2"), k=5) == []  # and only where it belongs
    finally:
        await cli.close()
        await bot.close()


async def test_a_common_words_postings_are_its_newest_and_its_count_is_estimated(keyword_engram: Engram,
                                                                                 monkeypatch, db_path: Path
                                                                                 ) -> None:
    """Past ``DOCLIST_CAP`` rows a word's postings are its newest; BM25 estimates its count from
    them (here within a few percent of the true one, as FTS5 counts it), and an old line is still
    found by its rare words."""
    from astrbot_plugin_engram.memory.index import keywords as index_keywords
    from astrbot_plugin_engram.memory.store.sqlite import keywords as store_keywords

    monkeypatch.setattr(store_keywords, "DOCLIST_CAP", 50)
    monkeypatch.setattr(index_keywords, "DOCLIST_CAP", 50)
    lines = [f"line {n} about the weather" if n % 3 else f"line {n} nothing much" for n in range(600)]
    lines[5] = "the weather and a lighthouse"  # old, and the only one with its rare word
    await keyword_engram.record_many(Episode(place="qq:group:1", content=t, time=T0) for t in lines)
    vis = visibility(Audience("qq:group:1"))
    kw = keyword_engram.indexes.keywords
    postings: dict[str, np.ndarray] = {}
    found = dict(await kw.search_episodes(keyword_engram.store, query_words("weather"), vis, 1000, postings))
    newest = sorted(found, reverse=True)
    assert len(found) == 51 and len(postings["weather"]) == 51  # the newest 51 of the 400 holding it
    assert min(found) > 400  # all of them late in the chat
    db = sqlite3.connect(db_path)
    true_count = db.execute("SELECT count(*) FROM episodes_fts WHERE episodes_fts MATCH ?",
                            ('"weather\ue0001"',)).fetchone()[0]
    theirs = dict(db.execute("SELECT rowid, -bm25(episodes_fts) FROM episodes_fts WHERE episodes_fts MATCH ?"
                             " ORDER BY rowid DESC LIMIT 51", ('"weather\ue0001"',)).fetchall())
    db.close()
    assert true_count == 400
    assert [found[i] for i in newest] == pytest.approx([theirs[i] for i in newest], rel=0.05)
    both = dict(await kw.search_episodes(keyword_engram.store, query_words("weather lighthouse"), vis, 5))
    assert next(iter(both)) == 6  # the old line: its rare word's postings are whole
