"""The job registry: every background job (consolidation, fading, merging, the check, the diary and
the self-image) is a name, an async function and how often it runs; the plugin adds each one by name
(``plugin/jobs``), nothing registers itself."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

Run = Callable[..., Awaitable[Any]]  # returns stats: a dict of counts, or an object with .stats()


@dataclass(frozen=True)
class Job:
    """A named job. ``every``: its interval (None: only when triggered or run by hand);
    ``catch_up``: run once at start when its last run is older than ``every`` (missed while down)."""

    name: str
    run: Run
    every: timedelta | None = None
    catch_up: bool = True
    summary: str = ""


class JobRegistry:
    """Jobs by name, in the order they were added."""

    def __init__(self) -> None:
        self._jobs: dict[str, Job] = {}

    def add(self, job: Job) -> Job:
        if job.name in self._jobs:
            raise ValueError(f"a job named {job.name!r} is already registered")
        self._jobs[job.name] = job
        return job

    def get(self, name: str) -> Job:
        try:
            return self._jobs[name]
        except KeyError:
            raise KeyError(f"no job named {name!r}; jobs: {', '.join(self._jobs) or 'none'}") from None

    def __iter__(self) -> Iterator[Job]:
        return iter(list(self._jobs.values()))

    def __len__(self) -> int:
        return len(self._jobs)
