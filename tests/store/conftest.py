"""The Store contract runs on every backend: a ``store`` fixture per backend (SQLite today)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from astrbot_plugin_engram import memory
from astrbot_plugin_engram.memory import Store

Opener = Callable[..., Awaitable[Store]]


async def open_sqlite(where: Path, read_only: bool = False) -> Store:
    return await memory.open_store(where / "store.db", read_only=read_only)


BACKENDS: dict[str, Opener] = {"sqlite": open_sqlite}


@pytest.fixture(params=sorted(BACKENDS))
def open_store(request: pytest.FixtureRequest) -> Opener:
    """Opens the backend's store in a folder (``read_only=True``: an existing store, read-only)."""
    return BACKENDS[request.param]


@pytest.fixture
async def store(open_store: Opener, tmp_path: Path) -> AsyncIterator[Store]:
    s = await open_store(tmp_path)
    yield s
    await s.close()
