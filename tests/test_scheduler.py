"""The scheduler: missed runs caught up once, no overlap, a failing job never stops the others,
runs recorded in the store, a restart leaves no job running twice."""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta
from typing import Any

import pytest

from astrbot_plugin_engram.memory import Engram, NoEmbedder
from astrbot_plugin_engram.scheduler import Job, JobRegistry, NewEpisodeTrigger, Scheduler

from .conftest import EngramOpener


class Calls:
    """A job body that counts its runs and how many overlapped."""

    def __init__(self, delay: float = 0.0, fail: bool = False):
        self.delay, self.fail = delay, fail
        self.runs = self.active = self.most_at_once = 0

    async def __call__(self, **_: Any) -> dict[str, int]:
        self.active += 1
        self.most_at_once = max(self.most_at_once, self.active)
        try:
            await asyncio.sleep(self.delay)
            self.runs += 1
            if self.fail:
                raise RuntimeError("the diary exploded")
            return {"added": 2}
        finally:
            self.active -= 1


def scheduler(engram: Engram, *jobs: Job, key: str = "test") -> Scheduler:
    registry = JobRegistry()
    for job in jobs:
        registry.add(job)

    async def records() -> Any:
        return engram.job_records()

    return Scheduler(registry, records, key=key)


async def test_a_job_missed_while_stopped_runs_once_at_start(keyword_engram: Engram) -> None:
    hourly, daily = Calls(), Calls()
    now = time.time()
    records = keyword_engram.job_records()
    await records.save_job_run("hourly", {"last_started": now - 5 * 3600, "status": "ok"})
    await records.save_job_run("daily", {"last_started": now - 600, "status": "ok"})
    s = scheduler(keyword_engram, Job("hourly", hourly, timedelta(hours=1)),
                  Job("daily", daily, timedelta(days=1)))
    await s.start()
    await s.idle()
    await s.shutdown()
    assert (hourly.runs, daily.runs) == (1, 0)  # five missed hours run once, not five times


async def test_a_failing_job_is_recorded_and_never_stops_the_others(keyword_engram: Engram) -> None:
    bad, good = Calls(fail=True), Calls()
    s = scheduler(keyword_engram, Job("bad", bad, timedelta(seconds=0.1), catch_up=False),
                  Job("good", good, timedelta(seconds=0.1), catch_up=False))
    await s.start()
    await asyncio.sleep(0.65)
    await s.shutdown()
    assert bad.runs >= 3 and good.runs >= 3
    status = await s.status()
    assert status["bad"]["failures"] == status["bad"]["runs"] == bad.runs
    assert status["bad"]["error"] == "RuntimeError: the diary exploded"
    assert status["good"]["failures"] == 0 and status["good"]["totals"]["added"] == 2 * good.runs


async def test_runs_of_one_job_never_overlap(keyword_engram: Engram) -> None:
    slow = Calls(delay=0.2)
    s = scheduler(keyword_engram, Job("slow", slow))
    await s.start()
    for _ in range(5):
        s.trigger("slow")
        await asyncio.sleep(0.01)
    await s.run_now("slow")  # by hand, while it runs: waits its turn
    await s.idle()
    await s.shutdown()
    assert slow.most_at_once == 1
    assert slow.runs == 3  # the first, one more for the triggers that came meanwhile, the one by hand


async def test_run_now_raises_to_the_caller_and_is_counted(keyword_engram: Engram) -> None:
    s = scheduler(keyword_engram, Job("bad", Calls(fail=True)))
    await s.start()
    with pytest.raises(RuntimeError):
        await s.run_now("bad")
    assert (await s.status())["bad"]["failures"] == 1
    await s.shutdown()


async def test_last_runs_are_kept_in_the_store(open_engram: EngramOpener) -> None:
    eng = await open_engram(NoEmbedder())
    s = scheduler(eng, Job("consolidate", Calls()))
    await s.start()
    await s.run_now("consolidate")
    await s.shutdown()
    await eng.close()
    eng = await open_engram(NoEmbedder())
    record = (await eng.job_records().job_runs())["consolidate"]
    assert record["status"] == "ok" and record["runs"] == 1 and record["stats"] == {"added": 2}


async def test_shutdown_cancels_a_running_job(keyword_engram: Engram) -> None:
    slow = Calls(delay=30)
    s = scheduler(keyword_engram, Job("slow", slow))
    await s.start()
    s.trigger("slow")
    await asyncio.sleep(0.05)
    started = time.monotonic()
    await s.shutdown()
    assert time.monotonic() - started < 2 and slow.active == 0
    assert (await s.status())["slow"]["status"] == "cancelled"
    assert s.trigger("slow") is None  # a stopped scheduler starts nothing


async def test_a_second_scheduler_for_the_same_bot_stops_the_first(keyword_engram: Engram) -> None:
    first, second = Calls(), Calls()
    a = scheduler(keyword_engram, Job("tick", first, timedelta(seconds=0.1), catch_up=False), key="bot")
    b = scheduler(keyword_engram, Job("tick", second, timedelta(seconds=0.1), catch_up=False), key="bot")
    await a.start()
    await b.start()  # a reload whose terminate() never came
    assert not a.running
    before = first.runs
    for _ in range(200):  # the second ticks twice (0.2 s on a quiet machine; a loaded one is slower)
        if second.runs >= 2:
            break
        await asyncio.sleep(0.05)
    await b.shutdown()
    assert first.runs == before and second.runs >= 2


def test_new_episodes_trigger_a_run_per_place_at_k() -> None:
    fired: list[int] = []
    trig = NewEpisodeTrigger(3, lambda: fired.append(1))
    assert [trig.saw("a") for _ in range(2)] == [False, False]
    assert [trig.saw("b") for _ in range(2)] == [False, False]
    assert trig.saw("a") and len(fired) == 1
    assert not trig.saw("a") and trig.saw("b") and len(fired) == 2


def test_a_job_name_is_registered_once() -> None:
    reg = JobRegistry()
    reg.add(Job("x", Calls()))
    with pytest.raises(ValueError):
        reg.add(Job("x", Calls()))
    with pytest.raises(KeyError, match="no job named 'y'"):
        reg.get("y")


async def test_totals_add_up_across_restarts_and_catch_up_can_wait(keyword_engram: Engram) -> None:
    job = Calls()
    for earlier_runs in (0, 1):
        s = scheduler(keyword_engram, Job("daily", job, timedelta(days=1)))
        await s.start(catch_up_delay=0.3)  # the plugin's catch-up waits for AstrBot's providers
        await asyncio.sleep(0.1)
        assert job.runs == earlier_runs
        await s.run_now("daily")
        await s.shutdown()  # the delayed catch-up never ran: nothing runs after shutdown
    record = (await keyword_engram.job_records().job_runs())["daily"]
    assert record["runs"] == 2 and record["totals"] == {"added": 4}


def test_the_scheduler_imports_only_the_core() -> None:
    import ast
    from pathlib import Path

    folder = Path(__file__).resolve().parents[1] / "scheduler"
    for path in folder.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 2:
                assert (node.module or "").split(".")[0] == "memory", path
            names = [a.name for a in node.names] if isinstance(node, ast.Import | ast.ImportFrom) else []
            assert not [n for n in names if n.startswith(("astrbot", "plugin"))], path


async def test_a_run_the_process_was_killed_in_runs_again_at_start(keyword_engram: Engram) -> None:
    """A kill leaves the run's record "running": it used to show so in /mem stats for good, and a
    daily or weekly job killed mid-run was not run again until its whole interval had passed."""
    weekly = Calls()
    records = keyword_engram.job_records()
    await records.save_job_run("merge", {"last_started": time.time() - 60, "status": "running", "runs": 3})
    s = scheduler(keyword_engram, Job("merge", weekly, timedelta(days=7)))
    assert (await s.status())["merge"]["status"] == "interrupted"  # nothing runs it now
    await s.start()
    await s.idle()
    await s.shutdown()
    assert weekly.runs == 1
    record = (await s.status())["merge"]
    assert record["status"] == "ok" and record["runs"] == 4


async def test_a_last_run_dated_in_the_future_counts_as_missed(keyword_engram: Engram) -> None:
    """The clock was a month ahead when the jobs last ran (a container's bad clock, since fixed): the
    daily and weekly jobs used to wait at every restart until that future date had passed too."""
    daily, weekly, hourly = Calls(), Calls(), Calls()
    now = time.time()
    records = keyword_engram.job_records()
    await records.save_job_run("fade", {"last_started": now + 30 * 86400, "status": "ok"})
    await records.save_job_run("merge", {"last_started": now + 30 * 86400, "status": "ok"})
    await records.save_job_run("hourly", {"last_started": now + 1, "status": "ok"})  # a second's slip: ran
    s = scheduler(keyword_engram, Job("fade", daily, timedelta(days=1)),
                  Job("merge", weekly, timedelta(days=7)), Job("hourly", hourly, timedelta(hours=1)))
    await s.start()
    await s.idle()
    await s.shutdown()
    assert (daily.runs, weekly.runs, hourly.runs) == (1, 1, 0)


async def test_a_clock_set_back_does_not_hold_the_timers_back(keyword_engram: Engram) -> None:
    """The hourly job was planned for 10:00; the clock then went back a day (an NTP fix). APScheduler
    plans on the wall clock, so the job used to wait a whole day more; now it runs within its interval."""
    from datetime import datetime

    s = scheduler(keyword_engram, Job("hourly", Calls(), timedelta(hours=1), catch_up=False))
    await s.start()
    try:
        assert s._aps is not None
        now = datetime.now(s._aps.timezone)
        s._aps.modify_job("hourly", next_run_time=now + timedelta(days=1, hours=1))  # planned before the jump
        s._aps.wakeup()
        await asyncio.sleep(0.05)
        planned = s._aps.get_job("hourly").next_run_time
        assert planned <= datetime.now(s._aps.timezone) + timedelta(hours=1)
    finally:
        await s.shutdown()


class _WallClock:
    """APScheduler's wall clock moved by hand (the event loop's monotonic clock is left alone)."""

    ahead = timedelta(0)

    @classmethod
    def patch(cls, monkeypatch: pytest.MonkeyPatch) -> None:
        from datetime import datetime

        from apscheduler.schedulers import base

        from astrbot_plugin_engram.scheduler import runner

        class Shifted(datetime):
            @classmethod
            def now(cls_, tz: Any = None) -> Any:  # noqa: N805
                return datetime.now(tz) + cls.ahead

        monkeypatch.setattr(base, "datetime", Shifted)
        monkeypatch.setattr(runner, "datetime", Shifted)


async def test_a_daily_job_runs_soon_after_a_laptop_wakes(keyword_engram: Engram,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A laptop slept two days: the event loop's clock (monotonic) stood still, so a timer set for
    one day still had most of a day to go, counted in time awake; the daily fading and the weekly
    merging ran days late (weeks, for a laptop awake a few hours a day). The timers look at the
    wall clock again every few minutes (here: 50 ms)."""
    _WallClock.patch(monkeypatch)
    daily = Calls()
    s = scheduler(keyword_engram, Job("fade", daily, timedelta(days=1), catch_up=False))
    s.recheck_seconds = 0.05
    await s.start()
    try:
        await asyncio.sleep(0.2)
        assert daily.runs == 0
        _WallClock.ahead = timedelta(days=2)  # woken up
        for _ in range(40):
            await asyncio.sleep(0.05)
            if daily.runs:
                break
        assert daily.runs == 1
    finally:
        _WallClock.ahead = timedelta(0)
        await s.shutdown()
