"""Engram's log lines (the core's included) through the host's logger, so they show where the user
reads logs (AstrBot's console and WebUI, with time and level). The core keeps plain ``logging``
loggers under ``engram``; only this adapter knows where their records go.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

CORE_LOGGER = "engram"  # the core's and the plugin's loggers are all below it
# The SQLite driver's DEBUG lines echo every statement it runs with its parameters: people's words, in
# AstrBot's log (and WebUI) whenever it runs at DEBUG. Held at INFO while the plugin runs.
DRIVER_LOGGER = "aiosqlite"


class ToHost(logging.Handler):
    """Hands each record to the ``target`` logger (or a proxy of one, as ``astrbot.api.logger`` is),
    under the target's name, keeping the file and line it was logged from."""

    def __init__(self, target: Any):
        super().__init__()
        self.target = target

    def emit(self, record: logging.LogRecord) -> None:
        try:
            if not self.target.isEnabledFor(record.levelno):
                return
            copy = logging.makeLogRecord(record.__dict__)
            copy.name = self.target.name  # AstrBot tags a record by its logger's name
            self.target.handle(copy)
        except Exception:  # a broken host logger must not break the caller
            self.handleError(record)


def attach(target: Any, name: str = CORE_LOGGER, level: int = logging.DEBUG) -> Callable[[], None]:
    """Send every record of ``name`` and its children to ``target`` instead of the root logger, and
    keep the SQLite driver's statement echo (``DRIVER_LOGGER``) out of every log; returns the function
    that undoes both (plugin ``terminate``)."""
    logger = logging.getLogger(name)
    handler = ToHost(target)
    before = (logger.propagate, logger.level)
    logger.addHandler(handler)
    logger.propagate = False
    if logger.level == logging.NOTSET or logger.level > level:
        logger.setLevel(level)
    driver = logging.getLogger(DRIVER_LOGGER)
    driver_before = driver.level
    if driver.level < logging.INFO:  # NOTSET too: it would follow a host logging at DEBUG
        driver.setLevel(logging.INFO)

    def detach() -> None:
        logger.removeHandler(handler)
        logger.propagate, _ = before
        logger.setLevel(before[1])
        driver.setLevel(driver_before)

    return detach
