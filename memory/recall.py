"""Hybrid recall, first half: the candidate pool (keyword and vector hits and their neighbours).

Their features and the ranking are in ``features.py``.

The audience's visibility is applied by the store and the vector index while candidates are
gathered (before ranking); every candidate is checked against it once more before it is returned.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from .model import Episode, Hit, Memory, aware
from .scopes import Visibility
from .sqlite_store import SQLiteStore
from .text import MONTH_WORDS, query_words
from .vectors import VectorIndex


@dataclass(frozen=True)
class RecallSettings:
    """How wide recall looks. The defaults keep ~90 % of the evidence in the pool on LoCoMo."""

    pool: int = 35  # candidates taken from each route (50 gave the same LoCoMo recall, 30 less)
    seeds: int = 10  # best hits of each route whose neighbours join the pool
    radius: int = 2  # how many places either side count as neighbours
    recency_days: float = 30.0  # the recency feature halves every this many days


@dataclass
class Candidate:
    kind: str  # 'e' or 'm'
    id: int
    item: Episode | Memory | None = None
    kw: float = 0.0
    cos: float | None = None
    via: set[str] = field(default_factory=set)
    words: frozenset[str] | None = None  # its index words, when the keyword index had them

    @property
    def text(self) -> str:
        if isinstance(self.item, Episode):
            return self.item.content
        return self.item.text if self.item else ""


async def gather(store: SQLiteStore, index: VectorIndex | None, query: str, qvec: np.ndarray | None,
                 vis: Visibility, s: RecallSettings, include_archived: bool) -> list[Candidate]:
    """The candidate pool: keyword hits, vector hits, and the neighbours of the best of each."""
    qw = query_words(query)
    pool: dict[tuple[str, int], Candidate] = {}

    def cand(kind: str, i: int) -> Candidate:
        return pool.setdefault((kind, i), Candidate(kind, i))

    for i, bm in await store.keyword_episodes(qw, vis, s.pool):
        c = cand("e", i)
        c.kw, c.via = bm, c.via | {"kw"}
    for i, bm in await store.keyword_memories(qw, vis, s.pool, include_archived):
        c = cand("m", i)
        c.kw, c.via = bm, c.via | {"kw"}
    if qvec is not None and index is not None:
        for kind, i, sim in index.search(qvec, vis, s.pool, include_archived):
            c = cand(kind, i)
            c.cos, c.via = sim, c.via | {"vec"}
    await _load(store, pool)
    seeds = [c for c in best(pool.values(), "kw", s.seeds) + best(pool.values(), "cos", s.seeds)
             if isinstance(c.item, Episode)]
    seed_eps = {c.id: c.item for c in seeds if isinstance(c.item, Episode)}
    for i, (ep, ws) in (await store.neighbours(seed_eps.values(), s.radius)).items():
        c = cand("e", i)
        if c.item is None:
            c.item, c.words = ep, index_word_set(ep, ws)
        c.via = c.via | {"near"}
    if qvec is not None and index is not None:
        todo = [c for c in pool.values() if c.cos is None]
        for c, cos in zip(todo, index.similarities([(c.kind, c.id) for c in todo], qvec)):
            c.cos = cos
    return [c for c in pool.values() if c.item is not None and _visible(vis, c.item, include_archived)]


def best(cands: object, attr: str, n: int) -> list[Candidate]:
    have = [c for c in cands if getattr(c, attr) is not None and getattr(c, attr) > 0]  # type: ignore[attr-defined]
    return sorted(have, key=lambda c: -getattr(c, attr))[:n]


async def _load(store: SQLiteStore, pool: dict[tuple[str, int], Candidate]) -> None:
    eps = await store.episodes_and_words([i for (k, i) in pool if k == "e"])
    # Sources are read for the memories recall returns (``with_sources``), not for every candidate.
    mems = await store.memories_and_words([i for (k, i) in pool if k == "m"])
    for (k, i), c in pool.items():
        if k == "e":
            ep, ws = eps.get(i, (None, []))
            c.item, c.words = ep, index_word_set(ep, ws) if ep else None
        elif i in mems:
            c.item, mws = mems[i]
            c.words = None if mws is None else frozenset(mws)


async def with_sources(store: SQLiteStore, hits: list[Hit]) -> list[Hit]:
    """The hits, each memory's ``sources`` filled in."""
    found = await store.get_memories([h.id for h in hits if h.kind == "memory"])
    return [replace(h, item=found.get(h.id, h.item)) if h.kind == "memory" else h for h in hits]


def index_word_set(ep: Episode, ws: list[str]) -> frozenset[str] | None:
    """An episode's words as the keyword index holds them (tokenising ~200 texts again took ~20 ms).

    The index holds the text's words, the speaker's, then the month and year (2 words); None when
    they do not look like that, and the features tokenise the text themselves.
    """
    t = aware(ep.time)
    if len(ws) >= 2 and ws[-1] == str(t.year) and ws[-2] == MONTH_WORDS[t.month - 1]:
        return frozenset(ws[:-2])
    return None


def _visible(vis: Visibility, item: Episode | Memory, include_archived: bool) -> bool:
    if isinstance(item, Episode):
        return vis.sees_episode(item.space)
    ok_status = item.status == "active" or (include_archived and item.status == "archived")
    return ok_status and vis.sees_memory(item.scope)
