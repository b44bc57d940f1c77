"""The jobs of the bot's days inside the plugin: the diary (then the inner state) and the self-image,
added to the plugin's scheduler when switched on in the config."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import date, datetime, timedelta
from typing import Any

from ..memory.clock import day_of
from ..memory.days import DaySettings, DaysReport, end_days
from ..memory.diary import DiaryResult, write_diary
from ..memory.model import now_utc
from ..memory.self_image import SelfImageResult, write_self_image
from ..scheduler.self_jobs import SELF_IMAGE, diary_job, self_image_job
from .jobs import Jobs


class SelfJobs:
    """Adds the diary and self-image jobs to ``jobs`` (before it starts)."""

    def __init__(self, jobs: Jobs, *, clock: Callable[[], datetime] = now_utc):
        self.jobs = jobs
        self.service = jobs.service
        self.clock = clock
        self._lock = asyncio.Lock()  # the job and /mem diary never write one day at once
        s = self.service.settings
        if s.diary_enabled:
            jobs.registry.add(diary_job(self.end_days))
            if s.self_image_enabled:
                jobs.registry.add(self_image_job(self.self_image))
            self.service.self_jobs = self

    def day_settings(self) -> DaySettings:
        s = self.service.settings
        return DaySettings(tz=self.service.tz, boundary_hour=s.diary_boundary_hour,
                           inner_state=s.inner_state_enabled, is_public=s.is_public_space)

    def _after_diary(self) -> None:
        if any(job.name == SELF_IMAGE for job in self.jobs.registry):
            self.jobs.scheduler.trigger(SELF_IMAGE)

    async def end_days(self, **_: Any) -> DaysReport:
        """The diary job: every finished day's missing diary (at most 7), then the inner state."""
        async with self._lock:
            report = await end_days(await self.service.memory(), self.service.providers.chat_model(),
                                    self.day_settings(), folder=self.service.data_dir, now=self.clock())
        if report.written:
            self._after_diary()
        return report

    async def self_image(self, **_: Any) -> SelfImageResult:
        s = self.service
        return await write_self_image(await s.memory(), s.providers.chat_model(), folder=s.data_dir,
                                      is_public=s.settings.is_public_space, now=self.clock())

    async def diary_now(self, day: date | None = None, *, force: bool = False) -> DiaryResult:
        """``/mem diary``: one day's diary now (default: the day that ended last)."""
        settings = self.day_settings()
        day = day or day_of(self.clock(), settings.tz, settings.boundary_hour) - timedelta(days=1)
        async with self._lock:
            r = await write_diary(await self.service.memory(), self.service.providers.chat_model(), day,
                                  force=force, tz=settings.tz, boundary_hour=settings.boundary_hour,
                                  folder=self.service.data_dir, now=self.clock())
        if r.status in ("written", "rewritten"):
            self._after_diary()
        return r
