"""The core's log lines go to the host's logger while attached, and back to plain logging after."""

from __future__ import annotations

import logging

from astrbot_plugin_engram.plugin.logs import attach


class Catch(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def test_core_records_reach_the_host_logger_with_their_origin_and_only_while_attached() -> None:
    host = logging.getLogger("host.plugin.engram-test")
    host.propagate, host.level = False, logging.INFO
    caught = Catch()
    host.addHandler(caught)
    core = logging.getLogger("engram.store")
    detach = attach(host)
    try:
        core.warning("disk %s", "slow")
        core.debug("below the host's level")
    finally:
        detach()
    core.warning("after detaching")
    assert [(r.name, r.levelname, r.getMessage()) for r in caught.records] == [
        ("host.plugin.engram-test", "WARNING", "disk slow")]
    assert caught.records[0].pathname == __file__  # where it was logged, not the forwarding handler
    assert logging.getLogger("engram").propagate and not logging.getLogger("engram").handlers
