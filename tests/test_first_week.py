"""A new user's first week: facts told once, the bot's "OK, noted"s, emoji; asked a week later."""

from __future__ import annotations

import importlib.util
import sqlite3
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import aiosqlite

from astrbot_plugin_engram.memory import SELF, Audience, Engram, Episode, NoEmbedder
from astrbot_plugin_engram.memory.store.sqlite.migrations import APPEND_ONLY, MIGRATIONS
from astrbot_plugin_engram.memory.text.words import EMPTY_SHAPE, no_content, text_shape, words

from .conftest import EngramOpener, HashEmbedder

ROOT = Path(__file__).resolve().parents[1]
SPACE = "webchat:private:sam"
T0 = datetime(2026, 11, 2, 9, tzinfo=timezone.utc)


def firstweek():  # type: ignore[no-untyped-def]
    """bench/firstweek.py, the labelled set's runner."""
    spec = importlib.util.spec_from_file_location("firstweek", ROOT / "bench" / "firstweek.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["firstweek"] = module
    spec.loader.exec_module(module)
    return module


def test_acknowledgements_and_emoji_have_no_content_of_their_own() -> None:
    for line in ("OK, noted!", "Got it, I'll remember.", "👍", "ok", "lol", "Good morning! ☀️",
                 "好的，记住了！", "收到，我会记住的。", "嗯嗯", "👌", "哈哈",
                 "早上好！😊", "在的！怎么了？"):
        assert no_content(words(line)), line
        assert text_shape(line) & EMPTY_SHAPE, line
    for line in ("My cat is called Mochi.", "I'm allergic to peanuts", "我对海鲜过敏。",
                 "好的，到时候提醒你买花", "OK, noted: Shanghai on the 12th",
                 "Great goal! I'll cheer you on."):
        assert not no_content(words(line)), line
        assert not text_shape(line) & EMPTY_SHAPE, line


async def tell(e: Engram, lines: list[tuple[str, str]], start: datetime = T0) -> list[int]:
    """Record (who, text) turns a minute apart; who is 'user' or 'bot'."""
    eps = [Episode(place=SPACE, content=text, time=start + timedelta(minutes=i),
                   actor=SELF if who == "bot" else "webchat:sam", actor_name="" if who == "bot" else "Sam",
                   kind="message_out" if who == "bot" else "message_in")
           for i, (who, text) in enumerate(lines)]
    return await e.record_many(eps)


WEEK = [("user", "My cat is called Mochi."), ("bot", "OK, noted!"),
        ("user", "I'm going to Shanghai on the 12th."), ("bot", "OK, noted."),
        ("user", "ok"), ("bot", "👍"), ("user", "I'm so tired today"), ("bot", "OK, noted! Good night 🌙"),
        ("user", "morning"), ("bot", "Good morning! 😊")]


async def test_the_bots_acknowledgements_do_not_crowd_out_the_facts(db_path: Path) -> None:
    e = await Engram.open(db_path, HashEmbedder(), background=False)
    try:
        ids = await tell(e, WEEK)
        await e.embed_pending()
        hits = await e.recall("what's my cat's name, and when am I going to Shanghai?", Audience(SPACE),
                              k=3, now=T0 + timedelta(days=1))
        assert {ids[0], ids[2]} <= {h.id for h in hits}
        acks = {ids[i] for i in (1, 3, 5, 7, 9)}
        assert not acks & {h.id for h in hits}
    finally:
        await e.close()


async def test_a_bot_line_that_holds_the_answer_still_comes_first(db_path: Path) -> None:
    e = await Engram.open(db_path, HashEmbedder(), background=False)
    try:
        ids = await tell(e, [("user", "Can you recommend a book for the flight?"),
                             ("bot", "I'd recommend Project Hail Mary by Andy Weir, a sci-fi story."),
                             ("user", "nice"), ("bot", "Enjoy!")])
        await e.embed_pending()
        hits = await e.recall("that sci-fi story by Andy Weir", Audience(SPACE), k=2)
        assert hits[0].id == ids[1] and hits[0].features["own"] == 1.0
    finally:
        await e.close()


async def test_an_empty_line_borrows_nothing_from_the_fact_it_answers(keyword_engram: Engram) -> None:
    ids = await tell(keyword_engram, [("user", "My sister Lena is visiting next weekend."), ("user", "ok")])
    hits = {h.id: h for h in await keyword_engram.recall("Lena visiting", Audience(SPACE), k=5)}
    assert hits[ids[1]].features["empty"] == 1.0
    assert hits[ids[1]].features["nb_prev"] == hits[ids[1]].features["wcov"] == 0.0
    assert hits[ids[0]].score > hits[ids[1]].score + 3


async def test_first_week_set_recall_and_few_bot_lines_on_top(db_path: Path) -> None:
    fw = firstweek()
    e = await Engram.open(db_path, HashEmbedder(), background=False)
    try:
        answers = await fw.run(e, fw.load())
    finally:
        await e.close()
    assert len(answers) == 27 and {a.lang for a in answers} == {"en", "zh"}
    r5 = sum(a.recall(5) for a in answers) / len(answers)
    noise = sum(a.bot_noise(3) for a in answers) / len(answers)
    # with this deterministic hash embedder: R@5 .981, bot@3 .062 (before the fix: .926 and .358);
    # bench/firstweek.py gives the bundled model's numbers (bench/RESULTS.md)
    assert r5 >= 0.95 and noise <= 0.1, (r5, noise)
    assert "| all | 27 |" in fw.table(answers)


async def test_a_store_from_before_empty_lines_gets_them_marked(db_path: Path,
                                                                 open_engram: EngramOpener) -> None:
    e = await open_engram(NoEmbedder())
    ids = await tell(e, [("user", "My cat is called Mochi."), ("bot", "OK, noted!")])
    await e.close()
    with sqlite3.connect(db_path) as db:  # as the store was before m004: no empty bit
        db.execute("DROP TRIGGER episodes_append_only")
        db.execute("UPDATE episodes SET shape = shape % ?", (EMPTY_SHAPE,))
        db.execute(APPEND_ONLY)
        db.execute("DELETE FROM _migrations WHERE name = 'm004_empty_lines'")
    e = await Engram.open(db_path, NoEmbedder(), background=False)
    try:
        hits = {h.id: h for h in await e.recall("cat Mochi", Audience(SPACE), k=5)}
        assert hits[ids[1]].features["empty"] == 1.0 and hits[ids[0]].features["empty"] == 0.0
    finally:
        await e.close()
    async with aiosqlite.connect(db_path) as db:
        names = [r[0] for r in await db.execute_fetchall("SELECT name FROM _migrations")]
        # m004 applied again (its record was deleted), every other migration kept
        assert names.count("m004_empty_lines") == 1 and len(names) == len(MIGRATIONS)
        shapes = [r[0] for r in await db.execute_fetchall("SELECT shape FROM episodes ORDER BY id")]
        assert shapes == [text_shape("My cat is called Mochi."), text_shape("OK, noted!")]
