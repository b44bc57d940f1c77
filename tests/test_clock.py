"""The bot's sense of time: zones, days ending at the boundary hour, parts of the day, ages, windows."""

from __future__ import annotations

import logging
from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from astrbot_plugin_engram.memory.clock import (
    day_bounds,
    day_of,
    finished_days,
    host_timezone,
    part_of_day,
    resolve_timezone,
)
from astrbot_plugin_engram.memory.recall.timewindow import query_window, zh_number
from astrbot_plugin_engram.memory.wording import ago

SH = ZoneInfo("Asia/Shanghai")
NY = ZoneInfo("America/New_York")


def test_a_late_night_belongs_to_the_day_before_until_the_boundary_hour() -> None:
    assert day_of(datetime(2026, 11, 30, 23, 59, tzinfo=SH), SH) == date(2026, 11, 30)
    assert day_of(datetime(2026, 12, 1, 0, 1, tzinfo=SH), SH) == date(2026, 11, 30)  # past midnight
    assert day_of(datetime(2026, 12, 1, 3, 59, tzinfo=SH), SH) == date(2026, 11, 30)
    assert day_of(datetime(2026, 12, 1, 4, 0, tzinfo=SH), SH) == date(2026, 12, 1)
    assert day_of(datetime(2026, 12, 1, 1, 0, tzinfo=SH), SH, boundary_hour=0) == date(2026, 12, 1)


def test_the_day_is_counted_in_the_configured_zone() -> None:
    t = datetime(2026, 12, 1, 2, 0, tzinfo=timezone.utc)  # 10:00 in Shanghai, 21:00 the day before in NY
    assert day_of(t, SH) == date(2026, 12, 1)
    assert day_of(t, NY) == date(2026, 11, 30)
    start, end = day_bounds(date(2026, 11, 30), SH)
    assert start == datetime(2026, 11, 29, 20, 0, tzinfo=timezone.utc)
    assert end - start == timedelta(days=1)


def test_a_day_across_a_daylight_saving_change_is_23_hours_long() -> None:
    start, end = day_bounds(date(2026, 3, 7), NY)  # clocks go forward at 2 am on the 8th, before 4 am
    assert end - start == timedelta(hours=23)


def test_finished_days_are_the_last_seven_before_today() -> None:
    now = datetime(2026, 12, 1, 3, 0, tzinfo=SH)  # still Nov 30 in the bot's life
    days = finished_days(now, SH)
    assert days[-1] == date(2026, 11, 29) and days[0] == date(2026, 11, 23) and len(days) == 7


def test_part_of_day_in_words() -> None:
    assert part_of_day(datetime(2026, 12, 1, 2, 0, tzinfo=SH), SH) == "late at night"
    assert part_of_day(datetime(2026, 12, 1, 9, 30, tzinfo=SH), SH) == "morning"
    assert part_of_day(datetime(2026, 12, 1, 19, 0, tzinfo=SH), SH) == "evening"
    # the same instant is morning in Shanghai and evening in New York
    t = datetime(2026, 12, 1, 1, 0, tzinfo=timezone.utc)
    assert (part_of_day(t, SH), part_of_day(t, NY)) == ("morning", "evening")


def test_a_clock_that_jumps_backward_gives_no_negative_age() -> None:
    now = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)
    assert ago(now + timedelta(hours=3), now) == "just now"
    assert ago(now - timedelta(days=2, hours=1), now) == "2 days ago"


def test_no_or_an_unknown_timezone_is_the_hosts_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, "engram.clock"):
        assert resolve_timezone("") == host_timezone()
        assert resolve_timezone("Mars/Olympus") == host_timezone()
        assert resolve_timezone(42) == host_timezone()
    assert "Mars/Olympus" in caplog.text and "no timezone configured" in caplog.text
    assert resolve_timezone(" Asia/Shanghai ") == SH


def test_chinese_numbers() -> None:
    assert [zh_number(x) for x in ("三", "十", "十二", "二十", "二十三", "两", "7", "百")] == \
        [3, 10, 12, 20, 23, 2, 7, None]


NOW = datetime(2023, 5, 3, 10, 0, tzinfo=SH)  # a Wednesday


@pytest.mark.parametrize("query, first, last", [
    ("what did we do yesterday?", "2023-05-02", "2023-05-02"),
    ("昨天我们聊了什么", "2023-05-02", "2023-05-02"),
    ("last weekend", "2023-04-29", "2023-04-30"),
    ("上周末去哪儿了", "2023-04-29", "2023-04-30"),
    ("three days ago", "2023-04-30", "2023-04-30"),
    ("三天前", "2023-04-30", "2023-04-30"),
    ("3天前说的", "2023-04-30", "2023-04-30"),
    ("in March", "2023-03-01", "2023-03-31"),
    ("三月份", "2023-03-01", "2023-03-31"),
    ("in June", "2022-06-01", "2022-06-30"),  # a month not come yet this year: last year's
    ("the day before yesterday", "2023-05-01", "2023-05-01"),
    ("前天", "2023-05-01", "2023-05-01"),
    ("last week", "2023-04-24", "2023-04-30"),
    ("上周三", "2023-04-26", "2023-04-26"),
    ("last Monday", "2023-05-01", "2023-05-01"),
    ("5月1日那天", "2023-05-01", "2023-05-01"),
    ("上个月", "2023-04-01", "2023-04-30"),
])
def test_windows_named_in_queries(query: str, first: str, last: str) -> None:
    w = query_window(query, NOW, SH)
    assert w is not None  # the bot's days: from 4 am of the first to 4 am after the last
    assert w.start == datetime.fromisoformat(first).replace(hour=4, tzinfo=SH)
    assert w.end == datetime.fromisoformat(last).replace(hour=4, tzinfo=SH) + timedelta(days=1)


def test_yesterday_shortly_after_midnight_is_the_day_before_the_evening_still_going_on() -> None:
    just_after = datetime(2023, 5, 2, 16, 30, tzinfo=timezone.utc)  # 00:30 on May 3 in Shanghai
    w = query_window("yesterday", just_after, SH)  # the bot's day is still May 2: yesterday is May 1
    assert w is not None and (w.start, w.end) == day_bounds(date(2023, 5, 1), SH)


@pytest.mark.parametrize("hour, minute, today", [(1, 30, "2023-05-02"), (3, 59, "2023-05-02"),
                                                 (4, 0, "2023-05-03"), (4, 30, "2023-05-03")])
@pytest.mark.parametrize("query, back", [("yesterday", 1), ("昨天", 1), ("today", 0), ("今天", 0),
                                         ("the day before yesterday", 2), ("前天", 2),
                                         ("three days ago", 3), ("三天前", 3)])
def test_around_4_am_a_window_is_the_diarys_day(hour: int, minute: int, today: str, query: str,
                                                 back: int) -> None:
    """The window a query names is the very day the diary writes of (one boundary for both)."""
    now = datetime(2023, 5, 3, hour, minute, tzinfo=SH)
    assert day_of(now, SH) == date.fromisoformat(today)
    w = query_window(query, now, SH)
    assert w is not None and (w.start, w.end) == day_bounds(day_of(now, SH) - timedelta(days=back), SH)
    assert finished_days(now, SH)[-1] == day_of(now, SH) - timedelta(days=1)  # the diary's "yesterday"


def test_around_4_am_weeks_weekends_and_months_follow_the_bots_day() -> None:
    monday_0130 = datetime(2023, 5, 1, 1, 30, tzinfo=SH)  # still Sunday April 30 for the bot
    for query in ("this weekend", "这周末"):
        w = query_window(query, monday_0130, SH)  # the weekend still going on
        assert w is not None and (w.start, w.end) == (day_bounds(date(2023, 4, 29), SH)[0],
                                                      day_bounds(date(2023, 4, 30), SH)[1])
    for query in ("this month", "这个月"):
        w = query_window(query, monday_0130, SH)  # April's last night, not May
        assert w is not None and w.start == day_bounds(date(2023, 4, 1), SH)[0]
        assert w.end == day_bounds(date(2023, 5, 1), SH)[0]
    w = query_window("last week", datetime(2023, 5, 1, 4, 30, tzinfo=SH), SH)  # Monday has begun
    assert w is not None and w.start == day_bounds(date(2023, 4, 24), SH)[0]


def test_the_boundary_hour_is_the_one_given() -> None:
    now = datetime(2023, 5, 3, 4, 30, tzinfo=SH)
    at_six = query_window("yesterday", now, SH, boundary_hour=6)  # before 6 am: still May 2
    assert at_six is not None and (at_six.start, at_six.end) == day_bounds(date(2023, 5, 1), SH, 6)
    at_midnight = query_window("昨天", now, SH, boundary_hour=0)  # calendar days
    assert at_midnight is not None and at_midnight.start == datetime(2023, 5, 2, tzinfo=SH)


def test_a_query_naming_no_time_has_no_window() -> None:
    assert query_window("what does Alice like to eat", NOW, SH) is None
    assert query_window("我们聊聊猫", NOW, SH) is None


def test_a_query_naming_a_year_names_its_own_dates() -> None:
    # its month and year are date_match's; a relative phrase in it is anchored to that date, not now
    assert query_window("What did Maria do last weekend before April 10, 2023?", NOW, SH) is None
    assert query_window("what happened in August 2023", NOW, SH) is None
    assert query_window("2022年三月份的事", NOW, SH) is None


@pytest.mark.parametrize("query, first, last", [  # NOW is Wednesday 2023-05-03
    ("上上周我们聊了什么", "2023-04-17", "2023-04-23"),  # the week before last, not last week
    ("上上个星期", "2023-04-17", "2023-04-23"),
    ("the week before last", "2023-04-17", "2023-04-23"),
    ("上上周末", "2023-04-22", "2023-04-23"),
    ("the weekend before last", "2023-04-22", "2023-04-23"),  # not the coming weekend
    ("上上周三", "2023-04-19", "2023-04-19"),
    ("上上个月", "2023-03-01", "2023-03-31"),
    ("the month before last", "2023-03-01", "2023-03-31"),
    ("前年", "2021-01-01", "2021-12-31"),
    ("the year before last", "2021-01-01", "2021-12-31"),
])
def test_the_one_before_last_is_not_the_last(query: str, first: str, last: str) -> None:
    """"上上周" and "the weekend before last" name the one before the last, not the last (nor this) one."""
    w = query_window(query, NOW, SH)
    assert w is not None
    assert w.start == datetime.fromisoformat(first).replace(hour=4, tzinfo=SH)
    assert w.end == datetime.fromisoformat(last).replace(hour=4, tzinfo=SH) + timedelta(days=1)


@pytest.mark.parametrize("name, hours", [("UTC+8", 8), ("GMT+8", 8), ("utc+08:00", 8), ("+08:00", 8),
                                         ("UTC-5", -5), ("UTC+5:30", 5.5), ("GMT +0545", 5.75),
                                         ("UTC", 0), ("Etc/GMT-8", 8)])
def test_a_utc_offset_names_a_zone_too(name: str, hours: float) -> None:
    """"UTC+8" is what many owners type: it used to be an unknown name, so a server in UTC counted the
    bot's days (and "yesterday") eight hours off, with only a warning in the log."""
    zone = resolve_timezone(name)
    assert zone.utcoffset(datetime(2026, 7, 1)) == timedelta(hours=hours)
    assert day_of(datetime(2026, 12, 1, 23, 30, tzinfo=timezone.utc), zone, 0) == \
        (datetime(2026, 12, 1, 23, 30, tzinfo=timezone.utc) + timedelta(hours=hours)).date()


@pytest.mark.parametrize("name", ["UTC+25", "UTC+8:75", "+", "8"])
def test_an_offset_off_the_clock_is_unknown(name: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, "engram.clock"):
        assert resolve_timezone(name) == host_timezone()
    assert "unknown timezone" in caplog.text


@pytest.fixture
def host_zone(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Set the host's zone (TZ) for one test and put it back after."""
    import time

    def set_zone(name: str) -> None:
        monkeypatch.setenv("TZ", name)
        time.tzset()

    yield set_zone
    monkeypatch.undo()
    time.tzset()


def test_the_hosts_zone_keeps_its_daylight_saving(host_zone) -> None:  # type: ignore[no-untyped-def]
    """No zone configured on a laptop in Berlin: the host's zone used to be the offset of the moment
    the bot started, so after the clocks changed its days and its "Now: 14:05" were an hour off."""
    host_zone("Europe/Berlin")
    zone = host_timezone()
    assert zone.utcoffset(datetime(2026, 1, 15, 12)) == timedelta(hours=1)
    assert zone.utcoffset(datetime(2026, 7, 15, 12)) == timedelta(hours=2)
    host_zone("CST-8")  # a POSIX rule with no zone name behind it: its fixed offset
    assert host_timezone().utcoffset(datetime(2026, 7, 15, 12)) == timedelta(hours=8)


@pytest.mark.parametrize("zone", ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe"])
@pytest.mark.parametrize("boundary_hour", [0, 1, 2, 3, 4])
def test_every_moment_lies_in_its_day_across_daylight_saving(zone: str, boundary_hour: int) -> None:
    """Around both changes of the clocks (a boundary hour that falls in the skipped or the repeated
    hour included), the day a moment belongs to starts before it and ends after it."""
    tz = ZoneInfo(zone)
    for month in (3, 4, 10, 11):
        t = datetime(2026, month, 1, tzinfo=timezone.utc)
        while t.month == month:
            start, end = day_bounds(day_of(t, tz, boundary_hour), tz, boundary_hour)
            assert start <= t < end, (t, start, end)
            t += timedelta(minutes=20)


def test_last_week_across_the_spring_change_is_seven_days_less_an_hour() -> None:
    berlin = ZoneInfo("Europe/Berlin")
    w = query_window("last week", datetime(2026, 4, 1, 12, tzinfo=berlin), berlin)  # clocks went on Mar 29
    assert w is not None and w.end - w.start == timedelta(days=7, hours=-1)
    assert w.start == datetime(2026, 3, 23, 4, tzinfo=berlin)
    assert w.end == datetime(2026, 3, 30, 4, tzinfo=berlin)


@pytest.mark.parametrize("query, first, last", [  # NOW is Wednesday 2023-05-03
    ("what did we do a month ago", "2023-04-01", "2023-04-30"),
    ("two months ago", "2023-03-01", "2023-03-31"),
    ("一个月前说的", "2023-04-01", "2023-04-30"),
    ("两个月前", "2023-03-01", "2023-03-31"),
    ("5个月前", "2022-12-01", "2022-12-31"),
])
def test_months_ago_is_that_calendar_month(query: str, first: str, last: str) -> None:
    """"两个月前" / "two months ago" named no window; "3月" in "三个月前" is not March."""
    w = query_window(query, NOW, SH)
    assert w is not None
    assert w.start == datetime.fromisoformat(first).replace(hour=4, tzinfo=SH)
    assert w.end == datetime.fromisoformat(last).replace(hour=4, tzinfo=SH) + timedelta(days=1)


def test_february_29_with_no_year_is_the_latest_one() -> None:
    """Asked in 2023 (no Feb 29), "2月29日" named no day; it is 2020's."""
    w = query_window("2月29日那天聊了什么", NOW, SH)
    assert w is not None and w.start == datetime(2020, 2, 29, 4, tzinfo=SH)
    no_day = query_window("2月30日", NOW, SH)  # no such day in any year: the month it names
    assert no_day is not None and no_day.said == "2月"


def test_a_year_alone_anchors_no_relative_window_away() -> None:
    """A year with nothing else ("2026", as a framework's datetime line or a user's aside) leaves the
    window a relative phrase names; a year with a month names its own date and takes it away."""
    now = datetime(2026, 12, 3, 12, tzinfo=timezone.utc)
    alone = query_window("what did we do last weekend? (2026)", now, None)
    assert alone is not None and alone.said == "last weekend"
    assert query_window("what did we do the weekend before April 10, 2023?", now, None) is None
