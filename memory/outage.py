"""Log a failing dependency once per outage, not once per call, and say when it recovers."""

from __future__ import annotations

import logging


class Outage:
    """The first failure is a warning, repeats are debug lines, the recovery is one info line."""

    def __init__(self, log: logging.Logger, failure: str, recovery: str):
        self._log = log
        self._failure = failure  # a %-format with one argument: the error
        self._recovery = recovery
        self.active = False

    def failed(self, error: BaseException) -> None:
        (self._log.debug if self.active else self._log.warning)(
            self._failure, str(error) or type(error).__name__)
        self.active = True

    def recovered(self) -> None:
        if self.active:
            self._log.info(self._recovery)
        self.active = False
