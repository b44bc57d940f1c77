"""The cache of recent keyword doclists (``store/sqlite/postings_cache.py``) never answers stale.

Recall reads each query word's rows through it; after a write, a forget, a new word, or a write
by another connection to the same file (the CLI beside a bot), what it answers must be what the
file holds. The random history at the end compares it with an uncached read after every step.
"""

from __future__ import annotations

import random
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

from astrbot_plugin_engram.memory import Audience, Engram, Episode, Memory, NoEmbedder
from astrbot_plugin_engram.memory.store.sqlite.keywords import KEY_MARK, place_mark, postings
from astrbot_plugin_engram.memory.store.sqlite.postings_cache import STAMP, STAMP_SQL, PostingsCache, safe
from astrbot_plugin_engram.memory.store.sqlite.store import SQLiteStore

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)
A, B = "qq:group:1", "qq:group:2"


def line(text: str, place: str = A, minutes: float = 0) -> Episode:
    return Episode(place=place, content=text, time=T0 + timedelta(minutes=minutes))


async def ids_found(eng: Engram, query: str, place: str = A) -> set[int]:
    """The episodes recall finds by keyword (neighbours of a hit come back too, without a keyword score)."""
    return {h.id for h in await eng.recall(query, Audience(place), k=20)
            if h.kind == "episode" and h.features["kw"] > 0}


async def memories_found(eng: Engram, query: str, place: str = A) -> set[int]:
    return {h.id for h in await eng.recall(query, Audience(place), k=20)
            if h.kind == "memory" and h.features["kw"] > 0}


def cache_of(eng: Engram) -> PostingsCache:
    assert isinstance(eng.store, SQLiteStore)
    return eng.store._postings


async def test_a_line_written_after_its_words_were_cached_is_found(db_path: Path) -> None:
    eng = await Engram.open(db_path, NoEmbedder(), background=False)
    try:
        first = await eng.record(line("the lighthouse keeper waved"))
        assert await ids_found(eng, "lighthouse") == {first}
        assert len(cache_of(eng)) > 0, "recall did not go through the cache"
        held = len(cache_of(eng))
        second = await eng.record(line("a storm hit the lighthouse", minutes=1))
        assert len(cache_of(eng)) == held, "the cache started over after this store's own write"
        assert await ids_found(eng, "lighthouse") == {first, second}
        # a word no line held when it was asked (cached as no rows), then said
        assert await ids_found(eng, "zeppelin") == set()
        third = await eng.record(line("we saw a zeppelin", minutes=2))
        assert await ids_found(eng, "zeppelin") == {third}
        # and in Chinese
        assert await ids_found(eng, "灯塔") == set()
        fourth = await eng.record(line("我们去看了灯塔", minutes=3))
        assert await ids_found(eng, "灯塔") == {fourth}
        assert cache_of(eng).hits > 0
    finally:
        await eng.close()


async def test_a_forgotten_line_never_comes_back_from_the_cache(db_path: Path) -> None:
    eng = await Engram.open(db_path, NoEmbedder(), background=False)
    try:
        keep = await eng.record(line("the lighthouse keeper waved"))
        gone = await eng.record(line("my boat is called lighthouse", minutes=1))
        assert await ids_found(eng, "lighthouse") == {keep, gone}
        await eng.forget_episodes([gone])
        assert await ids_found(eng, "lighthouse") == {keep}
        mid = await eng.add_memory(Memory("Ann keeps a lighthouse", "space:" + A))
        assert mid in await memories_found(eng, "lighthouse")
        await eng.forget([mid])
        assert mid not in await memories_found(eng, "lighthouse")
        assert [x.tolist() for x in await eng.store.memory_postings(["lighthous"])] == [[]]
    finally:
        await eng.close()


async def test_a_memory_rewritten_is_found_by_its_new_words_only(db_path: Path) -> None:
    eng = await Engram.open(db_path, NoEmbedder(), background=False)
    try:
        old = await eng.add_memory(Memory("Ann lives in Paris", "space:" + A))

        assert await memories_found(eng, "Paris") == {old}
        assert await memories_found(eng, "Berlin") == set()
        new = await eng.update(old, "Ann lives in Berlin")
        assert await memories_found(eng, "Paris") == set() and await memories_found(eng, "Berlin") == {new}
    finally:
        await eng.close()


async def test_writes_by_another_connection_to_the_file_are_seen(db_path: Path) -> None:
    bot = await Engram.open(db_path, NoEmbedder(), background=False)
    cli = await Engram.open(db_path, NoEmbedder(), background=False)  # the CLI beside the bot
    try:
        first = await bot.record(line("the lighthouse keeper waved"))
        assert await ids_found(bot, "lighthouse") == {first}
        other = await cli.record(line("the lighthouse is closed", minutes=1))
        assert await ids_found(bot, "lighthouse") == {first, other}
        await cli.forget_episodes([first])
        assert await ids_found(bot, "lighthouse") == {other}
        # the bot writes after the other one did: its cache must not take the other's write as its own
        mine = await bot.record(line("lighthouse tours start Monday", minutes=2))
        assert await ids_found(bot, "lighthouse") == {other, mine}
    finally:
        await cli.close()
        await bot.close()


async def test_words_the_tokenizer_may_read_otherwise_are_never_served_stale(db_path: Path) -> None:
    assert safe("lighthous") and safe("灯塔") and safe("lighthous" + place_mark(12))
    assert not safe("café") and not safe("маяк") and not safe("ﬁsh")
    eng = await Engram.open(db_path, NoEmbedder(), background=False)
    try:
        assert await ids_found(eng, "café маяк") == set()
        a = await eng.record(line("un café près du маяк"))
        assert await ids_found(eng, "café") == {a} and await ids_found(eng, "маяк") == {a}
        assert await ids_found(eng, "lighthouse") == set()
        b = await eng.record(line("lighthouse café", minutes=1))  # a row with an unsure word
        assert await ids_found(eng, "lighthouse") == {b} and await ids_found(eng, "café") == {a, b}
        # U+19B0 is a letter to Python (one word here) but splits a token for FTS5's tokenizer, whose
        # tables are older: the row holds "storm" for the index, though not for the cache's own reading
        assert await ids_found(eng, "storm") == set()
        c = await eng.record(line("lamp\u19b0storm", minutes=2))
        assert await ids_found(eng, "storm") == {c}
    finally:
        await eng.close()


def test_the_cache_keeps_to_its_budget(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / "t.db", isolation_level=None)
    db.execute("CREATE TABLE cursors (name TEXT PRIMARY KEY, value INTEGER NOT NULL)")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(words)")
    words = [f"w{n}" for n in range(400)]
    db.executemany("INSERT INTO t(rowid, words) VALUES (?, ?)",
                   [(i, " ".join(words[j] for j in range(0, 400, 1 + i % 7))) for i in range(1, 300)])
    cache = PostingsCache(budget=20_000)
    for n in range(0, 400, 20):
        asked = [[w] for w in words[n:n + 20]]
        got = cache.read(db, "t", asked, False, postings)
        assert [g.tolist() for g in got] == [g.tolist() for g in postings(db, "t", asked)]
        assert cache.bytes <= cache.budget
    assert 0 < len(cache) < 400
    # rows this store writes join the words held, which grow: still within the budget, and exact
    new = [(i, " ".join(words[j] for j in range(0, 400, 3))) for i in range(300, 600)]
    db.execute("BEGIN")
    db.executemany("INSERT INTO t(rowid, words) VALUES (?, ?)", new)
    db.execute(STAMP_SQL)  # as each transaction of a store does first
    stamp = db.execute("SELECT value FROM cursors WHERE name = ?", (STAMP,)).fetchone()[0]
    db.execute("COMMIT")
    cache.committed(stamp, [("t", i, w) for i, w in new], [])
    assert cache.bytes <= cache.budget and len(cache) > 0
    asked = [[w] for w in words]
    assert [g.tolist() for g in cache.read(db, "t", asked, False, postings)] == \
        [g.tolist() for g in postings(db, "t", asked)]
    assert cache.hits > 0


async def test_cached_postings_equal_a_fresh_read_through_a_random_history(db_path: Path) -> None:
    """Records, memories, new versions, merges and forgets, by this store and by another connection;
    after each, every word's rows (one chat, several, and every chat) equal an uncached read."""
    rng = random.Random(7)
    vocab = ["lighthouse", "keeper", "storm", "灯塔", "下雨", "zeppelin", "bees", "paris", "monday", "2024"]
    places = [f"qq:group:{n}" for n in range(4)]
    bot = await Engram.open(db_path, NoEmbedder(), background=False)
    cli = await Engram.open(db_path, NoEmbedder(), background=False)
    raw = sqlite3.connect(db_path, isolation_level=None)
    episodes: list[int] = []
    memories: list[int] = []
    try:
        for step in range(120):
            who = bot if rng.random() < 0.7 else cli
            op = rng.random()
            text = " ".join(rng.sample(vocab, rng.randint(1, 4)))
            if op < 0.5:
                episodes += await who.record_many(
                    [line(text, rng.choice(places), step) for _ in range(rng.randint(1, 3))])
            elif op < 0.65:
                memories.append(await who.add_memory(Memory(text, "space:" + rng.choice(places))))
            elif op < 0.75 and memories:
                old = rng.choice(memories)
                memories.remove(old)
                memories.append(await who.update(old, text))
            elif op < 0.8 and len(memories) > 1:
                two = rng.sample(memories, 2)
                merged = await who.merge(Memory(text, (await who.get(two[0])).scope), two)
                if merged is not None:
                    memories = [m for m in memories if m not in two] + [merged]
            elif op < 0.9 and episodes:
                gone = rng.sample(episodes, min(len(episodes), rng.randint(1, 3)))
                await who.forget_episodes(gone)
                episodes = [e for e in episodes if e not in gone]
            elif memories:
                gone_m = rng.choice(memories)
                await who.forget([gone_m])
                memories.remove(gone_m)
            store = bot.store
            words = [w for w in vocab if rng.random() < 0.7] or vocab[:1]
            from astrbot_plugin_engram.memory.text.words import query_words
            qw = query_words(" ".join(words))
            keys = [k for k in [await store.place_key(s) for s in places] if k is not None]
            for chosen in ([keys[0]] if keys else [], keys, None):
                got, _ = await store.episode_postings(qw, chosen)
                if chosen is None:
                    want = postings(raw, "episodes_fts", [[w + KEY_MARK] for w in qw], prefix=True)
                else:
                    want = postings(raw, "episodes_fts", [[w + place_mark(k) for k in chosen] for w in qw])
                assert [g.tolist() for g in got] == [x.tolist() for x in want], (step, chosen)
                assert all(g.dtype == np.int64 for g in got)
            got_m = await store.memory_postings(qw)
            want_m = postings(raw, "memories_fts", [[w] for w in qw])
            assert [g.tolist() for g in got_m] == [x.tolist() for x in want_m], step
        assert cache_of(bot).hits > 0
    finally:
        raw.close()
        await cli.close()
        await bot.close()


def test_a_write_landing_between_this_commit_and_its_follow_up_is_not_taken_for_ours(tmp_path: Path) -> None:
    """Another process commits right after this store did, before this store followed its own commit:
    the cache follows this store's commit (the count read inside it), and the next read sees the
    count moved again and starts over instead of missing that row."""
    path = tmp_path / "t.db"
    mine = sqlite3.connect(path, isolation_level=None)
    mine.execute("CREATE TABLE cursors (name TEXT PRIMARY KEY, value INTEGER NOT NULL)")
    mine.execute("CREATE VIRTUAL TABLE t USING fts5(words)")
    mine.execute("INSERT INTO t(rowid, words) VALUES (1, 'lighthouse')")
    other = sqlite3.connect(path, isolation_level=None)
    cache = PostingsCache()
    assert cache.read(mine, "t", [["lighthouse"]], False, postings)[0].tolist() == [1]
    stamps = []
    for db, row in ((mine, 2), (other, 3)):  # each a transaction, as a store writes
        db.execute("BEGIN IMMEDIATE")
        db.execute(STAMP_SQL)
        db.execute("INSERT INTO t(rowid, words) VALUES (?, 'lighthouse')", (row,))
        stamps.append(db.execute("SELECT value FROM cursors WHERE name = ?", (STAMP,)).fetchone()[0])
        db.execute("COMMIT")
    # this store follows its own commit (the count read inside it) only now
    cache.committed(stamps[0], [("t", 2, "lighthouse")], [])
    assert cache.read(mine, "t", [["lighthouse"]], False, postings)[0].tolist() == [1, 2, 3]
    other.close()
    mine.close()
