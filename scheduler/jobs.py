"""The jobs themselves: thin wrappers over the core's functions (tests call those directly)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from ..memory import Engram
from ..memory.backups import backups, take_backup
from ..memory.chat import ChatModel
from ..memory.consolidation import Consolidator, Report
from ..memory.metabolism.fading import FadeReport
from ..memory.metabolism.merging import MergeReport
from .registry import Job

CONSOLIDATE, FADE, MERGE, CHECK, BACKUP = "consolidate", "fade", "merge", "check", "backup"


def consolidation_job(consolidator: Callable[[], Awaitable[Consolidator]], every_minutes: float) -> Job:
    """Consolidation every ``every_minutes``; ``run(places=..., force=True)`` for ``/mem consolidate``."""

    async def run(places: Sequence[str] | None = None, force: bool = False, **_: Any) -> Report:
        return await (await consolidator()).run(places, force=force)

    return Job(CONSOLIDATE, run, timedelta(minutes=every_minutes) if every_minutes > 0 else None,
               summary="episodes become memories")


def fade_job(engram: Callable[[], Awaitable[Engram]]) -> Job:
    """Fading, daily: memories weaker than the threshold are archived."""

    async def run(**_: Any) -> FadeReport:
        return await (await engram()).fade()

    return Job(FADE, run, timedelta(days=1), summary="faded memories are archived")


def merge_job(engram: Callable[[], Awaitable[Engram]], chat: Callable[[], ChatModel]) -> Job:
    """Merging, weekly: near-duplicates of one scope the chat model calls the same become one."""

    async def run(**_: Any) -> MergeReport:
        return await (await engram()).merge_duplicates(chat())

    return Job(MERGE, run, timedelta(days=7), summary="duplicate memories are merged")


def check_job(engram: Callable[[], Awaitable[Engram]]) -> Job:
    """The store file checked for damage, weekly (the open skips it after a clean close): damage
    found fails the job with what it found, and nothing more is written to the file."""

    async def run(**_: Any) -> dict[str, int]:
        return await (await engram()).store.check()

    return Job(CHECK, run, timedelta(days=7), summary="the memory file is checked for damage")


def backup_job(store: Path, keep: int, url: str | None = None) -> Job:
    """A backup of the store, daily, in a thread (replies go on meanwhile): SQLite's online backup, or
    with ``url`` a snapshot of that PostgreSQL database as a SQLite store file; the newest ``keep`` kept."""

    async def run(**_: Any) -> dict[str, int]:
        await take_backup(store, keep=keep, url=url)
        return {"kept": len(backups(store))}

    return Job(BACKUP, run, timedelta(days=1), summary="the memory is backed up")
