"""The jobs of the bot's days inside the plugin: the diary (then the inner state) and the self-image,
added to the plugin's scheduler when switched on in the config; and, after a forget, the diary and
self-image written again from what is left. All of them take turns with forgets (``days_lock``)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import date, datetime, timedelta
from typing import Any

from ...memory import Forgetting
from ...memory.clock import day_of
from ...memory.model import now_utc
from ...memory.self.day_end import DaySettings, DaysReport, end_days
from ...memory.self.diary import DiaryResult, write_diary
from ...memory.self.self_image import SelfImageResult, write_self_image
from ...scheduler.self_jobs import SELF_IMAGE, diary_job, self_image_job
from .background import Jobs
from .days_lock import DIARY_TURN, FORGET_TURN, SELF_IMAGE_TURN

log = logging.getLogger("engram.plugin")


class SelfJobs:
    """Adds the diary and self-image jobs to ``jobs`` (before it starts); rewrites after forgets."""

    def __init__(self, jobs: Jobs, *, clock: Callable[[], datetime] = now_utc):
        self.jobs = jobs
        self.service = jobs.service
        self.clock = clock
        s = self.service.settings
        if s.diary_enabled:
            jobs.registry.add(diary_job(self.end_days))
            if s.self_image_enabled:
                jobs.registry.add(self_image_job(self.self_image))
        self.service.attach_self_jobs(self, diary=s.diary_enabled)

    def day_settings(self) -> DaySettings:
        s = self.service.settings
        return DaySettings(tz=self.service.tz, boundary_hour=s.diary_boundary_hour,
                           inner_state=s.inner_state_enabled, is_public=s.is_public_place)

    def _after_diary(self) -> None:
        if any(job.name == SELF_IMAGE for job in self.jobs.registry):
            self.jobs.scheduler.trigger(SELF_IMAGE)

    async def end_days(self, **_: Any) -> DaysReport:
        """The diary job: every finished day's missing diary (``memory.days``), then the inner state."""
        async with self.service.days_lock.hold(DIARY_TURN):
            report = await end_days(await self.service.memory(), self.service.providers.chat_model(),
                                    self.day_settings(), folder=self.service.data_dir, now=self.clock())
        if report.written:
            self._after_diary()
        return report

    async def self_image(self, **_: Any) -> SelfImageResult:
        s = self.service
        async with s.days_lock.hold(SELF_IMAGE_TURN):
            return await write_self_image(await s.memory(), s.providers.chat_model(), folder=s.data_dir,
                                          is_public=s.settings.is_public_place, now=self.clock())

    async def diary_now(self, day: date | None = None, *, force: bool = False) -> DiaryResult:
        """``/mem diary``: one day's diary now (default: the day that ended last)."""
        settings = self.day_settings()
        day = day or day_of(self.clock(), settings.tz, settings.boundary_hour) - timedelta(days=1)
        async with self.service.days_lock.hold(DIARY_TURN):
            r = await write_diary(await self.service.memory(), self.service.providers.chat_model(), day,
                                  force=force, tz=settings.tz, boundary_hour=settings.boundary_hour,
                                  folder=self.service.data_dir, now=self.clock())
        if r.status in ("written", "rewritten"):
            self._after_diary()
        return r

    async def rewrite_after_forget(self, plan: Forgetting) -> None:
        """A hard forget took what a day's diary (or the self-image) drew on: each is written again
        from what is left, in the days counted as when the diaries were written (``diary_files.day_rule``).
        Inside the forget's turn (the commands hold ``days_lock``), so no job writes in between.
        Failures are logged: the forget itself is done."""
        s = self.service
        async with s.days_lock.hold(FORGET_TURN):
            mem, chat = await s.memory(), s.providers.chat_model()
            for day in plan.diary_days:
                try:
                    await write_diary(mem, chat, day, force=True, folder=s.data_dir, now=self.clock())
                except Exception:
                    log.exception("Engram: rewriting the diary of %s after a forget failed", day)
            if plan.self_image:  # a self-image drew on what went: written again from the diaries left
                try:
                    await write_self_image(mem, chat, folder=s.data_dir, is_public=s.settings.is_public_place,
                                           now=self.clock())
                except Exception:
                    log.exception("Engram: regenerating the self-image after a forget failed")
