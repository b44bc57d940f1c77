"""Time as the bot lives it: its timezone, its days (ending at a boundary hour), parts of the day, ages.

A day of the bot's life ends at ``boundary_hour`` (4 am by default): a chat at 1 am belongs to the
day before. Ages never come out negative, even when the clock jumps backward.

Clocks jump (NTP at boot, a VM resumed, a far-ahead clock corrected): ``JumpWatch`` logs a jump the
moment the memory's clock is read across one; a reading before ``EARLIEST`` (a machine at 1970
before NTP) is never right, and the daily fade redates what such a clock dated (``metabolism/fading``).
"""

from __future__ import annotations

import logging
import os
import re
import time as _time
from collections.abc import Callable
from datetime import date, datetime, time, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from .model import aware, now_utc

log = logging.getLogger("engram.clock")

DEFAULT_BOUNDARY_HOUR = 4
EARLIEST = datetime(2024, 1, 1, tzinfo=timezone.utc)  # a clock reading before this is wrong (no Engram yet)
AHEAD = timedelta(days=1)  # a time further ahead of the clock than this was dated by a wrong clock
JUMP = 60.0  # seconds the wall clock may move apart from the steady one before it counts as a jump


def plausible(t: datetime) -> bool:
    """Whether a clock could rightly read ``t`` (not before ``EARLIEST``: 1970 is a clock not set yet)."""
    return aware(t) >= EARLIEST


def _steady() -> float:
    """Seconds on a clock no one sets, that runs on while the machine sleeps (where there is one)."""
    try:
        return _time.clock_gettime(_time.CLOCK_BOOTTIME)  # type: ignore[attr-defined,unused-ignore]
    except (AttributeError, OSError):
        return _time.monotonic()


class JumpWatch:
    """The wall clock checked against a steady one at each reading: a jump of more than ``JUMP``
    seconds either way is logged once, with where the clock was and where it is."""

    def __init__(self, steady: Callable[[], float] = _steady, threshold: float = JUMP):
        self.steady = steady
        self.threshold = threshold
        self._last: tuple[datetime, float] | None = None

    def seen(self, now: datetime) -> datetime:
        """``now``, read from the wall clock; logs a jump since the last reading."""
        tick = self.steady()
        if self._last is not None:
            wall, was = self._last
            jump = (aware(now) - aware(wall)).total_seconds() - (tick - was)
            if abs(jump) > self.threshold:
                way = "forward" if jump > 0 else "back"
                early = ("" if plausible(now)
                         else "; a time this early is wrong: nothing fades until the clock is set")
                log.warning("Engram: the clock jumped %s by %s (it read %s, now %s)%s", way,
                            timedelta(seconds=round(abs(jump))), aware(wall).isoformat(timespec="seconds"),
                            aware(now).isoformat(timespec="seconds"), early)
        self._last = (now, tick)
        return now


def watched_clock() -> Callable[[], datetime]:
    """The real time (``model.now_utc``, read at each call), with a ``JumpWatch`` on it."""
    watch = JumpWatch()
    return lambda: watch.seen(now_utc())


def host_timezone() -> tzinfo:
    """The host's own zone: by its name (``TZ``, ``/etc/localtime``, ``/etc/timezone``) so that it
    keeps its daylight saving, when that name agrees with the host's clock; else the host's offset now."""
    fixed = datetime.now().astimezone().tzinfo
    assert fixed is not None
    for name in _host_zone_names():
        try:
            zone = ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError, OSError):
            continue
        if _agrees(zone):
            return zone
    return fixed


def _host_zone_names() -> list[str]:
    names = [os.environ.get("TZ", "").lstrip(":")]
    try:
        link = os.path.realpath("/etc/localtime")
        names.append(link.split("zoneinfo/", 1)[1] if "zoneinfo/" in link else "")
        with open("/etc/timezone", encoding="utf-8") as f:
            names.append(f.read().strip())
    except (OSError, ValueError):
        pass
    return [n for n in names if n]


def _agrees(zone: tzinfo) -> bool:
    """Whether ``zone`` gives the host's own offsets (now, in January and in July)."""
    year = datetime.now().year
    for t in (_time.time(), datetime(year, 1, 15).timestamp(), datetime(year, 7, 15).timestamp()):
        offset = datetime.fromtimestamp(t, timezone.utc).astimezone(zone).utcoffset()
        if offset is None or offset.total_seconds() != _time.localtime(t).tm_gmtoff:
            return False
    return True


_OFFSET = re.compile(r"(?:UTC|GMT)?\s*([+-])\s*(\d{1,2})(?::?(\d{2}))?", re.I)


def parse_timezone(name: str) -> tzinfo | None:
    """The zone called ``name``: a name like ``Asia/Shanghai``, or an offset like ``UTC+8``,
    ``GMT+08:00``, ``+05:30`` (a fixed offset: no daylight saving); None if it is neither."""
    name = name.strip()
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        pass
    m = _OFFSET.fullmatch(name)
    if m is None or int(m.group(2)) > 14 or int(m.group(3) or 0) >= 60:
        return None
    minutes = int(m.group(2)) * 60 + int(m.group(3) or 0)
    return timezone(timedelta(minutes=-minutes if m.group(1) == "-" else minutes))


def timezone_name(tz: tzinfo | None) -> str | None:
    """A name ``parse_timezone`` reads back as ``tz`` (``Asia/Shanghai``, ``UTC+08:00``), or None."""
    key = getattr(tz, "key", None)
    if key or tz is None:
        return key
    if isinstance(tz, timezone):
        offset = tz.utcoffset(None)
        sign, minutes = ("-" if offset < timedelta(0) else "+"), abs(offset) // timedelta(minutes=1)
        return f"UTC{sign}{minutes // 60:02d}:{minutes % 60:02d}"
    return None


def resolve_timezone(name: object) -> tzinfo:
    """The zone called ``name`` (``Asia/Shanghai``, ``UTC+8``); none or an unknown one: the host's, logged."""
    if name is None or (isinstance(name, str) and not name.strip()):
        log.info("Engram: no timezone configured; using the host's (%s)", host_timezone())
        return host_timezone()
    if not isinstance(name, str):
        log.warning("Engram: timezone %r is not a name like Asia/Shanghai; using the host's", name)
        return host_timezone()
    zone = parse_timezone(name)
    if zone is None:
        log.warning("Engram: unknown timezone %r; using the host's (%s)", name, host_timezone())
        return host_timezone()
    return zone


def age(then: datetime, now: datetime) -> timedelta:
    """How long ago ``then`` was; never negative (a clock that jumped backward reads as 'just now')."""
    return max(timedelta(0), aware(now) - aware(then))


_PARTS = ((5, "late at night"), (8, "early morning"), (12, "morning"), (14, "around noon"),
          (18, "afternoon"), (22, "evening"), (24, "night"))


def part_of_day(t: datetime, tz: tzinfo | None) -> str:
    """The part of the day in words at ``t`` in ``tz`` ("morning", "late at night", ...)."""
    hour = aware(t).astimezone(tz).hour
    return next(words for end, words in _PARTS if hour < end)


def day_of(t: datetime, tz: tzinfo | None, boundary_hour: int = DEFAULT_BOUNDARY_HOUR) -> date:
    """The day of the bot's life ``t`` belongs to (before the boundary hour: the day before)."""
    local = aware(t).astimezone(tz)
    return (local - timedelta(hours=boundary_hour)).date()


def day_bounds(day: date, tz: tzinfo | None,
               boundary_hour: int = DEFAULT_BOUNDARY_HOUR) -> tuple[datetime, datetime]:
    """When ``day`` starts and ends (the boundary hour of it and of the next day), as aware times."""
    zone = tz or host_timezone()
    start = datetime.combine(day, time(boundary_hour), zone)
    end = datetime.combine(day + timedelta(days=1), time(boundary_hour), zone)
    return start.astimezone(timezone.utc), end.astimezone(timezone.utc)  # in UTC: differences are real


def finished_days(now: datetime, tz: tzinfo | None, boundary_hour: int = DEFAULT_BOUNDARY_HOUR,
                  most: int = 7) -> list[date]:
    """The last ``most`` days that have ended by ``now``, oldest first (yesterday's last)."""
    today = day_of(now, tz, boundary_hour)
    return [today - timedelta(days=n) for n in range(most, 0, -1)]
