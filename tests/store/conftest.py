"""The Store contract runs on every backend: a ``store`` fixture per backend (SQLite, and PostgreSQL on
a throwaway server started for the session: ``tests/postgres_server.py``). One module
a role of ``memory/store`` (``test_writes``, ``test_recall_reads``, ``test_progress_reads``,
``test_people_reads``, ``test_day_reads``, ``test_metabolism``, ``test_forgetting``,
``test_browse_reads``, ``test_job_runs``, ``test_ranking_state``, ``test_store``), so a new backend can
pass them a role at a time; ``test_sqlite*``, ``test_summaries``, ``test_postings_cache``,
``test_log_copier`` and ``test_insert_rows`` are SQLite's own."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from astrbot_plugin_engram import memory
from astrbot_plugin_engram.memory import Store

Opener = Callable[..., Awaitable[Store]]


async def open_sqlite(where: Path, read_only: bool = False) -> Store:
    return await memory.open_store(where / "store.db", read_only=read_only)


class PostgresOpener:
    """Each test folder's own database on the session's server (made at its first open, empty)."""

    def __init__(self, server: Any):
        self.server = server
        self.databases: dict[Path, str] = {}

    async def __call__(self, where: Path, read_only: bool = False) -> Store:
        if where not in self.databases:
            self.databases[where] = self.server.fresh_database()
        return await memory.open_store(self.databases[where], folder=where, read_only=read_only)


BACKENDS = ("sqlite", "postgres")


@pytest.fixture(params=BACKENDS)
def open_store(request: pytest.FixtureRequest) -> Opener:
    """Opens the backend's store in a folder (``read_only=True``: an existing store, read-only)."""
    if request.param == "postgres":
        return PostgresOpener(request.getfixturevalue("postgres_server"))
    return open_sqlite


@pytest.fixture
async def store(open_store: Opener, tmp_path: Path) -> AsyncIterator[Store]:
    s = await open_store(tmp_path)
    yield s
    await s.close()
