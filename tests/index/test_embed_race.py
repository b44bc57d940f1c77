"""A line forgotten while the indexer is embedding it leaves no vector behind (found by the kill
harness, tests/kill_harness.py: the vectors and their cursor disagreed after a kill)."""

from __future__ import annotations

import asyncio
import sqlite3
from contextlib import closing
from pathlib import Path

import numpy as np

from astrbot_plugin_engram.memory import Audience, Engram, Episode

from ..conftest import HashEmbedder


class HeldEmbedder(HashEmbedder):
    """Embeds only once the test lets it, saying when it started (the indexer reads rows, then waits)."""

    def __init__(self) -> None:
        super().__init__()
        self.started = asyncio.Event()
        self.go = asyncio.Event()

    async def embed(self, texts: list[str], kind: str = "passage") -> np.ndarray:
        self.started.set()
        await self.go.wait()
        return await super().embed(texts, kind)


async def test_a_line_forgotten_mid_embedding_gets_no_vector(db_path: Path) -> None:
    """Before: the indexer stored the vector of the forgotten line with its batch: it stayed in the
    file (and in the index), a trace of what the owner was told was erased."""
    embedder = HeldEmbedder()
    eng = await Engram.open(db_path, embedder, background=False)
    try:
        ids = await eng.record_many([Episode("qq:group:1", "Mallory's secret plan", actor="qq:mallory",
                                             actor_name="Mallory"),
                                     Episode("qq:group:1", "Bob likes tea", actor="qq:bob",
                                             actor_name="Bob")])
        embedding = asyncio.create_task(eng.embed_pending())
        await embedder.started.wait()  # the batch holding both lines was read
        plan = await eng.forget_person("qq:mallory")
        assert plan.episodes == [ids[0]]
        embedder.go.set()
        await embedding
        hits = await eng.recall("secret plan", Audience("qq:group:1"), k=5)
        assert ids[0] not in [h.id for h in hits if h.kind == "episode"]
    finally:
        await eng.close()
    with closing(sqlite3.connect(db_path)) as db:
        have = {i for (i,) in db.execute("SELECT item FROM vectors WHERE kind = 'e'")}
        cursor = db.execute("SELECT value FROM cursors WHERE name = 'vectors:hash-32:e'").fetchone()[0]
    assert have == {ids[1]}  # Bob's line has its vector, the forgotten one none
    assert cursor == ids[1]  # and the cursor passed both: nothing is embedded again

