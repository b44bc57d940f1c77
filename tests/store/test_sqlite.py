"""The store on real SQLite files: migrations, reopening, append-only episodes, versions, forgetting."""

from __future__ import annotations

import asyncio
import logging
import random
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from astrbot_plugin_engram.memory import Audience, Engram, Episode, Memory, UnknownIdError
from astrbot_plugin_engram.memory.store import int8_codes, int8_factor, normalise
from astrbot_plugin_engram.memory.store.sqlite.migrations import (
    MIGRATIONS,
    _m003_text_shape,
    _m004_text_shape,
)
from astrbot_plugin_engram.memory.store.sqlite.store import SQLiteStore
from astrbot_plugin_engram.memory.store.sqlite.transactions import Transactions
from astrbot_plugin_engram.memory.text.words import EMPTY_SHAPE, text_shape

from ..conftest import HashEmbedder, hash_vector, stable_id

GROUP = "qq:group:1"
T0 = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)


def rows(path: Path, sql: str, *args: object) -> list[tuple]:
    with sqlite3.connect(path) as db:
        return db.execute(sql, args).fetchall()


async def test_migrations_are_recorded_by_name(engram: Engram, db_path: Path) -> None:
    names = [r[0] for r in rows(db_path, "SELECT name FROM _migrations ORDER BY rowid")]
    assert names == [name for name, _ in MIGRATIONS]
    assert all(n.startswith("m0") for n in names)


async def test_reopening_applies_no_migration_twice(db_path: Path) -> None:
    for _ in range(2):
        e = await Engram.open(db_path, HashEmbedder(), background=False)
        await e.close()
    assert len(rows(db_path, "SELECT name FROM _migrations")) == len(MIGRATIONS)


async def test_reopen_keeps_episodes_memories_versions_and_vectors(db_path: Path) -> None:
    e = await Engram.open(db_path, HashEmbedder(), background=False)
    eid = await e.record(Episode(place=GROUP, content="Alice adopted a cat named Miso",
                                 actor="qq:1", actor_name="Alice", time=T0))
    m1 = await e.add_memory(Memory(text="Alice has a cat", scope=f"space:{GROUP}", sources=(eid,)))
    m2 = await e.update(m1, "Alice has a cat named Miso")
    await e.embed_pending()
    await e.close()

    e = await Engram.open(db_path, HashEmbedder(), background=False)
    try:
        ep = await e.get_episode(eid)
        assert (ep.content, ep.actor_name, ep.time) == ("Alice adopted a cat named Miso", "Alice", T0)
        assert [m.text for m in await e.history(m2)] == ["Alice has a cat", "Alice has a cat named Miso"]
        assert [s.id for s in await e.sources(m2)] == [eid]
        stats = await e.stats()
        assert (stats["episodes"], stats["memories"], stats["superseded"]) == (1, 1, 1)
        assert stats["indexed"] == 2  # the superseded version needs no vector
        assert await e.embed_pending() == 0  # nothing to redo after a restart
        hits = await e.recall("cat Miso", Audience(GROUP))
        assert {h.key for h in hits} == {f"e{eid}", f"m{m2}"}
    finally:
        await e.close()


async def test_episode_time_keeps_its_timezone(engram: Engram) -> None:
    t = datetime(2024, 5, 1, 20, 0, tzinfo=timezone(timedelta(hours=8)))
    eid = await engram.record(Episode(place=GROUP, content="晚上好", time=t))
    got = (await engram.get_episode(eid)).time
    assert got == t and got.utcoffset() == timedelta(hours=8)  # type: ignore[union-attr]


async def test_episodes_are_append_only(engram: Engram, db_path: Path) -> None:
    eid = await engram.record(Episode(place=GROUP, content="what was said"))
    with sqlite3.connect(db_path) as db, pytest.raises(sqlite3.IntegrityError, match="append-only"):
        db.execute("UPDATE episodes SET content = 'rewritten' WHERE id = ?", (eid,))
    assert (await engram.get_episode(eid)).content == "what was said"


async def test_update_makes_a_new_version(engram: Engram) -> None:
    m1 = await engram.add_memory(Memory(text="Bob lives in Paris", scope="public", importance=0.9))
    m2 = await engram.update(m1, "Bob lives in Berlin")
    assert m2 != m1
    old, new = await engram.get(m1), await engram.get(m2)
    assert (old.status, old.text) == ("superseded", "Bob lives in Paris")
    assert (new.status, new.supersedes, new.importance) == ("active", m1, 0.9)
    assert [v.id for v in await engram.history(m1)] == [m1, m2]


async def test_recall_sees_only_the_newest_version(engram: Engram) -> None:
    m1 = await engram.add_memory(Memory(text="Bob lives in Paris", scope="public"))
    m2 = await engram.update(m1, "Bob lives in Berlin")
    await engram.embed_pending()
    hits = await engram.recall("where does Bob live, Paris or Berlin", Audience("anywhere"))
    assert [h.id for h in hits] == [m2]


async def test_updating_an_old_version_is_refused(engram: Engram) -> None:
    m1 = await engram.add_memory(Memory(text="v1", scope="public"))
    await engram.update(m1, "v2")
    with pytest.raises(ValueError, match="superseded"):
        await engram.update(m1, "v3 from a stale id")


async def test_forget_removes_versions_vectors_and_keyword_rows(engram: Engram, db_path: Path) -> None:
    m1 = await engram.add_memory(Memory(text="Carol's password hint is teapot", scope="owner"))
    m2 = await engram.update(m1, "Carol's password hint is kettle")
    keep = await engram.add_memory(Memory(text="Carol likes kettles", scope="owner"))
    await engram.embed_pending()
    assert len((await engram.forget([m1])).memories) == 2
    assert rows(db_path, "SELECT id FROM memories") == [(keep,)]
    assert rows(db_path, "SELECT item FROM vectors WHERE kind = 'm'") == [(keep,)]
    assert rows(db_path, "SELECT rowid FROM memories_fts") == [(keep,)]
    hits = await engram.recall("password hint teapot kettle", Audience.owner_console())
    assert [h.id for h in hits] == [keep]
    for mid in (m1, m2):
        with pytest.raises(UnknownIdError):
            await engram.get(mid)


async def test_forget_keeps_the_episodes(engram: Engram) -> None:
    eid = await engram.record(Episode(place=GROUP, content="I moved to Berlin"))
    mid = await engram.add_memory(Memory(text="moved to Berlin", scope="public", sources=(eid,)))
    await engram.forget([mid])
    assert (await engram.get_episode(eid)).content == "I moved to Berlin"


@pytest.mark.parametrize("call", ["get", "history", "update", "forget", "get_episode", "sources",
                                  "set_scope"])
async def test_unknown_ids_raise_a_clear_error(engram: Engram, call: str) -> None:
    known = await engram.add_memory(Memory(text="a real one", scope="public"))
    args: dict[str, tuple] = {"forget": ([known, 4242],), "update": (4242, "x"),
                              "set_scope": (4242, "public")}
    with pytest.raises(UnknownIdError) as err:
        await getattr(engram, call)(*args.get(call, (4242,)))
    assert "4242" in str(err.value) and str(known) not in str(err.value)
    assert (await engram.get(known)).text == "a real one"  # a failed forget deletes nothing


async def test_a_forgotten_id_is_unknown(engram: Engram) -> None:
    mid = await engram.add_memory(Memory(text="gone soon", scope="public"))
    await engram.forget([mid])
    with pytest.raises(UnknownIdError, match=str(mid)):
        await engram.forget([mid])


async def test_a_renamed_user_stays_one_person(engram: Engram) -> None:
    for i, name in enumerate(["Alice", "Ally", "Alice"]):
        await engram.record(Episode(place=GROUP, content=f"message {i}", actor="qq:1",
                                    actor_name=name, time=T0 + timedelta(minutes=i)))
    await engram.record(Episode(place=GROUP, content="hi", actor="qq:2", actor_name="Bob", time=T0))
    assert await engram.store.aliases("qq:1") == ["Alice", "Ally"]  # most recent first
    assert (await engram.stats())["people"] == 2


async def test_sources_are_kept_in_order(engram: Engram) -> None:
    ids = [await engram.record(Episode(place=GROUP, content=f"turn {i}")) for i in range(3)]
    mid = await engram.add_memory(Memory(text="summary", scope="self", sources=(ids[2], ids[0])))
    assert [e.id for e in await engram.sources(mid)] == [ids[0], ids[2]]


async def test_a_failed_rollback_never_hides_the_first_error(db_path: Path) -> None:
    """A cancel that lands after COMMIT made the rollback fail and replaced the cancel (close hung)."""
    store = await SQLiteStore.open(db_path)
    try:
        with pytest.raises(ValueError, match="first"):
            async with store.transaction():
                await store._writer.execute("COMMIT")  # type: ignore[union-attr]  # the transaction ends early, as when a cancel lands late
                raise ValueError("first")
        async with store.transaction() as tx:
            assert await tx.add_episodes([Episode(place="s", content="still writable")]) == [1]
    finally:
        await store.close()


async def test_a_place_never_gives_two_episodes_the_same_sequence_number(engram: Engram,
                                                                          db_path: Path) -> None:
    await engram.record(Episode(place=GROUP, content="first"))
    with sqlite3.connect(db_path) as db, pytest.raises(sqlite3.IntegrityError, match="UNIQUE"):
        db.execute("INSERT INTO episodes(time, space, seq, section, kind, content) VALUES (0, ?, 1, 1,"
                   " 'message_in', 'a twin')", (GROUP,))


async def test_a_file_with_repeated_sequence_numbers_is_renumbered_once(db_path: Path) -> None:
    engram = await Engram.open(db_path, HashEmbedder(), background=False)
    for text in ("one", "two", "three"):
        await engram.record(Episode(place=GROUP, content=text, time=T0))
    await engram.close()
    with sqlite3.connect(db_path) as db:  # as the file was before m007, with a second writer's twin
        db.execute("DELETE FROM _migrations WHERE name = 'm009_unique_space_seq'")
        db.execute("DROP INDEX episodes_space_seq")
        db.execute("CREATE INDEX episodes_space_seq ON episodes(space, seq)")
        db.execute("DROP TRIGGER episodes_append_only")
        db.execute("UPDATE episodes SET seq = 2 WHERE content = 'three'")
        db.execute("CREATE TRIGGER episodes_append_only BEFORE UPDATE ON episodes"
                   " BEGIN SELECT RAISE(ABORT, 'episodes are append-only'); END")
    engram = await Engram.open(db_path, HashEmbedder(), background=False)
    await engram.record(Episode(place=GROUP, content="four", time=T0))
    await engram.close()
    assert rows(db_path, "SELECT content, seq FROM episodes ORDER BY id") == [
        ("one", 1), ("two", 2), ("three", 3), ("four", 4)]


async def test_names_per_place_are_filled_from_the_episodes_of_an_older_file(db_path: Path) -> None:
    engram = await Engram.open(db_path, HashEmbedder(), background=False)
    await engram.record(Episode(place=GROUP, content="hi", actor="qq:1", actor_name="Ann", time=T0))
    await engram.record(Episode(place="qq:group:2", content="yo", actor="qq:1", actor_name="Annie", time=T0))
    await engram.close()
    with sqlite3.connect(db_path) as db:  # as the file was before m008
        db.execute("DELETE FROM _migrations WHERE name = 'm010_names_per_place'")
        db.execute("DROP TABLE place_names")
    engram = await Engram.open(db_path, HashEmbedder(), background=False)
    assert await engram.store.names_in_place(GROUP, ["qq:1", "qq:2"]) == {"qq:1": "Ann"}
    assert await engram.store.people_named_in("qq:group:2", "annie") == ["qq:1"]
    await engram.close()


def test_m003_and_m004_compute_with_their_own_copies_of_the_text_shape() -> None:
    """Frozen migrations: their copies give today's shapes (when text_shape changes, they must not)."""
    texts = ["hi", "When did we meet?", "see you on Monday", "我们上个月去了杭州", "2023年5月", "ok?",
             " " * 5, "x" * 500, "Mayday", "last week was fun", "下周见？"]
    texts += ["OK, noted!", "好的，记住了", "👍", "thanks, see you Monday"]
    assert [_m004_text_shape(t) for t in texts] == [text_shape(t) for t in texts]
    assert [_m003_text_shape(t) for t in texts] == [text_shape(t) % EMPTY_SHAPE for t in texts]


async def test_a_cancel_that_arrives_after_the_commit_is_no_warning(db_path: Path, monkeypatch,
                                                                   caplog) -> None:
    """A task cancelled while its COMMIT was in the writer's thread (the indexer, stopped by a plugin
    reload) found no transaction to roll back: "rollback failed" was logged as a warning at every
    such reload, though nothing was wrong and the write had landed."""
    from astrbot_plugin_engram.memory.store.sqlite import transactions

    real = transactions._commit

    async def committed_then_cancelled(db, deferred):  # type: ignore[no-untyped-def]
        await real(db, deferred)
        raise asyncio.CancelledError  # as if the cancel came while the thread finished the COMMIT

    store = await SQLiteStore.open(db_path)
    try:
        monkeypatch.setattr(transactions, "_commit", committed_then_cancelled)
        with pytest.raises(asyncio.CancelledError):
            async with store.transaction() as tx:
                await tx.add_episodes([Episode("s", "landed anyway", "qq:1")])
        monkeypatch.setattr(transactions, "_commit", real)
        assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text
        assert [c for (c,) in rows(db_path, "SELECT content FROM episodes")] == ["landed anyway"]
        async with store.transaction() as tx:
            await tx.add_episodes([Episode("s", "and the next write works", "qq:1")])
    finally:
        await store.close()


# ---- the file shrinks after a forget (issue 28) ----------------------------------------------------
async def _fill(e: Engram, place: str, n: int = 1500) -> None:
    await e.record_many([Episode(place=place, content=f"line {i} of {place}: " + f"w{i}x{place[-1]} " * 60,
                                 time=T0 + timedelta(seconds=i)) for i in range(n)])
    await e.store.checkpoint()


def _size(path: Path) -> int:
    return path.stat().st_size


def _pragma(path: Path, name: str) -> int:
    with sqlite3.connect(path) as db:
        return int(db.execute(f"PRAGMA {name}").fetchone()[0])


async def test_a_new_store_gives_back_what_a_forget_frees(db_path: Path) -> None:
    """Nothing ran VACUUM: a store that forgot half of what it held stayed as large for good."""
    e = await Engram.open(db_path, HashEmbedder(), background=False)
    await _fill(e, "qq:group:1")
    await _fill(e, "qq:group:2")
    full = _size(db_path)
    await e.forget_place("qq:group:1")
    assert _size(db_path) < 0.65 * full
    await e.close()
    assert _pragma(db_path, "auto_vacuum") == 2 and _pragma(db_path, "freelist_count") == 0


async def test_an_older_store_is_vacuumed_once_from_the_command_line(
        db_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from astrbot_plugin_engram.memory.cli.main import main

    e = await Engram.open(db_path, HashEmbedder(), background=False)
    await _fill(e, "qq:group:1")
    await _fill(e, "qq:group:2")
    await e.close()
    with sqlite3.connect(db_path) as db:  # as a store made before auto_vacuum was set
        db.execute("PRAGMA auto_vacuum=NONE")
        db.execute("VACUUM")
    assert _pragma(db_path, "auto_vacuum") == 0
    e = await Engram.open(db_path, HashEmbedder(), background=False)
    full = _size(db_path)
    await e.forget_place("qq:group:1")
    await e.close()
    assert _size(db_path) == full and _pragma(db_path, "freelist_count") > 0  # it never shrinks

    assert await asyncio.to_thread(main, ["--db", str(db_path), "--embedder", "none", "vacuum"]) == 0
    assert "MB ->" in capsys.readouterr().out
    assert _size(db_path) < 0.65 * full and _pragma(db_path, "auto_vacuum") == 2
    e = await Engram.open(db_path, HashEmbedder(), background=False)
    assert (await e.counts())["episodes"] == 1500
    await e.close()


class _TwoKinds(HashEmbedder):
    asymmetric = True  # items get a second vector too (``#as-query``), kept compact: no codes


async def test_an_older_store_gets_each_vector_s_codes_under_the_factor_its_index_used(db_path: Path) -> None:
    """m014 fills the int8 codes of a store that kept only float32 vectors: under the factor the index
    worked out at each open until then (from the first 16,384 episode vectors), each episode with its
    place's key, second vectors left out; recall finds the same after it."""
    e = await Engram.open(db_path, _TwoKinds(), background=False)
    await e.record_many([Episode(place=f"qq:group:{i % 3}", content=f"line {i} about cats and {i * 7}",
                                 time=T0 + timedelta(minutes=i)) for i in range(50)])
    await e.add_memory(Memory(text="Alice has a cat", scope=f"space:{GROUP}"))
    await e.embed_pending()
    audience = Audience("qq:group:2")
    before = [(h.key, round(h.score, 6)) for h in await e.recall("cats and 21", audience)]
    await e.close()
    with sqlite3.connect(db_path) as db:  # as the file was before m014
        db.execute("DELETE FROM _migrations WHERE name = 'm014_vector_codes'")
        db.execute("DROP TABLE vector_codes")
        db.execute("DROP TABLE vector_scales")
    e = await Engram.open(db_path, _TwoKinds(), background=False)
    try:
        assert [(h.key, round(h.score, 6)) for h in await e.recall("cats and 21", audience)] == before
    finally:
        await e.close()
    assert rows(db_path, "SELECT DISTINCT model FROM vector_codes") == [("hash-32",)]
    floats = rows(db_path, "SELECT kind, item, vec FROM vectors WHERE model = 'hash-32' ORDER BY kind, item")
    unit = normalise(np.stack([np.frombuffer(v, np.float32) for _, _, v in floats]))
    eps = [k == "e" for k, _, _ in floats]
    factor = int8_factor(unit[eps])
    assert rows(db_path, "SELECT factor FROM vector_scales") == [(factor,)]
    codes = rows(db_path, "SELECT kind, item, place, codes FROM vector_codes ORDER BY kind, item")
    assert [(k, i) for k, i, _, _ in codes] == [(k, i) for k, i, _ in floats]
    assert np.array_equal(np.stack([np.frombuffer(c, np.int8) for *_, c in codes]), int8_codes(unit, factor))
    keys = dict(rows(db_path, "SELECT e.id, s.id FROM episodes e JOIN spaces s ON s.name = e.space"))
    assert [p for k, i, p, _ in codes] == [keys[i] if k == "e" else None for k, i, _, _ in codes]


async def test_an_older_store_merges_its_episode_words_eight_segments_at_a_time(db_path: Path) -> None:
    """m015 widens the episodes' FTS5 merges (4 -> 8 segments a level) on a store made before it; the
    words recorded after it, one small transaction each (a segment each, merged as they pile up), are
    found exactly as before."""
    e = await Engram.open(db_path, HashEmbedder(), background=False)
    await e.record(Episode(place=GROUP, content="first line about cats", time=T0))
    await e.close()
    with sqlite3.connect(db_path) as db:  # as the file was before m015
        db.execute("DELETE FROM _migrations WHERE name = 'm015_episode_keyword_merges'")
        db.execute("DELETE FROM episodes_fts_config WHERE k = 'automerge'")
    e = await Engram.open(db_path, HashEmbedder(), background=False)
    try:
        for i in range(60):
            await e.record(Episode(place=GROUP, content=f"line {i} about {'miso' if i % 3 else 'tofu'}",
                                   time=T0 + timedelta(minutes=i + 1)))
        found = await e.store.episode_postings(["miso", "tofu"], None)
    finally:
        await e.close()
    assert rows(db_path, "SELECT v FROM episodes_fts_config WHERE k = 'automerge'") == [(8,)]
    ids = dict(rows(db_path, "SELECT content, id FROM episodes"))
    assert list(found.lists[0]) == sorted(i for c, i in ids.items() if "miso" in c)
    assert list(found.lists[1]) == sorted(i for c, i in ids.items() if "tofu" in c)


async def test_two_writers_taking_turns_on_one_file_number_each_place_without_a_gap_or_a_clash(
        db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Recording's shortcut (``append_episodes``: one trip to the writer's thread) gives out ids and
    sequence numbers from what this writer wrote last, checked after BEGIN. Another writer on the
    file in between (the command line's, another process's) makes that guess wrong: the batch is then
    written the long way, in a transaction that reads them from the file. Taking turns at random,
    nothing is lost, and each place's numbers run 1, 2, 3... in the order written."""
    taken: list[bool] = []
    real = Transactions.append_episodes

    async def counted(self: Transactions, *args: Any) -> list[int] | None:
        ids = await real(self, *args)
        taken.append(ids is not None)
        return ids

    monkeypatch.setattr(Transactions, "append_episodes", counted)
    one = await Engram.open(db_path, HashEmbedder(), background=False)
    other = await Engram.open(db_path, HashEmbedder(), background=False)
    rng, said = random.Random(7), []
    try:
        for i in range(60):
            writer, place = rng.choice((one, other)), rng.choice(("qq:group:1", "qq:group:2", "qq:group:3"))
            lines = [f"line {i}.{j}" for j in range(rng.randint(1, 3))]
            said += [(place, line) for line in lines]
            await asyncio.gather(*(writer.record(Episode(place=place, content=line, time=T0))
                                   for line in lines))
    finally:
        await one.close()
        await other.close()
    assert True in taken and False in taken  # both ways were taken
    found = rows(db_path, "SELECT space, content, seq FROM episodes ORDER BY id")
    assert [(p, c) for p, c, _ in found] == said
    for place in {p for p, _ in said}:
        assert [s for p, _, s in found if p == place] == list(range(1, 1 + sum(p == place for p, _ in said)))


class _Spread(HashEmbedder):
    """Words hashed, plus a spread of small components: each batch's largest component differs, as
    a real model's do (a hashed short text alone has a few large ones)."""

    name = "spread-128"

    async def embed(self, texts: list[str], kind: str = "passage") -> np.ndarray:
        return np.stack([hash_vector(t, 128) + np.random.default_rng(stable_id(t)).normal(0, 0.05, 128)
                         for t in texts]).astype(np.float32)


async def test_recall_after_a_restart_scores_as_before_it(db_path: Path) -> None:
    """The codes an item was searched by in the session that embedded it are the ones loaded at the
    next open (its factor is the store's, fixed by the first vectors): not re-made on another scale."""
    e = await Engram.open(db_path, _Spread(), background=False)
    for i in range(0, 120, 30):  # four batches: the factor is fixed by the first one's vectors
        await e.record_many([Episode(place=GROUP, content=f"note {j} on {'cats' if j % 2 else 'dogs'}",
                                     time=T0 + timedelta(minutes=j)) for j in range(i, i + 30)])
        await e.embed_pending()
    queries = ["cats 41", "dogs on note 8", "note 99"]
    before = [[(h.key, h.score) for h in await e.recall(q, Audience(GROUP))] for q in queries]
    await e.close()
    e = await Engram.open(db_path, _Spread(), background=False)
    try:
        assert [[(h.key, h.score) for h in await e.recall(q, Audience(GROUP))] for q in queries] == before
    finally:
        await e.close()
