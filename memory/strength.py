"""Strength: a memory's strength halves for every ``strength_days`` it is not recalled; being
injected, returned by a tool or shown by a command strengthens it (the fading itself, ``fade()``, is
``metabolism/fading.py``).

The stored strength is the strength at its last recall (or creation: a new version, which keeps when
its memory was last recalled, fades from its making if that is later); what it is now is worked out
when needed (``faded``), so nothing has to be rewritten as time passes. Touches on recall are
collected and written together a moment later (``Toucher``), never on the reply's path.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

import numpy as np

from .clock import AHEAD, EARLIEST
from .model import Memory, aware, now_utc
from .store import Store

if TYPE_CHECKING:  # recall's features use ``faded``: no import back at run time
    from .recall.candidates import RecallSettings

log = logging.getLogger("engram.metabolism")

DAY = 86400.0


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


class Strengths(Protocol):
    """Where touches are written, read at each write (the kernel: its settings may be replaced)."""

    store: Store
    metabolism: MetabolismSettings
    settings: RecallSettings


class Toucher:
    """Memories recalled for a reply, strengthened together a moment later (one transaction)."""

    def __init__(self, kernel: Strengths, clock: Callable[[], float] | None = None):
        self.kernel = kernel
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
        await asyncio.sleep(self.kernel.metabolism.touch_delay)
        try:
            await self.flush()
        except Exception:  # a lost touch costs a little strength, never a reply
            log.exception("strengthening recalled memories failed")

    async def flush(self) -> int:
        """Write every pending touch now; returns how many memories were strengthened."""
        pending, self._pending = self._pending, {}
        if not pending:
            return 0
        s, days = self.kernel.metabolism, self.kernel.settings.strength_days
        rows = []
        for i, (strength, since, status) in (await self.kernel.store.strength_of(list(pending))).items():
            t, reactivate = pending[i]
            now = float(faded(strength, since, t, days))  # made at 1970: not 56 years faded
            new_status = "active" if reactivate and status == "archived" else status
            # a making dated far ahead (a wrong clock since set back) is no later recall
            last = max(t, since) if since <= t + AHEAD.total_seconds() else t
            rows.append((i, min(1.0, now + s.strengthen), last, new_status))
        async with self.kernel.store.transaction() as tx:
            await tx.set_strengths(rows)  # the indexes follow the commit
        return len(rows)

    def forget(self, memory_id: int) -> None:
        """Drop a pending touch of a memory that was hard-forgotten."""
        self._pending.pop(memory_id, None)

    async def close(self) -> None:
        task, self._task = self._task, None  # let go of it (see ``Indexer.stop``)
        if task is not None and not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        await self.flush()
