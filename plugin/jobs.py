"""The plugin's background jobs: the scheduler with its registry, and what feeds it.

Started in ``initialize()`` and stopped in ``terminate()``; missed runs are caught up a little after
start, once AstrBot's providers exist (they load after plugins). Consolidation runs on its timer and
as soon as one place has K new messages.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

from ..memory import Audience
from ..memory.consolidation import ConsolidationSettings, Consolidator, Report
from ..memory.model import now_utc
from ..scheduler import (
    CONSOLIDATE,
    FADE,
    MERGE,
    JobRecords,
    JobRegistry,
    NewEpisodeTrigger,
    Scheduler,
    check_job,
    consolidation_job,
    fade_job,
    merge_job,
)
from . import job_commands  # noqa: F401  (registers /mem consolidate)
from .config import Settings
from .reply_catalogue import say
from .reply_lang import when
from .reply_words import failure, word
from .service import EngramService

log = logging.getLogger("engram.plugin")

CATCH_UP_DELAY = 60.0  # seconds after start before missed jobs run (providers are loaded by then)


def place_audience(place: str, settings: Settings, platforms: Sequence[str] = ()) -> Audience:
    """Who reads a place's memories: the owner's private chat may also see ``owner`` memories
    (``platforms``: the bot's chat platforms; a bare owner id counts only on the one, see
    ``Settings.is_owner``)."""
    platform, _, rest = place.partition(":")
    kind, _, who = rest.partition(":")
    owner = kind == "private" and (settings.is_owner(platform, who, platforms)
                                   or settings.is_owner_private_place(place))
    return Audience(place=place, owner_private=owner)


class Jobs:
    """The scheduler of one plugin instance and the consolidation it runs."""

    def __init__(self, service: EngramService, *, catch_up_delay: float = CATCH_UP_DELAY,
                 consolidation: ConsolidationSettings | None = None):
        self.service = service
        self.catch_up_delay = catch_up_delay
        s = service.settings
        self.consolidation = consolidation or ConsolidationSettings(
            public_spaces=s.public_spaces, min_new=s.consolidate_after_episodes or 20,
            owner_known=bool(s.owner_ids or s.owner_private_spaces))
        self.registry = JobRegistry()
        self.registry.add(consolidation_job(self.consolidator, s.consolidate_every_minutes))
        self.registry.add(fade_job(service.memory))
        self.registry.add(merge_job(service.memory, service.providers.chat_model))
        self.registry.add(check_job(service.memory))
        self.scheduler = Scheduler(self.registry, self._records, key=str(service.path.resolve()))
        self.trigger = NewEpisodeTrigger(s.consolidate_after_episodes,
                                         lambda: self.scheduler.trigger(CONSOLIDATE))
        service.jobs = self
        service.episode_listeners.append(self.trigger.saw)

    async def _records(self) -> JobRecords:
        return (await self.service.memory()).job_records()

    async def consolidator(self) -> Consolidator:
        settings, platforms = self.service.settings, self.service.providers.platforms()
        return Consolidator(await self.service.memory(), self.service.providers.chat_model(),
                            self.consolidation, tz=self.service.tz,
                            audience_for=lambda place: place_audience(place, settings, platforms))

    async def start(self) -> None:
        await self.scheduler.start(self.catch_up_delay)

    async def stop(self) -> None:
        await self.scheduler.shutdown()

    async def consolidate_now(self, places: Sequence[str] | None = None) -> Report:
        """Consolidate now (``/mem consolidate``), after a run already going; recorded like any run."""
        result: Report = await self.scheduler.run_now(CONSOLIDATE, places=places, force=True)
        return result

    async def status(self) -> dict[str, dict[str, Any]]:
        return await self.scheduler.status()

    async def lines(self, lang: str = "en", *, counts: bool = True) -> list[str]:
        """One line per job for ``/mem stats``, in the reply's language (``counts``: with what the jobs
        did over every place, for the owner's private chat only)."""
        status = await self.status()
        return [job_line(name, record, self.service.tz, lang, counts=counts)
                for name, record in status.items()]


def _counts(stats: dict[str, int], prefix: str, lang: str) -> str:
    items = sorted((k[len(prefix):], v) for k, v in stats.items() if k.startswith(prefix) and v)
    return ", ".join(f"{word(lang, 'count', k)} {v}" for k, v in items)


def job_line(name: str, record: dict[str, Any], tz: Any, lang: str = "en", *, counts: bool = True) -> str:
    """One job: its last run, what it did, and its failures and refusals in total (said in ``lang``;
    without ``counts`` only when it ran, how, and which kinds of calls failed: what it did, and how
    often, counts every place's lines and memories)."""
    started = record.get("last_started")
    job = word(lang, "job", name)
    if started is None:
        return say(lang, "job_never", name=job)
    at = when(lang, datetime.fromtimestamp(started, timezone.utc), now_utc(), tz)
    status = word(lang, "run", record.get("status", "?"))
    if record.get("error"):
        status += ("：" if lang == "zh" else ": ") + failure(lang, record["error"])
    last, total = record.get("stats", {}), record.get("totals", {})
    parts = [say(lang, "job_last", name=job, when=at, status=status, runs=record.get("runs", 0),
                 failures=record.get("failures", 0))]
    failed_kinds = sorted(word(lang, "count", k[len("failed."):]) for k, v in total.items()
                          if k.startswith("failed.") and v)
    if not counts:  # which kinds of calls failed (a provider to fix), not how many: that counts batches
        return say(lang, "run_sep").join(
            [parts[0], *([say(lang, "job_failed", counts=", ".join(failed_kinds))] if failed_kinds else [])])
    if "added" in total or "updated" in total:
        parts.append(say(lang, "job_added", added=last.get("added", 0), updated=last.get("updated", 0),
                         all_added=total.get("added", 0), all_updated=total.get("updated", 0),
                         calls=total.get("calls", 0)))
    refused, failed = _counts(total, "refused.", lang), _counts(total, "failed.", lang)
    if refused:
        parts.append(say(lang, "job_refused", counts=refused))
    if failed:
        parts.append(say(lang, "job_failed", counts=failed))
    if total.get("skipped_batches"):
        parts.append(say(lang, "job_skipped", n=total["skipped_batches"]))
    if name in SHOWN:
        said = [(k, word(lang, "count", k)) for k in SHOWN[name]]
        parts.append(say(lang, "job_shown", last=", ".join(f"{w} {last.get(k, 0)}" for k, w in said),
                         total=", ".join(f"{w} {total.get(k, 0)}" for k, w in said)))
    return say(lang, "run_sep").join(parts)


SHOWN = {FADE: ("archived", "protected"), MERGE: ("merged", "kept_apart", "failed")}  # counts in /mem stats
