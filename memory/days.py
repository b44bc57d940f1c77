"""The end of the bot's days: the diaries of the finished days not written yet (at most the last
``catch_up_days``), then the inner state from the latest of them. The scheduler's diary job calls
``end_days``; the self-image follows it (``self_image.write_self_image``)."""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, tzinfo
from pathlib import Path

from .chat import ChatModel
from .clock import DEFAULT_BOUNDARY_HOUR, day_bounds, day_of, finished_days
from .diary import DiaryResult, recent_diaries, write_diary
from .diary_files import data_folder, rewrites_pending
from .engram import Engram
from .errors import ChatError
from .identity import IdentityFolder
from .inner_state import load_state, update_inner_state
from .leaks import known_names, private_details
from .model import SELF, aware, now_utc
from .replies import WrongShape

log = logging.getLogger("engram.days")

# answers refused for a diary's inner state (a mood naming someone, a wrong shape), as a cursor: the
# diary day's ordinal * 100 + how many. After MAX_REFUSED the state waits for the next day's diary,
# instead of asking again every hour; a model that cannot be reached is not counted (tried again).
REFUSED = "inner_state_refused"
MAX_REFUSED = 3


@dataclass(frozen=True)
class DaySettings:
    tz: tzinfo | None = None
    boundary_hour: int = DEFAULT_BOUNDARY_HOUR
    catch_up_days: int = 7
    inner_state: bool = True
    is_public: Callable[[str], bool] = field(default=lambda space: False)


@dataclass
class DaysReport:
    written: list[DiaryResult] = field(default_factory=list)
    failed: Counter[str] = field(default_factory=Counter)
    inner_state: bool = False

    def stats(self) -> dict[str, int]:
        out = {"diaries": len(self.written), "inner_state": int(self.inner_state)}
        out.update({f"failed.{k}": v for k, v in self.failed.items()})
        return out


async def end_days(engram: Engram, chat_model: ChatModel, settings: DaySettings, *,
                   folder: Path | None = None, now: datetime | None = None,
                   days: list[date] | None = None) -> DaysReport:
    """Write each finished day's missing diary (and each diary a forget erased: ``rewrites_pending``),
    then move the inner state; failures are counted, not raised (a day whose call failed is tried
    again on the next run)."""
    folder = folder or data_folder(engram)
    now = now or now_utc()
    report = DaysReport()
    if days is None:  # and the days a forget erased the diary of, whatever their age
        days = sorted(set(finished_days(now, settings.tz, settings.boundary_hour, settings.catch_up_days))
                      | set(rewrites_pending(folder)))
    for day in days:
        try:
            r = await write_diary(engram, chat_model, day, tz=settings.tz,
                                  boundary_hour=settings.boundary_hour, folder=folder, now=now)
        except (ChatError, WrongShape) as e:
            report.failed["diary"] += 1
            log.warning("Engram: the diary of %s was not written (tried again later): %s", day, e)
            continue
        if r.status in ("written", "rewritten"):
            report.written.append(r)
    last = report.written[-1] if report.written else None
    if last is None and settings.inner_state:  # a run killed (or failed) between the diary and the state
        last = await _unreflected(engram, folder, settings)
    refused = await _refused(engram, last.day) if last is not None else 0
    if last is not None and settings.inner_state and refused < MAX_REFUSED:
        episodes = await engram.store.get_episodes(list(last.sources))
        people = {e.actor for e in episodes.values() if e.actor != SELF}
        aliases = {a: await engram.store.aliases(a) for a in people}
        persona = IdentityFolder(folder).core().text
        details = await asyncio.to_thread(private_details, list(episodes.values()), aliases,
                                          settings.is_public, known=persona,
                                          names=await known_names(engram.store))
        # felt from when that day ended (a day written late, after the bot was down, has faded since)
        ended = day_bounds(last.day, settings.tz, settings.boundary_hour)[1]
        try:
            await update_inner_state(chat_model, last.text, last.day.isoformat(), folder=folder,
                                     persona=persona, details=details, now=min(aware(now), ended))
            report.inner_state = True
        except (ChatError, WrongShape) as e:
            report.failed["inner_state"] += 1
            if isinstance(e, WrongShape):
                await engram.store.set_cursor(REFUSED, last.day.toordinal() * 100 + refused + 1)
            again = ("tried again later" if isinstance(e, ChatError) or refused + 1 < MAX_REFUSED
                     else "not asked again before the next diary")
            log.warning("Engram: the inner state was not updated (%s): %s", again, e)
    return report


async def _refused(engram: Engram, day: date) -> int:
    """How many inner-state answers were refused for the diary of ``day``."""
    value = await engram.store.cursor(REFUSED)
    return value % 100 if value // 100 == day.toordinal() else 0


async def _unreflected(engram: Engram, folder: Path, settings: DaySettings) -> DiaryResult | None:
    """The latest diary when the inner state has not moved from it yet (its run was killed between
    the two, or the state's call failed): the state moves from it on this run instead."""
    latest = await recent_diaries(engram, 1)
    if not latest:
        return None
    m = latest[0]
    day = day_of(aware(m.valid_from or m.created_at), settings.tz, settings.boundary_hour)
    state = load_state(folder)
    if state is not None and state.day >= day.isoformat():
        return None
    return DiaryResult(day, "exists", m.id, m.text, len(m.sources), None, m.sources)
