"""The time window a query names: "yesterday", "last weekend", "three days ago", "in March",
"昨天", "上周末", "三天前", "三月份", "上上周" (the week before last) — worked out against ``now`` in the
bot's timezone.

Recall prefers items whose event time falls inside it (the ``in_window`` feature). Days are the bot's
days, as the diary counts them (``clock.day_of``: a day ends at the boundary hour, 4 am by default):
at 01:30 "today" is the evening still going on and "yesterday" the day before it; a week, weekend,
month or year starts and ends at that hour too. No zone counts days in UTC. A month with no year is
its latest occurrence that is not in the future. "The weekend" (周末) asked about in the past tense
on a weekday is the one just gone; else the coming one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone, tzinfo

from ..clock import DEFAULT_BOUNDARY_HOUR, day_bounds, day_of
from ..model import aware
from ..text.words import named_dates


@dataclass(frozen=True)
class Window:
    """[start, end) in aware times, and the words that named it."""

    start: datetime
    end: datetime
    said: str

    def holds(self, t: datetime) -> bool:
        return self.start <= aware(t) < self.end


_EN_NUM = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split())}
_EN_NUM.update({"a": 1, "an": 1, "a couple of": 2, "couple of": 2})
_ZH_DIGIT = {c: i for i, c in enumerate("零一二三四五六七八九")}
_ZH_DIGIT["两"] = 2
_MONTHS = "january february march april may june july august september october november december".split()
_WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
_ZH_WEEKDAY = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}


def zh_number(text: str) -> int | None:
    """``三`` -> 3, ``十二`` -> 12, ``二十`` -> 20, ``7`` -> 7 (up to 99); None if not a number."""
    if text.isdigit():
        return int(text)
    if not text or any(c not in _ZH_DIGIT and c != "十" for c in text):
        return None
    if "十" not in text:
        return _ZH_DIGIT[text] if len(text) == 1 else None
    tens, _, ones = text.partition("十")
    t = _ZH_DIGIT.get(tens, -1) if tens else 1
    o = _ZH_DIGIT.get(ones, -1) if ones else 0
    return None if t < 0 or o < 0 else t * 10 + o


def _en_number(text: str) -> int | None:
    text = text.strip().lower()
    return int(text) if text.isdigit() else _EN_NUM.get(text)


class _Days:
    """Arithmetic on the bot's days (ending at ``boundary_hour``) in one timezone around one moment."""

    def __init__(self, now: datetime, tz: tzinfo | None, boundary_hour: int = DEFAULT_BOUNDARY_HOUR):
        self.tz = tz or timezone.utc
        self.boundary_hour = boundary_hour
        self.now = aware(now)
        self.today = day_of(self.now, self.tz, boundary_hour)

    def at(self, d: date) -> datetime:
        """When the bot's day ``d`` starts."""
        return day_bounds(d, self.tz, self.boundary_hour)[0]

    def days(self, first: date, last: date, said: str) -> Window:
        """The whole days ``first`` to ``last``."""
        return Window(self.at(first), self.at(last + timedelta(days=1)), said)

    def ago(self, n: int, said: str, spread: int = 0) -> Window:
        d = self.today - timedelta(days=n)
        return self.days(d - timedelta(days=spread), d + timedelta(days=spread), said)

    def week(self, back: int, said: str) -> Window:
        """Monday to Sunday, ``back`` weeks before this one."""
        monday = self.today - timedelta(days=self.today.weekday() + 7 * back)
        return self.days(monday, monday + timedelta(days=6), said)

    def weekend(self, back: int, said: str) -> Window:
        """Saturday and Sunday of the week ``back`` weeks before this one (weeks start on Monday)."""
        saturday = self.today - timedelta(days=self.today.weekday() + 7 * back) + timedelta(days=5)
        return self.days(saturday, saturday + timedelta(days=1), said)

    def weekday(self, wd: int, back_weeks: int | None, said: str) -> Window:
        """``wd`` of the week ``back_weeks`` before, or (None) its latest day before today."""
        if back_weeks is None:
            n = (self.today.weekday() - wd) % 7 or 7
            return self.ago(n, said)
        monday = self.today - timedelta(days=self.today.weekday() + 7 * back_weeks)
        d = monday + timedelta(days=wd)
        return self.days(d, d, said)

    def month(self, month: int, year: int | None, said: str) -> Window:
        if year is None:
            year = self.today.year if month <= self.today.month else self.today.year - 1
        first = date(year, month, 1)
        nxt = date(year + (month == 12), month % 12 + 1, 1)
        return Window(self.at(first), self.at(nxt), said)

    def months_back(self, back: int, said: str) -> Window:
        y, m = self.today.year, self.today.month - back
        while m < 1:
            y, m = y - 1, m + 12
        return self.month(m, y, said)

    def year(self, back: int, said: str) -> Window:
        y = self.today.year - back
        return Window(self.at(date(y, 1, 1)), self.at(date(y + 1, 1, 1)), said)


_ZN = "[0-9零一二三四五六七八九十两]{1,3}"
_EN_N = r"\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|an?|(?:a )?couple of"
_MON = "|".join(m[:3] + (f"(?:{m[3:]})?" if m[3:] else "") for m in _MONTHS)
_WD = "|".join(_WEEKDAYS)

# (pattern, how the match becomes a window); tried in order, the earliest match in the query wins.
_RULES: list[tuple[re.Pattern[str], str]] = [(re.compile(p, re.I), k) for p, k in (
    (r"大前天", "ago3"), (r"前天|day before yesterday", "ago2"),
    (r"昨[天晚日夜]|昨儿|yesterday|last night", "ago1"),
    (r"今[天晚早日]|today|tonight|this (?:morning|afternoon|evening)", "ago0"),
    (rf"({_ZN})\s*[天日]前", "zh_days"), (r"几天前|前几天|a few days ago", "few"),
    (rf"\b({_EN_N}) days? ago", "en_days"),
    (rf"({_ZN})\s*(?:个)?(?:星期|礼拜|周)前", "zh_weeks"), (rf"\b({_EN_N}) weeks? ago", "en_weeks"),
    (r"上上(?:个)?周末|the weekend before last", "weekend2"),
    (r"上(?:个)?周末|上(?:个)?星期六日|last weekend|(?:this )?past weekend", "weekend1"),
    (r"(?:这|本)(?:个)?周末|(?<![上下这本个])周末|this weekend|the weekend", "weekend0"),
    (r"上上(?:个)?(?:周|星期|礼拜)([一二三四五六日天])", "zh_last2_wd"),
    (r"上(?:个)?(?:周|星期|礼拜)([一二三四五六日天])", "zh_last_wd"),
    (rf"\blast ({_WD})", "en_last_wd"),
    (r"上上(?:个)?(?:周|星期|礼拜)|the week before last", "week2"),
    (r"上(?:个)?(?:周|星期|礼拜)|last week", "week1"),
    (r"(?:这|本)(?:个)?(?:周|星期|礼拜)|this week", "week0"),
    (r"(?:周|星期|礼拜)([一二三四五六日天])", "zh_wd"), (rf"\bon ({_WD})", "en_wd"),
    (r"上上(?:个)?月|the month before last", "month2"),
    (rf"({_ZN})\s*个\s*月前", "zh_months"), (rf"\b({_EN_N}) months? ago", "en_months"),
    (r"上(?:个)?月|last month", "month1"), (r"(?:这|本)(?:个)?月|this month", "month0"),
    (r"(?<![以之从目提])前年(?!轻)|the year before last", "year2"),  # not 以前年轻 (when young)
    (r"去年|last year", "year1"), (r"今年|this year", "year0"),
    (rf"(?:(\d{{4}})\s*年\s*)?({_ZN})\s*月\s*({_ZN})\s*[日号]", "zh_date"),
    (rf"(?:(\d{{4}})\s*年\s*)?({_ZN})\s*月(?:份)?", "zh_month"),
    (rf"\b(?:in|during|back in|since|early|late|mid)\s+({_MON})\b(?:,?\s+(\d{{4}}))?", "en_month"),
)]


_YEAR = re.compile(r"(?<!\d)(?:19|20)\d\d(?!\d)")
_DATED = frozenset({"zh_date", "zh_month", "en_month"})  # rules naming a month or day: with a year, a date
# A question in the past tense about "the weekend" / 周末 on a weekday means the one just gone ("what
# did we do at the weekend?", "周末去哪了"); with no past tense, or a future, the coming one.
_PAST = re.compile(r"\b(?:did|was|were|had|went|came|been|got|spent|saw|made|ate|drank|said|told|met|"
                   r"bought|took|gave|left|won|lost|found|felt|heard|kept|sent|brought|thought|slept|ran|wrote|"
                   r"(?!(?:need|feed|speed|seed|indeed|planned|scheduled|supposed|interested|excited|shed)\b)"
                   r"[a-z]{2,}ed)\b|了|过", re.I)
_FUTURE = re.compile(r"\b(?:will|going to|gonna|plan|plans|planning|planned|next|coming|upcoming)\b|'ll\b"
                     r"|要|打算|准备|将要|计划", re.I)
_HERE_AND_NOW = re.compile(r"(?:这|本)(?:个)?周末")  # this week's, said in Chinese: never the last one


def query_window(query: str, now: datetime, tz: tzinfo | None,
                 boundary_hour: int = DEFAULT_BOUNDARY_HOUR) -> Window | None:
    """The window the query names (the first it names), or None; days end at ``boundary_hour``.

    A query that names a year with a month names its own dates ("in May 2023", "last weekend before
    April 10, 2023"): it gets no window here, its month and year are ``date_match``'s, and a relative
    phrase in it is anchored to that date, not to now. A year alone ("what did we do last weekend?
    2026") anchors nothing: the window stands.
    """
    found = [(m.start(), i, m) for i, (p, _) in enumerate(_RULES) for m in [p.search(query)] if m]
    if _YEAR.search(query) and (named_dates(query)[1] or any(_RULES[i][1] in _DATED for _, i, _ in found)):
        return None
    for _, i, m in sorted(found, key=lambda x: (x[0], x[1])):
        w = _window(_RULES[i][1], m, _Days(now, tz, boundary_hour))
        if w is not None:
            return w
    return None


def _window(kind: str, m: re.Match[str], d: _Days) -> Window | None:
    said = m.group(0)
    if kind.startswith("ago"):
        return d.ago(int(kind[3:]), said)
    if kind in ("zh_days", "en_days"):
        n = zh_number(m.group(1)) if kind == "zh_days" else _en_number(m.group(1))
        return d.ago(n, said) if n is not None and 0 < n < 400 else None
    if kind == "few":
        return d.days(d.today - timedelta(days=4), d.today - timedelta(days=2), said)
    if kind in ("zh_weeks", "en_weeks"):
        n = zh_number(m.group(1)) if kind == "zh_weeks" else _en_number(m.group(1))
        return d.ago(7 * n, said, spread=3) if n is not None and 0 < n < 60 else None
    if kind in ("zh_months", "en_months"):
        n = zh_number(m.group(1)) if kind == "zh_months" else _en_number(m.group(1))
        return d.months_back(n, said) if n is not None and 0 < n < 120 else None
    if kind == "weekend0" and d.today.weekday() < 5 and not _HERE_AND_NOW.fullmatch(said) \
            and _PAST.search(m.string) and not _FUTURE.search(m.string):
        return d.weekend(1, said)  # asked on a weekday about what happened: the weekend just gone
    if kind.startswith("weekend"):
        return d.weekend(int(kind[-1]), said)
    if kind in ("zh_last2_wd", "zh_last_wd", "zh_wd"):
        wd = _ZH_WEEKDAY[m.group(1)]
        return d.weekday(wd, {"zh_last2_wd": 2, "zh_last_wd": 1}.get(kind), said)
    if kind in ("en_last_wd", "en_wd"):
        wd = _WEEKDAYS.index(m.group(1).lower())
        return d.weekday(wd, None, said)
    if kind.startswith("week"):
        return d.week(int(kind[-1]), said)
    if kind.startswith("month") and kind[-1].isdigit():
        return d.months_back(int(kind[-1]), said)
    if kind.startswith("year"):
        return d.year(int(kind[-1]), said)
    if kind == "zh_date":
        year, mon, day = m.group(1), zh_number(m.group(2)), zh_number(m.group(3))
        if mon is None or day is None or not 1 <= mon <= 12:
            return None
        y = int(year) if year else (d.today.year if (mon, day) <= (d.today.month, d.today.day)
                                    else d.today.year - 1)
        for back in range(1 if year else 8):  # Feb 29 with no year: the latest year that had one
            try:
                one = date(y - back, mon, day)
            except ValueError:
                continue
            return d.days(one, one, said)
        return None
    if kind == "zh_month":
        mon = zh_number(m.group(2))
        return d.month(mon, int(m.group(1)) if m.group(1) else None, said) if mon and 1 <= mon <= 12 else None
    if kind == "en_month":
        mon = next(i + 1 for i, name in enumerate(_MONTHS) if name.startswith(m.group(1).lower()[:3]))
        return d.month(mon, int(m.group(2)) if m.group(2) else None, said)
    return None  # pragma: no cover - every rule's kind is handled above
