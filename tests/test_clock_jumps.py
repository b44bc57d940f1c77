"""Clocks that jump (NTP at boot, a VM resumed, a far-ahead clock corrected) and calendar words whose
meaning depends on the tense: every test drives the time by hand."""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from astrbot_plugin_engram.memory import Audience, Engram, Memory, MergeSettings, space_scope
from astrbot_plugin_engram.memory.clock import day_bounds
from astrbot_plugin_engram.memory.timewindow import query_window

from .conftest import EngramOpener, HashEmbedder
from .scripted_chat import ScriptedChat

SH = ZoneInfo("Asia/Shanghai")
WEDNESDAY = datetime(2023, 5, 3, 10, 0, tzinfo=SH)
SATURDAY = datetime(2023, 5, 6, 10, 0, tzinfo=SH)
LAST = (day_bounds(date(2023, 4, 29), SH)[0], day_bounds(date(2023, 4, 30), SH)[1])
COMING = (day_bounds(date(2023, 5, 6), SH)[0], day_bounds(date(2023, 5, 7), SH)[1])


@pytest.mark.parametrize("query", ["what did we do at the weekend?", "how was the weekend",
                                   "where did you go this weekend?", "周末我们去哪了", "周末做了什么",
                                   "周末过得怎么样", "who came over the weekend"])
def test_a_question_about_the_past_weekend_asked_on_a_weekday_means_the_last_one(query: str) -> None:
    w = query_window(query, WEDNESDAY, SH)
    assert w is not None and (w.start, w.end) == LAST


@pytest.mark.parametrize("query", ["what are we doing at the weekend?", "plans for the weekend",
                                   "this weekend I will rest", "周末要去哪", "这周末做了什么",
                                   "周末打算干嘛", "the weekend"])
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
HERE = space_scope("qq:group:1")


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
