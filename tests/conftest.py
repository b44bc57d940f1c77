"""Shared fixtures: deterministic fake embedders, temp stores, the fake OpenAI server."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Awaitable, Iterator
from pathlib import Path
from typing import Protocol

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

from astrbot_plugin_engram.memory import Embedder, Engram, NoEmbedder

from . import _network_guard
from .fake_openai import FakeOpenAI, hash_vector

# property tests check what holds, not how fast: on a loaded machine (CI beside other jobs) hypothesis's
# per-example deadline and its "input generation is slow" check failed a property that held
settings.register_profile("engram", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("engram")


@pytest.fixture(autouse=True)
def only_loopback() -> Iterator[None]:
    """Fails a test that reached for anything but 127.0.0.1 (``_network_guard``)."""
    before = len(_network_guard.attempts)
    yield
    tried = _network_guard.ours(_network_guard.attempts[before:])
    assert not tried, f"this test reached beyond 127.0.0.1: {tried}"


class HashEmbedder:
    """A deterministic bag-of-words embedder for unit tests (texts sharing words are similar)."""

    def __init__(self, dim: int = 32, name: str = "hash-32"):
        self.dim = dim
        self.name = name
        self.calls = 0

    async def embed(self, texts: list[str], kind: str = "passage") -> np.ndarray:
        self.calls += 1
        return np.asarray([hash_vector(t, self.dim) for t in texts], np.float32)


def stable_id(text: str) -> int:
    return int(hashlib.md5(text.encode()).hexdigest()[:8], 16)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "engram.db"


class EngramOpener(Protocol):
    def __call__(self, embedder: Embedder | None = None, *, background: bool = False,
                 path: Path | None = None) -> Awaitable[Engram]: ...


@pytest.fixture
async def open_engram(db_path: Path) -> AsyncIterator[EngramOpener]:
    """Opens a store (at ``db_path`` unless told; the hash embedder and indexing on demand unless
    told), again after a test closed it; every one opened is closed at the end, also when an
    assertion failed (an open store's threads would keep pytest from exiting)."""
    opened: list[Engram] = []

    async def open_(embedder: Embedder | None = None, *, background: bool = False,
                    path: Path | None = None) -> Engram:
        opened.append(await Engram.open(path or db_path, HashEmbedder() if embedder is None else embedder,
                                        background=background))
        return opened[-1]

    yield open_
    for e in opened:
        await e.close()  # closing again a store the test closed does nothing


@pytest.fixture
async def engram(open_engram: EngramOpener) -> Engram:
    """A memory with the hash embedder, indexing on demand (call ``embed_pending``)."""
    return await open_engram()


@pytest.fixture
async def keyword_engram(open_engram: EngramOpener) -> Engram:
    """A memory without an embedder (keyword recall only), its indexer running."""
    return await open_engram(NoEmbedder(), background=True)


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI().start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def postgres_server():  # type: ignore[no-untyped-def]
    """A throwaway PostgreSQL server for the session (``tests/postgres_server.py``), started on first use."""
    from .postgres_server import Server

    server = Server().start()
    try:
        yield server
    finally:
        server.stop()
