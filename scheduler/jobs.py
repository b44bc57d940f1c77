"""The jobs themselves: thin wrappers over the core's functions (tests call those directly)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import timedelta
from typing import Any

from ..memory.consolidation import Consolidator, Report
from .registry import Job

CONSOLIDATE = "consolidate"


def consolidation_job(consolidator: Callable[[], Awaitable[Consolidator]], every_minutes: float) -> Job:
    """Consolidation every ``every_minutes``; ``run(places=..., force=True)`` for ``/mem consolidate``."""

    async def run(places: Sequence[str] | None = None, force: bool = False, **_: Any) -> Report:
        return await (await consolidator()).run(places, force=force)

    return Job(CONSOLIDATE, run, timedelta(minutes=every_minutes) if every_minutes > 0 else None,
               summary="episodes become memories")
