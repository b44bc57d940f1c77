"""Clocks that jump (NTP at boot, a VM resumed, a far-ahead clock corrected) and calendar words whose
meaning depends on the tense: every test drives the time by hand."""

from __future__ import annotations

from datetime import date, datetime
from zoneinfo import ZoneInfo

import pytest

from astrbot_plugin_engram.memory.clock import day_bounds
from astrbot_plugin_engram.memory.timewindow import query_window

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
