"""Clocks that jump (NTP at boot, a VM resumed, a far-ahead clock corrected) and calendar words whose
meaning depends on the tense: every test drives the time by hand."""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from astrbot_plugin_engram.memory import SELF, Audience, Engram, Episode, Memory, MergeSettings, place_scope
from astrbot_plugin_engram.memory.chat import OpenAIChat
from astrbot_plugin_engram.memory.clock import JumpWatch, day_bounds
from astrbot_plugin_engram.memory.consolidation import ConsolidationSettings, Consolidator
from astrbot_plugin_engram.memory.recall.timewindow import query_window
from astrbot_plugin_engram.memory.self.diary import write_diary
from astrbot_plugin_engram.memory.strength import strength_now

from .conftest import EngramOpener, HashEmbedder
from .fake_openai import FakeOpenAI
from .scripted_chat import ScriptedChat
from .stored import stored

SH = ZoneInfo("Asia/Shanghai")
WEDNESDAY = datetime(2023, 5, 3, 10, 0, tzinfo=SH)
SATURDAY = datetime(2023, 5, 6, 10, 0, tzinfo=SH)
LAST = (day_bounds(date(2023, 4, 29), SH)[0], day_bounds(date(2023, 4, 30), SH)[1])
COMING = (day_bounds(date(2023, 5, 6), SH)[0], day_bounds(date(2023, 5, 7), SH)[1])


@pytest.mark.parametrize("query", ["what did we do at the weekend?", "how was the weekend",
                                   "where did you go this weekend?", "周末我们去哪了", "周末做了什么",
                                   "周末过得怎么样", "who came over the weekend",
                                   "anything fun this past weekend?", "this past weekend"])
def test_a_question_about_the_past_weekend_asked_on_a_weekday_means_the_last_one(query: str) -> None:
    w = query_window(query, WEDNESDAY, SH)
    assert w is not None and (w.start, w.end) == LAST


@pytest.mark.parametrize("query", ["what are we doing at the weekend?", "plans for the weekend",
                                   "this weekend I will rest", "周末要去哪", "这周末做了什么",
                                   "周末打算干嘛", "the weekend", "what is scheduled for the weekend",
                                   "anyone interested in hiking at the weekend?"])
def test_the_weekend_ahead_or_this_weeks_stays_the_coming_one(query: str) -> None:
    w = query_window(query, WEDNESDAY, SH)
    assert w is not None and (w.start, w.end) == COMING


@pytest.mark.parametrize("query", ["what did we do at the weekend?", "周末做了什么"])
def test_on_a_saturday_the_weekend_is_the_one_going_on(query: str) -> None:
    w = query_window(query, SATURDAY, SH)
    assert w is not None and (w.start, w.end) == COMING


def test_the_weekend_before_last_and_last_weekend_in_chinese_are_not_taken_for_the_bare_word() -> None:
    for query, first in (("上周末做了什么", date(2023, 4, 29)), ("上上周末做了什么", date(2023, 4, 22))):
        w = query_window(query, WEDNESDAY, SH)
        assert w is not None and w.start == day_bounds(first, SH)[0]


# ---- the memory's one clock --------------------------------------------------------------------
class Clock:
    """The time by hand (aware)."""

    def __init__(self, now: datetime):
        self.now = now

    def __call__(self) -> datetime:
        return self.now


AHEAD = datetime(2031, 6, 1, 12, tzinfo=timezone.utc)
HERE = place_scope("qq:group:1")


async def test_a_new_version_and_a_merge_are_dated_by_the_memorys_clock(open_engram: EngramOpener) -> None:
    engram = await open_engram()
    engram.clock = Clock(AHEAD)
    mid = await engram.add_memory(Memory(text="Dana lives in Oslo", scope=HERE, created_at=AHEAD))
    new = await engram.update(mid, "Dana lives in Bergen")
    assert (await engram.get(new)).created_at == AHEAD and (await engram.get(new)).valid_from == AHEAD
    ids = [await engram.add_memory(Memory(text=t, scope=HERE, sources=(n + 1,), created_at=AHEAD))
           for n, t in enumerate(["Dana's sister Mia lives in Oslo",
                                  "Dana's sister Mia lives in Oslo and works at 3 hospitals"])]
    await engram.embed_pending()
    same = json.dumps({"same": True, "text": "Dana's sister Mia lives in Oslo and works at 3 hospitals"})
    assert (await engram.merge_duplicates(ScriptedChat(same), MergeSettings(similarity=0.5))).merged == 1
    merged = [m for m in (await engram.list_memories(limit=10))[0] if m.id not in (*ids, new)]
    assert [m.created_at for m in merged] == [AHEAD]


async def test_fading_recall_and_touches_read_the_memorys_clock(db_path: Path) -> None:
    engram = await Engram.open(db_path, HashEmbedder(), background=False, clock=Clock(AHEAD))
    mid = await engram.add_memory(Memory(text="Dana once mentioned a red umbrella", scope=HERE,
                                         created_at=AHEAD - timedelta(days=200)))
    await engram.embed_pending()
    engram.touch([mid])
    await engram.toucher.flush()
    assert (await engram.get(mid)).last_recalled == AHEAD
    engram.clock = Clock(AHEAD + timedelta(days=200))
    hits = await engram.recall("red umbrella", Audience("qq:group:1"), k=3)
    assert hits and hits[0].features["strength"] < 0.05  # 200 days unrecalled by the memory's clock
    try:
        assert (await engram.fade()).archived == 1
    finally:
        await engram.close()


# ---- fading across a jump ----------------------------------------------------------------------
RIGHT = datetime(2026, 6, 1, 12, tzinfo=timezone.utc)  # the clock once set right
BOOT = datetime(1970, 1, 1, 0, 5, tzinfo=timezone.utc)  # a machine before NTP


async def test_a_memory_made_while_the_clock_was_far_ahead_fades_from_when_it_was_set_back(
        engram: Engram, caplog: pytest.LogCaptureFixture) -> None:
    mid = await engram.add_memory(Memory(text="Dana once mentioned a red umbrella", scope=HERE,
                                         created_at=AHEAD))  # made with the clock five years ahead
    with caplog.at_level(logging.WARNING, "engram.metabolism"):
        report = await engram.fade(RIGHT)
    assert (await engram.fade(RIGHT + timedelta(days=90))).archived == 0
    assert (await engram.fade(RIGHT + timedelta(days=101))).archived == 1  # ~100 days unrecalled, as any
    assert (await engram.get(mid)).created_at == RIGHT  # "made 3 days ago", not "just now" for five years
    assert report.redated == 1
    assert "dated by a wrong clock" in caplog.text and "2031-06-01" in caplog.text


async def test_a_memory_made_while_the_clock_read_1970_is_not_archived_when_it_is_set(engram: Engram) -> None:
    mid = await engram.add_memory(Memory(text="Dana's cat is called Mochi", scope=HERE, created_at=BOOT))
    report = await engram.fade(RIGHT)
    assert (await engram.get(mid)).status == "active" and (await engram.get(mid)).created_at == RIGHT
    assert (await engram.fade(RIGHT + timedelta(days=60))).archived == 0
    assert (report.archived, report.redated) == (0, 1)


async def test_a_clock_reading_1970_fades_nothing_and_says_so(engram: Engram,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    made = RIGHT - timedelta(days=400)  # long unrecalled: the next right fade archives it
    mid = await engram.add_memory(Memory(text="Dana mentioned a red umbrella", scope=HERE, created_at=made))
    with caplog.at_level(logging.WARNING, "engram.metabolism"):
        report = await engram.fade(BOOT)
    assert "too early to be right" in caplog.text
    assert (await engram.get(mid)).created_at == made  # not redated to 1970
    assert (report.checked, report.archived) == (0, 0)


async def test_recalling_after_the_clock_was_set_back_does_not_date_the_recall_ahead(engram: Engram) -> None:
    mid = await engram.add_memory(Memory(text="Dana plays the cello", scope=HERE, created_at=AHEAD))
    engram.toucher.touch([mid], at=RIGHT.timestamp())
    await engram.toucher.flush()
    assert (await engram.get(mid)).last_recalled == RIGHT


async def test_a_recall_dated_far_ahead_is_redated_too(engram: Engram) -> None:
    made = RIGHT - timedelta(days=10)
    mid = await engram.add_memory(Memory(text="Dana plays the cello", scope=HERE, created_at=made))
    engram.toucher.touch([mid], at=AHEAD.timestamp())  # recalled while the clock was ahead
    await engram.toucher.flush()
    await engram.fade(RIGHT)
    m = await engram.get(mid)
    assert (m.created_at, m.last_recalled) == (made, RIGHT)  # its making was dated right: kept


# ---- seeing a jump -----------------------------------------------------------------------------
class Steady:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


@pytest.mark.parametrize("wall, way", [(timedelta(days=-3), "back by 3 days"),
                                       (timedelta(days=400), "forward by 400 days")])
def test_a_jump_of_the_clock_is_logged_once(wall: timedelta, way: str,
                                            caplog: pytest.LogCaptureFixture) -> None:
    steady = Steady()
    watch = JumpWatch(steady)
    with caplog.at_level(logging.WARNING, "engram.clock"):
        watch.seen(RIGHT)
        steady.t += 30
        watch.seen(RIGHT + timedelta(seconds=31))  # a second of drift: no jump
        assert caplog.text == ""
        steady.t += 10
        watch.seen(RIGHT + timedelta(seconds=41) + wall)
        steady.t += 10
        watch.seen(RIGHT + timedelta(seconds=51) + wall)
    assert caplog.text.count("the clock jumped") == 1 and way in caplog.text


def test_a_jump_to_1970_says_nothing_fades_until_the_clock_is_set(caplog: pytest.LogCaptureFixture) -> None:
    steady = Steady()
    watch = JumpWatch(steady)
    with caplog.at_level(logging.WARNING, "engram.clock"):
        watch.seen(RIGHT)
        watch.seen(BOOT)
    assert "jumped back" in caplog.text and "nothing fades until the clock is set" in caplog.text


async def test_the_memorys_own_clock_logs_a_jump(db_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                caplog: pytest.LogCaptureFixture) -> None:
    from astrbot_plugin_engram.memory import clock

    readings = iter([RIGHT, RIGHT - timedelta(days=3)])
    monkeypatch.setattr(clock, "now_utc", lambda: next(readings))
    engram = await Engram.open(db_path, HashEmbedder(), background=False)
    try:
        with caplog.at_level(logging.WARNING, "engram.clock"):
            assert [engram.clock(), engram.clock()] == [RIGHT, RIGHT - timedelta(days=3)]
    finally:
        await engram.close()
    assert "the clock jumped back by 3 days" in caplog.text


async def test_consolidation_dates_its_memories_by_the_memorys_clock(engram: Engram,
                                                                    fake_openai: FakeOpenAI) -> None:
    engram.clock = Clock(AHEAD)
    [one] = await engram.record_many([Episode(place="qq:group:1", content="I adopted a kitten called Miso",
                                              actor="qq:7", actor_name="Alice", time=AHEAD)])
    fake_openai.replies.append(json.dumps({"actions": [
        {"op": "add", "text": "Alice adopted a kitten called Miso", "kind": "fact", "about": ["qq:7"],
         "importance": 0.6, "scope": None, "sources": [f"e{one}"], "when": None}]}))
    con = Consolidator(engram, OpenAIChat("m", fake_openai.base_url),
                       ConsolidationSettings(backoff_seconds=0.0, timeout=5.0))
    assert (await con.run(force=True)).added == 1
    [m] = (await engram.list_memories(limit=5))[0]
    assert m.created_at == AHEAD  # not the machine's time: the one clock the memory reads


UMBRELLA = "Dana once mentioned a red umbrella"


async def test_a_clock_set_years_ahead_does_not_archive_everything(engram: Engram,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    mid = await engram.add_memory(Memory(text=UMBRELLA, scope=HERE, created_at=RIGHT))
    await engram.record(Episode(place="qq:group:1", content="hi", actor="qq:7",
                                time=RIGHT + timedelta(days=1)))
    with caplog.at_level(logging.WARNING, "engram.metabolism"):
        report = await engram.fade(AHEAD)  # five years ahead; the platform's clock says a day later
    assert (await engram.get(mid)).status == "active" and report.archived == 0
    assert "after the last message came in" in caplog.text
    # once it hears again, as far on, it fades as before
    await engram.record(Episode(place="qq:group:1", content="back", actor="qq:7", time=AHEAD))
    assert (await engram.fade(AHEAD)).archived == 1


async def test_with_messages_coming_in_fading_is_as_before(engram: Engram) -> None:
    mid = await engram.add_memory(Memory(text=UMBRELLA, scope=HERE, created_at=RIGHT))
    for day in range(0, 110, 10):
        await engram.record(Episode(place="qq:group:1", content=f"day {day}", actor="qq:7",
                                    time=RIGHT + timedelta(days=day)))
    await engram.record(Episode(place="qq:group:1", content="ok", actor=SELF, kind="message_out",
                                time=AHEAD))  # the bot's own line, dated by a wrong clock: not heard
    assert (await engram.fade(RIGHT + timedelta(days=90))).archived == 0
    assert (await engram.fade(RIGHT + timedelta(days=101))).archived == 1
    assert (await engram.get(mid)).status == "archived"


async def test_a_rewritten_diary_is_dated_by_the_time_it_was_given(engram: Engram, tmp_path: Path) -> None:
    day = date(2026, 5, 30)
    await engram.record(Episode(place="qq:group:1", content="anyone up for hiking?", actor="qq:1",
                                time=datetime(2026, 5, 30, 10, tzinfo=SH)))
    later = datetime(2026, 6, 2, 9, tzinfo=timezone.utc)
    first = await write_diary(engram, ScriptedChat(json.dumps({"entry": "one"})), day, tz=SH,
                              folder=tmp_path, now=RIGHT)
    second = await write_diary(engram, ScriptedChat(json.dumps({"entry": "two"})), day, tz=SH,
                               folder=tmp_path, now=later, force=True)
    assert (await stored(engram, first.memory_id)).created_at == RIGHT
    assert (await stored(engram, second.memory_id)).created_at == later  # not the machine's time


async def test_recalling_a_memory_made_at_1970_does_not_count_56_years_of_fading(engram: Engram) -> None:
    mid = await engram.add_memory(Memory(text="Dana's cat is called Mochi", scope=HERE, created_at=BOOT))
    engram.toucher.touch([mid], at=RIGHT.timestamp())
    await engram.toucher.flush()
    m = await engram.get(mid)
    assert (m.strength, m.last_recalled) == (1.0, RIGHT)  # was 0.5: faded to nothing, then +0.5


def test_the_strength_shown_of_a_memory_made_at_1970_is_not_56_years_faded() -> None:
    m = Memory(text="Dana's cat is called Mochi", scope=HERE, created_at=BOOT, strength=0.8)
    assert strength_now(m, 30.0, RIGHT) == pytest.approx(0.8)
    assert strength_now(replace(m, created_at=RIGHT), 30.0, RIGHT + timedelta(days=30)) == pytest.approx(0.4)


async def test_in_a_bot_no_one_talks_to_a_memory_added_today_is_not_misdated(engram: Engram) -> None:
    await engram.record(Episode(place="qq:group:1", content="hi", actor="qq:7", time=RIGHT))
    today = RIGHT + timedelta(days=60)  # no one wrote since; the owner added a memory by hand today
    mid = await engram.add_memory(Memory(text="Dana moved to Bergen", scope=HERE, created_at=today))
    report = await engram.fade(today + timedelta(hours=1))
    assert (await engram.get(mid)).created_at == today and report.redated == 0
