"""Log a failing dependency once per outage, not once per call, and say when it recovers."""

from __future__ import annotations

import logging


class Outage:
    """The first failure is a warning (or ``level``, with its traceback when ``trace``), repeats are
    debug lines, the recovery is one info line that says how many calls failed when more than one did."""

    def __init__(self, log: logging.Logger, failure: str, recovery: str, *, level: int = logging.WARNING,
                 trace: bool = False):
        self._log = log
        self._failure = failure  # a %-format with one argument: the error
        self._recovery = recovery
        self._level = level
        self._trace = trace
        self.active = False
        self.failures = 0  # in this outage

    def failed(self, error: BaseException) -> None:
        said = str(error) or type(error).__name__
        if self.active:
            self._log.debug(self._failure, said)
        else:
            self._log.log(self._level, self._failure, said, exc_info=error if self._trace else None)
        self.active = True
        self.failures += 1

    def recovered(self) -> None:
        if self.active:
            count = f" ({self.failures} failed meanwhile)" if self.failures > 1 else ""
            self._log.info(self._recovery + count)
        self.active = False
        self.failures = 0
