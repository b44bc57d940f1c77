"""The core's log lines go to the host's logger while attached, and back to plain logging after."""

from __future__ import annotations

import logging
from pathlib import Path

from astrbot_plugin_engram.memory import Engram, Episode
from astrbot_plugin_engram.plugin.logs import attach

from ..conftest import HashEmbedder
from ..marker import MARK


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


async def test_the_sqlite_drivers_debug_echo_of_what_people_said_is_in_no_log(tmp_path: Path) -> None:
    """aiosqlite logs every statement with its parameters at DEBUG ("executing functools.partial(...
    'my pin is 4417' ...)"): with a host logging everything at DEBUG, people's words were in its log.
    (AstrBot 4.29.3's LogManager holds that logger at WARNING itself, imported here by the plugin's
    conftest; a host that leaves it alone is the case tested.)"""
    root, caught, driver = logging.getLogger(), Catch(), logging.getLogger("aiosqlite")
    level, driver_level = root.level, driver.level
    driver.setLevel(logging.NOTSET)
    root.addHandler(caught)
    root.setLevel(logging.DEBUG)
    detach = attach(logging.getLogger("host.plugin.engram-test"))
    try:
        e = await Engram.open(tmp_path / "engram.db", HashEmbedder(), background=False)
        await e.record(Episode(place="qq:group:1", content=f"my locker code is {MARK}", actor="qq:1"))
        await e.close()
    finally:
        detach()
        root.removeHandler(caught)
        root.setLevel(level)
        after = driver.level
        driver.setLevel(driver_level)
    assert not [r for r in caught.records if MARK in r.getMessage()]
    assert after == logging.NOTSET  # as it was, once detached
