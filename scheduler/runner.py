"""Runs the registry's jobs: on their interval (APScheduler's ``AsyncIOScheduler``), on a trigger, or
by hand; records every run in the store; catches up once at start on what was missed while down
(or whose last run is dated in the future: the clock was set back since); a clock set back never
holds a timer back more than one interval, and what fell due while a laptop slept runs within
``RECHECK_SECONDS`` of waking.

Two runs of one job never overlap: a trigger that arrives while the job runs asks for one more run
after it. A job that raises is logged, counted and recorded as failed; the others go on.
``shutdown()`` stops the timer and cancels running jobs, and a second scheduler started under the
same key (a plugin reload that skipped ``terminate()``) stops the first, so no job runs twice.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Any, Protocol

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.interval import IntervalTrigger

from .registry import Job, JobRegistry

log = logging.getLogger("engram.scheduler")
INTERRUPTED = "interrupted"  # a run the process was killed in (its record still said "running")
RECHECK_SECONDS = 300.0  # the longest a timer waits before it looks at the wall clock again
FUTURE_SLACK = 300.0  # seconds a last start may lie ahead of the clock before it counts as missed
# The live scheduler of each bot. AstrBot re-imports a plugin's modules on reload, so a class
# attribute would start empty again; a logger is a process-wide object that outlives the re-import.
LIVE: dict[str, Scheduler] = logging.getLogger("engram.scheduler.live").__dict__.setdefault("schedulers", {})


class _Timers(AsyncIOScheduler):
    """APScheduler plans on the wall clock: set back (an NTP fix), a job planned before waited the
    whole jump more. A job planned further off than its interval is planned one interval from now.
    Its timer waits on the event loop's clock, which stands still while a laptop sleeps: it never
    waits more than ``recheck_seconds`` before it looks at the wall clock again."""

    def __init__(self, recheck_seconds: float, **kwargs: Any):
        super().__init__(**kwargs)
        self.recheck_seconds = recheck_seconds

    def _start_timer(self, wait_seconds: float | None) -> None:
        super()._start_timer(None if wait_seconds is None else min(wait_seconds, self.recheck_seconds))

    def _process_jobs(self) -> float | None:
        now = datetime.now(self.timezone)
        for job in self.get_jobs():
            every = getattr(job.trigger, "interval", None)
            planned = job.next_run_time
            if isinstance(every, timedelta) and planned is not None and planned - now > every:
                log.warning("Engram: the clock was set back; job %s planned again, in %s", job.id, every)
                job.modify(next_run_time=now + every)
        wait: float | None = super()._process_jobs()
        return wait


class JobRecords(Protocol):
    """Where the last runs are kept (the memory store)."""

    async def job_runs(self) -> dict[str, dict[str, Any]]: ...

    async def save_job_run(self, job: str, record: dict[str, Any]) -> None: ...


def stats_of(result: Any) -> dict[str, int]:
    """A job's result as counts: a dict, or an object with ``stats()``."""
    if result is None:
        return {}
    raw = result.stats() if hasattr(result, "stats") else result
    return {str(k): int(v) for k, v in dict(raw).items() if isinstance(v, int | float)}


def failure_of(result: Any) -> str:
    """A run that returned but did nothing because its model calls failed (the model down: a
    consolidation or merge whose every call failed), as a record keeps an error (``ChatError: why``);
    "" for a run that did its work, or some of it. Such a run shows as failed, not as ``ok``."""
    if not getattr(result, "failed", None):
        return ""
    if any(getattr(result, k, 0) for k in ("added", "updated", "merged")):
        return ""
    why = str(getattr(result, "error", "") or "every model call failed")
    failed = result.failed
    kinds = set(failed) if isinstance(failed, dict) else set()  # a consolidation counts them by kind
    kind = {frozenset({"malformed"}): "WrongShape", frozenset({"timeout"}): "ChatTimeout"}.get(
        frozenset(kinds), "ChatError")
    return f"{kind}: {why}"[:500]


class Scheduler:
    """The jobs of one bot. ``start()`` in the plugin's initialize(), ``shutdown()`` in terminate()."""

    def __init__(self, registry: JobRegistry, records: Callable[[], Awaitable[JobRecords]], *,
                 key: str = "engram", clock: Callable[[], float] = time.time):
        self.registry = registry
        self._records = records
        self.key = key
        self.clock = clock
        self.recheck_seconds = RECHECK_SECONDS
        self._aps: AsyncIOScheduler | None = None
        self._locks: dict[str, asyncio.Lock] = {}
        self._again: set[str] = set()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._status: dict[str, dict[str, Any]] = {}
        self._loaded = False
        self._stopped = False
        self._waiting: asyncio.Task[None] | None = None  # the delayed catch-up

    # ---- lifecycle -----------------------------------------------------------------------
    async def start(self, catch_up_delay: float = 0.0) -> None:
        """Start the interval timers, then (after ``catch_up_delay`` seconds) run once each job whose
        last run was missed."""
        old = LIVE.get(self.key)
        if old is not None and old is not self:
            log.warning("a scheduler for %s was still running; stopping it first", self.key)
            await old.shutdown()
        LIVE[self.key] = self
        self._aps = _Timers(self.recheck_seconds, event_loop=asyncio.get_running_loop())
        for job in self.registry:
            if job.every is not None:
                self._aps.add_job(self._tick, IntervalTrigger(seconds=job.every.total_seconds()),
                                  args=[job.name], id=job.name, coalesce=True, max_instances=1,
                                  misfire_grace_time=None)
        self._aps.start()
        if catch_up_delay > 0:
            self._waiting = asyncio.create_task(self._catch_up(catch_up_delay), name="engram-jobs-catch-up")
        else:
            await self._catch_up(0.0)

    async def _catch_up(self, delay: float) -> None:
        await asyncio.sleep(delay)
        if not await self._load():
            log.error("Engram: the last job runs could not be read; nothing is caught up")
            return
        now = self.clock()
        for job in self.registry:
            record = self._status.get(job.name, {})
            last = record.get("last_started")
            # a last start dated in the future: the clock was set back since; when it ran is unknown
            if job.every is not None and job.catch_up and (last is None or record.get("status") == INTERRUPTED
                                                           or now - last >= job.every.total_seconds()
                                                           or last - now > FUTURE_SLACK):
                if last is None:  # a fresh install: nothing was missed (issue 27: four lines saying so)
                    log.debug("Engram: job %s has never run; running it once now", job.name)
                else:
                    log.info("Engram: job %s missed its run while stopped (or was stopped in it); running "
                             "it once now", job.name)
                self.trigger(job.name)

    async def shutdown(self) -> None:
        """Stop the timers and cancel running jobs (their work is all-or-nothing)."""
        self._stopped = True
        if self._aps is not None and self._aps.running:
            self._aps.shutdown(wait=False)
        self._aps = None
        if self._waiting is not None:
            self._waiting.cancel()
            await asyncio.gather(self._waiting, return_exceptions=True)
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if LIVE.get(self.key) is self:
            del LIVE[self.key]

    @property
    def running(self) -> bool:
        return self._aps is not None and not self._stopped

    # ---- running jobs --------------------------------------------------------------------
    async def _tick(self, name: str) -> None:
        self.trigger(name)

    def trigger(self, name: str) -> asyncio.Task[Any] | None:
        """Run ``name`` soon in the background; if it is running, once more after it."""
        if self._stopped:
            return None
        lock = self._locks.setdefault(name, asyncio.Lock())
        if lock.locked():
            self._again.add(name)
            return None
        task = asyncio.create_task(self._background(name), name=f"engram-job-{name}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _background(self, name: str) -> None:
        while True:
            try:
                await self.run_now(name)
            except Exception:  # recorded by run_now; a background run never raises
                pass
            if name not in self._again or self._stopped:
                return
            self._again.discard(name)

    async def run_now(self, name: str, **kwargs: Any) -> Any:
        """Run ``name`` now (after a run already going) and return its result; a failure is
        recorded, logged and raised to the caller."""
        job = self.registry.get(name)
        lock = self._locks.setdefault(name, asyncio.Lock())
        async with lock:
            started = self.clock()
            await self._save(job, {"last_started": started, "status": "running"})
            try:
                result = await job.run(**kwargs)
            except asyncio.CancelledError:
                await self._save(job, {"status": "cancelled", "last_finished": self.clock()})
                raise
            except Exception as e:
                log.exception("Engram: job %s failed", name)
                await self._save(job, {"status": "failed", "last_finished": self.clock(),
                                       "error": f"{type(e).__name__}: {e}"[:500]}, failed=True)
                raise
            error = failure_of(result)
            if error:
                log.warning("Engram: job %s did nothing: %s", name, error)
            await self._save(job, {"status": "failed" if error else "ok", "last_finished": self.clock(),
                                   "error": error, "stats": stats_of(result)},
                             ok=not error, failed=bool(error))
            return result

    async def _load(self) -> bool:
        """Read the persisted records once (lazily: the store opens when first needed)."""
        if not self._loaded:
            try:
                stored = await (await self._records()).job_runs()
            except Exception:
                log.exception("Engram: reading the last job runs failed")
                return False
            for record in stored.values():  # "running" in the store: the process stopped in that run
                if record.get("status") == "running":
                    record["status"] = INTERRUPTED
            self._status = {**stored, **self._status}
            self._loaded = True
        return True

    async def _save(self, job: Job, changes: dict[str, Any], *, ok: bool = False,
                    failed: bool = False) -> None:
        await self._load()
        record = dict(self._status.get(job.name, {}))
        record.update(changes)
        if ok or failed:
            record["runs"] = record.get("runs", 0) + 1
            record["failures"] = record.get("failures", 0) + (1 if failed else 0)
        if "stats" in changes:  # what a run did (a failed one's failed calls too) counts in the totals
            totals = dict(record.get("totals", {}))
            for k, v in changes.get("stats", {}).items():
                totals[k] = totals.get(k, 0) + v
            record["totals"] = totals
        self._status[job.name] = record
        try:
            await asyncio.shield((await self._records()).save_job_run(job.name, record))
        except Exception:  # the store being down must not turn a job into a crash loop
            log.exception("Engram: recording a run of job %s failed", job.name)

    async def status(self) -> dict[str, dict[str, Any]]:
        """Each job's record: last start/finish, status, error, last stats, runs, failures, totals."""
        await self._load()
        return {job.name: dict(self._status.get(job.name, {})) for job in self.registry}

    async def idle(self) -> None:
        """Wait until no job runs in the background (tests, shutdown)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
