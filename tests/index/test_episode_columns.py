"""Episodes' facts in memory (time, place, text shape, speaker, image): what recall reads instead of rows."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import aiosqlite
import numpy as np
import pytest

from astrbot_plugin_engram.memory import Audience, Engram, Episode, NoEmbedder
from astrbot_plugin_engram.memory.index.episode_columns import EpisodeColumns
from astrbot_plugin_engram.memory.store import EpisodeColumnRow
from astrbot_plugin_engram.memory.store.sqlite.keywords import keyed_words
from astrbot_plugin_engram.memory.store.sqlite.migrations import (
    m001_core_tables,
    m002_keyword_index_per_space,
)
from astrbot_plugin_engram.memory.text.words import prepare_episode, text_shape

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)
TZ8 = timezone(timedelta(hours=8))


def conversation() -> list[Episode]:
    """Two chats, a long silence (a new section), an explicit break, images, two speakers, two zones."""
    out = []
    for n, text in enumerate(["Where did you go in May?", "我们去了杭州，五月的西湖很美", "ok",
                              "Did you see the photo?", "[image]", "Yes! Lovely 2023 trip."]):
        t = T0 + timedelta(minutes=n) + (timedelta(hours=5) if n >= 3 else timedelta())  # silence
        out.append(Episode(place="qq:group:1", content=text, time=t.astimezone(TZ8) if n % 2 else t,
                           actor=f"qq:{n % 2}", actor_name=("Ann", "小明")[n % 2],
                           kind="image" if text == "[image]" else "message_in"))
    out.append(Episode(place="qq:private:9", content="see attached", time=T0, meta={"image": "a.png"}))
    out.append(Episode(place="qq:group:1", content="after a break", time=T0 + timedelta(hours=5, minutes=9),
                       meta={"section_break": True}))
    return out


def columns(f: EpisodeColumns) -> dict[str, list[Any]]:
    known = np.flatnonzero(f.place >= 0)
    cols = {c: getattr(f, c)[known].tolist() for c in ("time", "tz", "seq", "section", "shape", "image")}
    cols["space"] = [f.places[int(k)] for k in f.place[known]]
    cols["name"] = [f.names[int(n)] for n in f.name[known]]
    cols["ids"] = known.tolist()
    return cols


async def test_the_facts_kept_in_step_equal_those_read_at_open(db_path: Path) -> None:
    e = await Engram.open(db_path, NoEmbedder(), background=False)
    eps = conversation()
    ids = await e.record_many(eps[:4]) + [await e.record(ep) for ep in eps[4:]]
    kept = e.indexes.episodes
    await e.close()
    e = await Engram.open(db_path, NoEmbedder(), background=False)
    try:
        read = e.indexes.episodes
        assert columns(kept) == columns(read) and columns(read)["ids"] == ids
        got = columns(read)
        assert got["shape"] == [text_shape(ep.content) for ep in eps]
        assert got["image"] == [False, False, False, False, True, False, True, False]
        assert got["name"] == ["Ann", "小明", "Ann", "小明", "Ann", "小明", "", ""]
        assert got["tz"] == [0, 480, 0, 480, 0, 480, 0, 0]
        assert got["section"] == [0, 0, 0, 1, 1, 1, 0, 2]  # a silence, then an explicit break
        for seed in ids:  # neighbours: the same as the file says, for every episode
            assert kept.near([seed], 2) == read.near([seed], 2) == await file_neighbours(db_path, seed, 2)
    finally:
        await e.close()


async def file_neighbours(path: Path, seed: int, radius: int) -> list[int]:
    with sqlite3.connect(path) as db:
        return [r[0] for r in db.execute(
            "SELECT e.id FROM episodes p JOIN episodes e ON e.space = p.space AND e.section = p.section"
            " AND e.seq BETWEEN p.seq - ? AND p.seq + ? WHERE p.id = ? ORDER BY e.seq",
            (radius, radius, seed))]


async def test_a_store_from_before_text_shapes_gets_them_and_stays_append_only(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    eps = conversation()
    async with aiosqlite.connect(path, isolation_level=None) as db:  # a store as migration 2 left it
        await db.execute("CREATE TABLE _migrations (name TEXT PRIMARY KEY, applied_at REAL)")
        for fn in (m001_core_tables, m002_keyword_index_per_space):
            await fn(db)
            await db.execute("INSERT INTO _migrations VALUES (?, 0)", (fn.__name__,))
        await db.execute("INSERT INTO spaces(name) VALUES ('qq:group:1'), ('qq:private:9')")
        for i, ep in enumerate(eps[:6], 1):
            t = ep.time or T0
            await db.execute("INSERT INTO episodes VALUES (?,?,0,?,?,?,'','',?,?,?,'{}')",
                             (i, t.timestamp(), ep.place, i, 1, ep.actor_name, ep.kind, ep.content))
            await db.execute("INSERT INTO episodes_fts(rowid, words) VALUES (?, ?)",
                             (i, keyed_words(prepare_episode(ep)[0], 1)))
    e = await Engram.open(path, NoEmbedder(), background=False)
    try:
        assert columns(e.indexes.episodes)["shape"] == [text_shape(ep.content) for ep in eps[:6]]
        found = {h.id: h.features for h in await e.recall("photo trip", Audience("qq:group:1"), k=6)}
        assert found[4]["question_turn"] == 1.0 and found[6]["question_turn"] == 0.0  # from the shapes
        assert found[6]["has_date"] == 1.0 and found[4]["has_date"] == 0.0 and found[4]["length"] > 0
        new = await e.record(Episode(place="qq:group:1", content="a new line?", time=T0))
        assert columns(e.indexes.episodes)["shape"][-1] == text_shape("a new line?")
    finally:
        await e.close()
    with sqlite3.connect(path) as db:
        shape = db.execute("SELECT shape FROM episodes WHERE id = ?", (new,)).fetchone()[0]
        assert shape == text_shape("a new line?")
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            db.execute("UPDATE episodes SET shape = 0 WHERE id = 1")


async def test_episodes_another_process_wrote_come_with_their_neighbours(db_path: Path) -> None:
    bot = await Engram.open(db_path, NoEmbedder(), background=False)
    cli = await Engram.open(db_path, NoEmbedder(), background=False)  # e.g. the CLI, beside the bot
    try:
        await bot.record(Episode(place="qq:group:1", content="good morning", time=T0))
        lines = ["shall we bake?", "the bakery on Elm", "at seven"]
        ids = await cli.record_many(Episode(place="qq:group:2", content=t, time=T0 + timedelta(minutes=n))
                                    for n, t in enumerate(lines))
        hits = {h.id: h for h in await bot.recall("bakery", Audience("qq:group:2"), k=5)}
        assert set(hits) == set(ids)  # the match, and the lines either side of it
        assert hits[ids[0]].features["nb_next"] == hits[ids[2]].features["nb_prev"] == 1.0
        texts = [h.item.content for h in hits.values()]  # type: ignore[union-attr]
        assert texts[0] == "the bakery on Elm" and sorted(texts) == sorted(lines)
        assert await bot.recall("bakery", Audience("qq:group:1"), k=5) == []  # and only where it belongs
    finally:
        await cli.close()
        await bot.close()


async def test_a_place_added_between_two_reads_is_looked_up_again() -> None:
    # Another process may add a chat and its first message between the read of the spaces and
    # the read of the episodes: the message is kept, under its chat.
    places: list[dict[int, str]] = [{1: "qq:group:1"}, {1: "qq:group:1", 2: "qq:group:2"}]
    ann = EpisodeColumnRow(1, 0.0, 0, "qq:group:1", 1, 0, 4, "Ann", False, False)
    bob = EpisodeColumnRow(2, 1.0, 0, "qq:group:2", 1, 0, 4, "Bob", False, False)
    rows: list[list[EpisodeColumnRow]] = [[ann, bob], []]

    class Reads:
        """The reads ``load`` makes of a store, answered in turn."""

        async def last_episode_id(self) -> int:
            return 2

        async def keyed_places(self) -> dict[int, str]:
            return places.pop(0)

        async def episode_columns(self, after: int, limit: int) -> list[EpisodeColumnRow]:
            return rows.pop(0)

    facts = EpisodeColumns()
    await facts.load(Reads())  # type: ignore[arg-type]
    assert facts.seen == 2
    assert [facts.places[int(k)] for k in facts.place[1:3]] == ["qq:group:1", "qq:group:2"]
    assert facts.near([2], 2) == [2]
