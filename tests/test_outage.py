"""A failing dependency is logged once per outage, and its recovery once."""

from __future__ import annotations

import logging

import pytest

from astrbot_plugin_engram.memory.outage import Outage


def test_an_outage_warns_once_and_says_when_it_is_over(caplog: pytest.LogCaptureFixture) -> None:
    log = logging.getLogger("engram.test")
    outage = Outage(log, "backend failed: %s", "backend works again")
    with caplog.at_level(logging.INFO, logger="engram.test"):
        for _ in range(3):
            outage.failed(TimeoutError())
        outage.recovered()
        outage.recovered()
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("WARNING", "backend failed: TimeoutError"), ("INFO", "backend works again (3 failed meanwhile)")]


def test_an_outage_can_be_an_error_with_its_traceback(caplog: pytest.LogCaptureFixture) -> None:
    log = logging.getLogger("engram.test")
    outage = Outage(log, "recording failed: %s", "recording works again", level=logging.ERROR, trace=True)
    with caplog.at_level(logging.INFO, logger="engram.test"):
        try:
            raise OSError("disk gone")
        except OSError as e:
            outage.failed(e)
        outage.recovered()
    first, back = caplog.records
    assert (first.levelname, first.getMessage(), back.getMessage()) == (
        "ERROR", "recording failed: disk gone", "recording works again")
    assert first.exc_info is not None and str(first.exc_info[1]) == "disk gone"
