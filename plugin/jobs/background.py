"""The plugin's background jobs: the scheduler with its registry, and what feeds it.

Started in ``initialize()`` and stopped in ``terminate()``; missed runs are caught up a little after
start, once AstrBot's providers exist (they load after plugins). Consolidation runs on its timer and
as soon as one place has K new messages.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from ...memory.consolidation import ConsolidationSettings, Consolidator, Report
from ...memory.store.opening import store_path
from ...scheduler import (
    CONSOLIDATE,
    JobRecords,
    JobRegistry,
    NewEpisodeTrigger,
    Scheduler,
    backup_job,
    check_job,
    consolidation_job,
    fade_job,
    merge_job,
)
from ..events import place_audience
from ..service import EngramService
from .ranking import ranking_job

log = logging.getLogger("engram.plugin")

CATCH_UP_DELAY = 60.0  # seconds after start before missed jobs run (providers are loaded by then)


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
        if s.backup_keep > 0:  # off the reply path: the scheduler's task, a thread
            self.registry.add(backup_job(store_path(service.location, service.data_dir), s.backup_keep,
                                         s.database_url or None))
        if s.ranking_learn:  # what replies used, learned from off the reply path
            self.registry.add(ranking_job(service))
        self.scheduler = Scheduler(self.registry, self._records, key=str(service.path.resolve()))
        self.trigger = NewEpisodeTrigger(s.consolidate_after_episodes,
                                         lambda: self.scheduler.trigger(CONSOLIDATE))
        service.attach_jobs(self)

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
