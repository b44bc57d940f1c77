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
        ("WARNING", "backend failed: TimeoutError"), ("INFO", "backend works again")]
