"""A fresh install's log says what happened once (issue 27): one line for the store's tables, not
one per migration; no "missed its run while stopped" for a job that never ran; and a job whose model
calls all failed (the model down) is recorded as failed, not as ``ok`` (``成功``)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from astrbot_plugin_engram.memory import Engram, NoEmbedder
from astrbot_plugin_engram.plugin.commands.jobs import job_line
from astrbot_plugin_engram.scheduler import Job

from .test_scheduler import Calls, scheduler


async def test_a_new_store_says_it_made_its_tables_in_one_line(tmp_path: Path,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, "engram"):
        e = await Engram.open(tmp_path / "engram.db", NoEmbedder())
        await e.close()
        again = await Engram.open(tmp_path / "engram.db", NoEmbedder())
        await again.close()
    said = [r.getMessage() for r in caplog.records if "migration" in r.getMessage()]
    assert len(said) == 1 and said[0].startswith("created the store's tables ("), said


async def test_a_job_that_never_ran_is_not_said_to_have_missed_a_run(
        keyword_engram: Engram, caplog: pytest.LogCaptureFixture) -> None:
    daily = Calls()
    s = scheduler(keyword_engram, Job("fade", daily, timedelta(days=1)))
    with caplog.at_level(logging.DEBUG, "engram"):
        await s.start()
        await s.idle()
        await s.shutdown()
    assert daily.runs == 1  # it still runs once at the first start
    assert not [r for r in caplog.records if "missed its run" in r.getMessage()]
    assert not [r for r in caplog.records if r.levelno >= logging.INFO and "fade" in r.getMessage()]


@dataclass
class DownReport:
    """What a consolidation returns when every model call failed: nothing added, failures counted."""

    added: int = 0
    updated: int = 0
    failed: dict[str, int] = field(default_factory=lambda: {"unavailable": 2})
    error: str = "no chat provider answers"

    def stats(self) -> dict[str, Any]:
        return {"added": self.added, "failed.unavailable": 2}


async def test_a_run_whose_model_calls_all_failed_shows_as_failed(keyword_engram: Engram) -> None:
    async def down(**_: Any) -> DownReport:
        return DownReport()

    s = scheduler(keyword_engram, Job("consolidate", down, None))
    await s.run_now("consolidate")
    record = (await s.status())["consolidate"]
    assert record["status"] == "failed" and record["failures"] == 1
    assert "no chat provider answers" in record["error"]
    line = job_line("consolidate", record, None, "zh")
    assert "（失败：对话模型出错了）" in line and "成功" not in line, line
    assert "(failed: ChatError: no chat provider answers); 1 run, 1 failed" in job_line(
        "consolidate", record, None, "en")

    async def half(**_: Any) -> DownReport:
        return DownReport(added=1)  # some of its work done: a run that went, with its failures counted

    s2 = scheduler(keyword_engram, Job("consolidate", half, None), key="other")
    await s2.run_now("consolidate")
    assert (await s2.status())["consolidate"]["status"] == "ok"
