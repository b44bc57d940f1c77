"""The end of the bot's days: the diaries of the finished days not written yet, then the inner state
from the latest of them. The scheduler's diary job calls ``end_days``; the self-image follows it
(``self_image.write_self_image``).

Every day is written: a cursor (``diary.through``) holds the last day up to which each day's diary is
done, so a bot that was off for weeks writes each missed day (oldest first, at most
``catch_up_per_run`` a run, the rest on the next hourly runs, each step logged). Its first run looks
back ``catch_up_days``. A day the model cannot reach is tried again on the next run; one whose
answers keep coming back wrong is skipped after ``MAX_REFUSED`` tries, with a word on how to write it
by hand. The cursor moves only over days that are done, so no day is lost to a kill either."""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, tzinfo
from pathlib import Path

from ..chat import ChatModel
from ..clock import DEFAULT_BOUNDARY_HOUR, day_bounds, day_of, finished_days
from ..errors import ChatError
from ..kernel import Kernel
from ..model import SELF, aware, now_utc
from ..prompts.answers import WrongShape
from .diary import DiaryResult, recent_diaries, write_diary
from .diary_files import data_folder, rewrites_pending
from .identity import IdentityFolder
from .inner_state import load_state, update_inner_state
from .private_details import known_names, private_details

log = logging.getLogger("engram.days")

# answers refused for a diary's inner state (a mood naming someone, a wrong shape), as a cursor: the
# diary day's ordinal * 100 + how many. After MAX_REFUSED the state waits for the next day's diary,
# instead of asking again every hour; a model that cannot be reached is not counted (tried again).
REFUSED = "inner_state_refused"
MAX_REFUSED = 3
THROUGH = "diary.through"  # the ordinal of the last day up to which every day's diary is done
DIARY_REFUSED = "diary.refused:"  # ``<day>``: how many of that day's diary answers came back wrong


@dataclass(frozen=True)
class DaySettings:
    tz: tzinfo | None = None
    boundary_hour: int = DEFAULT_BOUNDARY_HOUR
    catch_up_days: int = 7  # looked back on the first run
    catch_up_per_run: int = 14  # missed days written in one run (the rest on the next runs)
    inner_state: bool = True
    is_public: Callable[[str], bool] = field(default=lambda place: False)


@dataclass
class DaysReport:
    written: list[DiaryResult] = field(default_factory=list)
    failed: Counter[str] = field(default_factory=Counter)
    inner_state: bool = False
    left: int = 0  # finished days whose diary is still to be written (the next runs write them)
    skipped: list[date] = field(default_factory=list)  # days given up (the model's answers kept failing)

    def stats(self) -> dict[str, int]:
        out = {"diaries": len(self.written), "inner_state": int(self.inner_state)}
        if self.left:
            out["diaries_left"] = self.left
        if self.skipped:
            out["diaries_skipped"] = len(self.skipped)
        out.update({f"failed.{k}": v for k, v in self.failed.items()})
        return out


async def end_days(engram: Kernel, chat_model: ChatModel, settings: DaySettings, *,
                   folder: Path | None = None, now: datetime | None = None,
                   days: list[date] | None = None) -> DaysReport:
    """Write each finished day's missing diary (and each diary a forget erased: ``rewrites_pending``),
    then move the inner state; failures are counted, not raised (a day whose call failed is tried
    again on the next run)."""
    folder = folder or data_folder(engram)
    now = now or now_utc()
    report = DaysReport()
    missed: list[date] = []
    if days is None:  # and the days a forget erased the diary of, whatever their age
        missed = await _missed(engram, now, settings)
        # and the last days already done, looked at again: a file a full disk kept from being
        # written follows its memory (no model call)
        recent = [d for d in finished_days(now, settings.tz, settings.boundary_hour, settings.catch_up_days)
                  if not missed or d < missed[0]]
        days = sorted(set(missed[:settings.catch_up_per_run]) | set(recent) | set(rewrites_pending(folder)))
    done: set[date] = set()
    refusals = await engram.store.cursors(DIARY_REFUSED)
    for day in days:
        if refusals.get(f"{DIARY_REFUSED}{day.isoformat()}", 0) >= MAX_REFUSED:  # given up on: said
            done.add(day)  # once, not every hour
            continue
        try:
            r = await write_diary(engram, chat_model, day, tz=settings.tz,
                                  boundary_hour=settings.boundary_hour, folder=folder, now=now)
        except ChatError as e:  # the model cannot be reached: every day waits for the next run
            report.failed["diary"] += 1
            log.warning("Engram: the diary of %s was not written (tried again on the next run): %s", day, e)
            break
        except WrongShape as e:
            report.failed["diary"] += 1
            if await _refused_again(engram, day) < MAX_REFUSED:
                log.warning("Engram: the diary of %s was not written (tried again on the next run): %s",
                            day, e)
                continue
            report.skipped.append(day)
            log.warning("Engram: the diary of %s was not written: the model's answer was wrong %d times "
                        "(%s); it is skipped (the owner's /mem diary %s writes it)", day, MAX_REFUSED, e, day)
        else:
            if r.status in ("written", "rewritten"):
                report.written.append(r)
        done.add(day)
    if missed:
        await _moved_through(engram, missed, done, report)
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
                async with engram.store.transaction() as tx:
                    await tx.set_cursor(REFUSED, last.day.toordinal() * 100 + refused + 1)
            again = ("tried again later" if isinstance(e, ChatError) or refused + 1 < MAX_REFUSED
                     else "not asked again before the next diary")
            log.warning("Engram: the inner state was not updated (%s): %s", again, e)
    return report


async def _missed(engram: Kernel, now: datetime, settings: DaySettings) -> list[date]:
    """The finished days whose diary is not done yet, oldest first: those after the cursor (on the
    first run, the last ``catch_up_days``)."""
    last = finished_days(now, settings.tz, settings.boundary_hour, 1)[-1]
    through = await engram.store.cursor(THROUGH)
    if not through:
        return finished_days(now, settings.tz, settings.boundary_hour, settings.catch_up_days)
    first = date.fromordinal(through) + timedelta(days=1)
    missed = [first + timedelta(days=n) for n in range((last - first).days + 1)]
    if len(missed) > 1:
        log.info("Engram: catching up on the diaries of %d missed days (%s to %s)%s", len(missed),
                 missed[0], missed[-1], f", {settings.catch_up_per_run} in this run"
                 if len(missed) > settings.catch_up_per_run else "")
    return missed


async def _moved_through(engram: Kernel, missed: list[date], done: set[date], report: DaysReport) -> None:
    """The cursor moved over the missed days done, up to the first that is not; what is left said."""
    through = None
    for day in missed:
        if day not in done:
            break
        through = day
    if through is not None:
        async with engram.store.transaction() as tx:
            await tx.set_cursor(THROUGH, through.toordinal())
    report.left = sum(1 for d in missed if d not in done)
    if report.left and len(missed) > 1:
        log.info("Engram: diaries of missed days: %d written, %d left for the next runs (from %s)",
                 len(report.written), report.left, next(d for d in missed if d not in done))


async def _refused_again(engram: Kernel, day: date) -> int:
    """One more wrong answer for ``day``'s diary (a cursor of its own: days rarely have one); how many now."""
    name = f"{DIARY_REFUSED}{day.isoformat()}"
    async with engram.store.transaction() as tx:
        n = await tx.cursor(name) + 1
        await tx.set_cursor(name, n)
    return n


async def _refused(engram: Kernel, day: date) -> int:
    """How many inner-state answers were refused for the diary of ``day``."""
    value = await engram.store.cursor(REFUSED)
    return value % 100 if value // 100 == day.toordinal() else 0


async def _unreflected(engram: Kernel, folder: Path, settings: DaySettings) -> DiaryResult | None:
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
