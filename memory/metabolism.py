"""Strength and fading: a memory's strength halves for every ``strength_days`` it is not recalled;
being injected, returned by a tool or shown by a command strengthens it; ``fade()`` archives the
weak ones (never the important ones, never diaries). Archived memories come up only when searched
for on purpose (``include_archived``), which makes them active again.

The stored strength is the strength at its last recall (or creation: a new version, which keeps when
its memory was last recalled, fades from its making if that is later); what it is now is worked out
when needed (``faded``), so nothing has to be rewritten as time passes. Touches on recall are
collected and written together a moment later (``Toucher``), never on the reply's path.

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

import asyncio
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING

import numpy as np

from .clock import AHEAD, EARLIEST, plausible
from .model import aware, now_utc

if TYPE_CHECKING:
    from .engram import Engram
    from .model import Memory

log = logging.getLogger("engram.metabolism")

DAY = 86400.0
PAGE = 50_000
NEVER_ARCHIVED = ("diary",)  # kinds fade() leaves alone whatever their strength
HEARD = 30 * DAY  # fading counts at most this far past the latest message that came in


@dataclass(frozen=True)
class MetabolismSettings:
    """How memories fade and strengthen (the halving period is ``RecallSettings.strength_days``)."""

    archive_below: float = 0.1  # fade() archives memories weaker than this (~100 days unrecalled)
    protected_importance: float = 0.8  # this important or more: never archived
    strengthen: float = 0.5  # added to the strength at each recall (at most 1)
    touch_delay: float = 2.0  # seconds touches wait, to be written in one transaction


def faded(strength: float | np.ndarray, since: float | np.ndarray, now: float, days: float) -> np.ndarray:
    """The strength now of a memory whose strength was ``strength`` at ``since`` (seconds). A ``since``
    before ``EARLIEST`` (made while the clock read 1970, not set yet) is no age: it counts from now, as
    ``fade()`` redates it."""
    since = np.asarray(since, np.float64)
    if now >= EARLIEST.timestamp():
        since = np.where(since < EARLIEST.timestamp(), now, since)
    return np.asarray(strength) * 0.5 ** (np.maximum(0.0, now - since) / DAY / days)


def strength_now(m: Memory, days: float, now: datetime | None = None) -> float:
    """``m``'s strength now: its stored strength faded from its last recall or its making, the later
    (as ``fade()`` and recall see it)."""
    recalled = aware(m.last_recalled).timestamp() if m.last_recalled else 0.0
    since = max(recalled, aware(m.created_at).timestamp())
    return float(faded(m.strength, since, aware(now).timestamp(), days))


@dataclass
class FadeReport:
    checked: int = 0
    archived: int = 0
    protected: int = 0  # weak but important (or a diary): kept active
    redated: int = 0  # dated by a wrong clock (far ahead, or before EARLIEST): now dated now

    def stats(self) -> dict[str, int]:
        out = {"checked": self.checked, "archived": self.archived, "protected": self.protected}
        return out | ({"redated": self.redated} if self.redated else {})  # rare: said when it happened


async def fade(engram: Engram, now: datetime | None = None) -> FadeReport:
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


async def _lived_until(engram: Engram, t: float) -> float:
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


async def _redate(engram: Engram, ids: list[int], now: datetime) -> int:
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


class Toucher:
    """Memories recalled for a reply, strengthened together a moment later (one transaction)."""

    def __init__(self, engram: Engram, clock: Callable[[], float] | None = None):
        self.engram = engram
        self.clock = clock or (lambda: now_utc().timestamp())
        self._pending: dict[int, tuple[float, bool]] = {}  # id -> (when, reactivate)
        self._task: asyncio.Task[None] | None = None

    def touch(self, ids: Iterable[int], *, reactivate: bool = False, at: float | None = None) -> None:
        """Note that the memories ``ids`` were used now; returns at once."""
        t = self.clock() if at is None else at
        for i in ids:
            self._pending[i] = (t, reactivate or self._pending.get(i, (0.0, False))[1])
        if self._pending and (self._task is None or self._task.done()):
            self._task = asyncio.create_task(self._later(), name="engram-touch")

    async def _later(self) -> None:
        await asyncio.sleep(self.engram.metabolism.touch_delay)
        try:
            await self.flush()
        except Exception:  # a lost touch costs a little strength, never a reply
            log.exception("strengthening recalled memories failed")

    async def flush(self) -> int:
        """Write every pending touch now; returns how many memories were strengthened."""
        pending, self._pending = self._pending, {}
        if not pending:
            return 0
        s, days = self.engram.metabolism, self.engram.settings.strength_days
        rows = []
        for i, (strength, since, status) in (await self.engram.store.strength_of(list(pending))).items():
            t, reactivate = pending[i]
            now = float(faded(strength, since, t, days))  # made at 1970: not 56 years faded
            new_status = "active" if reactivate and status == "archived" else status
            # a making dated far ahead (a wrong clock since set back) is no later recall
            last = max(t, since) if since <= t + AHEAD.total_seconds() else t
            rows.append((i, min(1.0, now + s.strengthen), last, new_status))
        async with self.engram.store.transaction() as tx:
            await tx.set_strengths(rows)  # the indexes follow the commit
        return len(rows)

    def forget(self, memory_id: int) -> None:
        """Drop a pending touch of a memory that was hard-forgotten."""
        self._pending.pop(memory_id, None)

    async def close(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        await self.flush()
