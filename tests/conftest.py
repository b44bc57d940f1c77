"""Shared fixtures: deterministic fake embedders, temp stores, the fake OpenAI server."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import numpy as np
import pytest

from astrbot_plugin_engram.memory import Engram, NoEmbedder

from .fake_openai import FakeOpenAI, hash_vector


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


@pytest.fixture
async def engram(db_path: Path) -> AsyncIterator[Engram]:
    """A memory with the hash embedder, indexing on demand (call ``embed_pending``)."""
    e = await Engram.open(db_path, HashEmbedder(), background=False)
    yield e
    await e.close()


@pytest.fixture
async def keyword_engram(db_path: Path) -> AsyncIterator[Engram]:
    e = await Engram.open(db_path, NoEmbedder())
    yield e
    await e.close()


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI().start()
    yield server
    server.stop()
