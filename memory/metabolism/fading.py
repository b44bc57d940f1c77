"""Fading: ``fade()`` archives the memories whose strength (``strength.py``) fell below the
threshold (never the important ones, never diaries). Archived memories come up only when searched
for on purpose (``include_archived``), which makes them active again.

A clock that was wrong dates memories wrongly: far ahead (corrected back since), a memory would not
fade until that date; at 1970 (a machine before NTP), it would be archived as soon as the clock is
set. ``fade`` redates such memories to now (logged), so they fade from when the clock was right
again; with the clock itself before ``clock.EARLIEST`` it fades nothing. The clock is taken as right
when it reads a plausible time: one wrongly set back by months would redate the memories made since.
A clock set far ahead would archive everything at once: fading counts no further than ``HEARD``
past the latest message that came in (dated by the platform's clock, never after ours), logged; a
bot down for months, or that no one talks to, fades the rest of the way once it hears again.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timezone

import numpy as np

from ..clock import AHEAD, EARLIEST, plausible
from ..kernel import Kernel
from ..model import aware, now_utc
from ..strength import DAY, faded

log = logging.getLogger("engram.metabolism")

PAGE = 50_000
NEVER_ARCHIVED = ("diary",)  # kinds fade() leaves alone whatever their strength
HEARD = 30 * DAY  # fading counts at most this far past the latest message that came in


@dataclass
class FadeReport:
    checked: int = 0
    archived: int = 0
    protected: int = 0  # weak but important (or a diary): kept active
    redated: int = 0  # dated by a wrong clock (far ahead, or before EARLIEST): now dated now

    def stats(self) -> dict[str, int]:
        out = {"checked": self.checked, "archived": self.archived, "protected": self.protected}
        return out | ({"redated": self.redated} if self.redated else {})  # rare: said when it happened


async def fade(engram: Kernel, now: datetime | None = None) -> FadeReport:
    """Archive the active memories whose strength fell below ``archive_below``."""
    s, days = engram.metabolism, engram.settings.strength_days
    t = aware(now).timestamp() if now else now_utc().timestamp()
    report, after, weak, wrong = FadeReport(), 0, [], []
    if t < EARLIEST.timestamp():
        log.warning("Engram: the clock reads %s, too early to be right: nothing faded until it is set",
                    datetime.fromtimestamp(t, timezone.utc).isoformat(timespec="seconds"))
        return report
    lived = await _lived_until(engram, t)  # how far fading counts (t, unless the clock is far ahead)
    while rows := await engram.store.strength_rows(after, PAGE):
        ids, strength, since_, importance, kinds = zip(*rows)
        since = np.array(since_, np.float64)
        misdated = (since > t + AHEAD.total_seconds()) | (since < EARLIEST.timestamp())
        wrong += np.array(ids)[misdated].tolist()
        since[misdated] = t  # they fade from now
        low = faded(np.array(strength, np.float64), since, lived, days) < s.archive_below
        kept = (np.array(importance) >= s.protected_importance) | np.isin(np.array(kinds), NEVER_ARCHIVED)
        report.checked += len(rows)
        report.protected += int(np.count_nonzero(low & kept))
        weak += np.array(ids)[low & ~kept].tolist()
        after = rows[-1][0]
    report.redated = await _redate(engram, wrong, datetime.fromtimestamp(t, timezone.utc))
    async with engram.store.transaction() as tx:
        report.archived = len(await tx.archive(weak))  # the indexes follow the commit
    if report.archived:
        log.info("fade: archived %d of %d memories", report.archived, report.checked)
    return report


async def _lived_until(engram: Kernel, t: float) -> float:
    """``t``, or ``HEARD`` past the latest message that came in when that is earlier (logged)."""
    heard = await engram.store.last_heard()
    if heard is None or t <= aware(heard).timestamp() + HEARD or not plausible(heard):
        return t
    until = aware(heard).timestamp() + HEARD
    log.warning("Engram: the clock reads %s, %d days after the last message came in (%s): fading counts "
                "to %s (a clock set ahead, or the bot was down or not talked to)",
                _iso(t), (t - aware(heard).timestamp()) // DAY, _iso(aware(heard).timestamp()), _iso(until))
    return until


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, timezone.utc).isoformat(timespec="seconds")


async def _redate(engram: Kernel, ids: list[int], now: datetime) -> int:
    """Date ``now`` the made and recalled times of memories ``ids`` that a wrong clock gave (far
    ahead of ``now``, or before ``EARLIEST``); logged with the times they had."""
    if not ids:
        return 0
    found = await engram.store.get_memories(ids)
    ahead, early = now + AHEAD, EARLIEST
    times = [t for m in found.values() for t in (m.created_at, m.last_recalled) if t is not None
             and (aware(t) > ahead or aware(t) < early)]
    async with engram.store.transaction() as tx:
        for i, m in found.items():
            fix = {name: now for name, t in (("created_at", m.created_at), ("last_recalled", m.last_recalled))
                   if t is not None and (aware(t) > ahead or (aware(t) < early and name == "created_at"))}
            if fix:
                await tx.set_memory_fields(i, **fix)
    if times:
        log.warning("Engram: %d memories were dated by a wrong clock (%s to %s); dated now (%s), they "
                    "fade from now", len(found), min(map(aware, times)).isoformat(timespec="seconds"),
                    max(map(aware, times)).isoformat(timespec="seconds"), now.isoformat(timespec="seconds"))
    return len(found)
