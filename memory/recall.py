"""Hybrid recall, first half: the candidate pool (keyword and vector hits and their neighbours).

Their features and the ranking are in ``features.py``.

The audience's visibility is applied by the store and the vector index while candidates are
gathered (before ranking); every candidate is checked against it once more before it is returned.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .model import Episode, Hit, Memory
from .rows import E_CONTENT, E_SPACE, M_SCOPE, M_STATUS, M_TEXT, episode_row, memory_row, ts, tz_minutes
from .scopes import Visibility
from .sqlite_store import SQLiteStore
from .text import query_words
from .vectors import VectorIndex


@dataclass(frozen=True)
class RecallSettings:
    """How wide recall looks. The defaults keep ~90 % of the evidence in the pool on LoCoMo."""

    pool: int = 35  # candidates taken from each route (50 gave the same LoCoMo recall, 30 less)
    seeds: int = 10  # best hits of each route whose neighbours join the pool
    radius: int = 2  # how many places either side count as neighbours
    recency_days: float = 30.0  # the recency feature halves every this many days


@dataclass
class Pool:
    """The candidates as parallel lists, one entry each (an object per candidate cost more than
    its features); items are built from their rows only for the hits returned."""

    kinds: list[str] = field(default_factory=list)  # 'e' or 'm'
    ids: list[int] = field(default_factory=list)
    kw: list[float] = field(default_factory=list)  # BM25, 0 when the keyword route missed it
    cos: list[float | None] = field(default_factory=list)  # None: no vector
    both: list[bool] = field(default_factory=list)  # found by the keyword and the vector route
    rows: list[Sequence[Any]] = field(default_factory=list)  # ``rows.E_*`` / ``rows.M_*`` columns
    marks: dict[str, str | None] = field(default_factory=dict)  # each space's index mark (``rows.unkey``)

    def __len__(self) -> int:
        return len(self.ids)

    def add(self, kind: str, row: Sequence[Any], kw: float = 0.0, cos: float | None = None,
            both: bool = False) -> None:
        self.kinds.append(kind)
        self.ids.append(row[0])
        self.kw.append(kw)
        self.cos.append(cos)
        self.both.append(both)
        self.rows.append(row)

    def add_item(self, item: Episode | Memory, kw: float = 0.0, cos: float | None = None,
                 both: bool = False) -> None:
        """Add a hand-made candidate (its words are worked out from its text)."""
        self.add("e" if isinstance(item, Episode) else "m", item_row(item), kw, cos, both)

    def text(self, j: int) -> str:
        return self.rows[j][E_CONTENT if self.kinds[j] == "e" else M_TEXT]  # type: ignore[no-any-return]

    def item(self, j: int) -> Episode | Memory:
        """Candidate ``j`` as the model's object (a memory's ``sources`` left empty)."""
        return episode_row(self.rows[j]) if self.kinds[j] == "e" else memory_row(self.rows[j], [])


def item_row(item: Episode | Memory) -> tuple[Any, ...]:
    """The candidate row of an item (words None: the features tokenise its text)."""
    if isinstance(item, Episode):
        t = item.time
        return (item.id, ts(t), tz_minutes(t) if t else 0, item.space, item.seq or 0, item.section or 0,
                item.source, item.actor, item.actor_name, item.kind, item.content,
                json.dumps(item.meta, ensure_ascii=False), None, -1)
    return (item.id, item.id, item.kind, item.text, item.scope, json.dumps(list(item.subjects)),
            item.importance, item.strength, ts(item.last_recalled), ts(item.created_at),
            ts(item.valid_from), ts(item.valid_to), item.status, item.supersedes, None)


async def gather(store: SQLiteStore, index: VectorIndex | None, query: str, qvec: np.ndarray | None,
                 vis: Visibility, s: RecallSettings, include_archived: bool) -> Pool:
    """The candidate pool: keyword hits, vector hits, and the neighbours of the best of each."""
    qw = query_words(query)
    found: dict[tuple[str, int], list[Any]] = {}  # (kind, id) -> [kw, cos, routes: 1 keyword | 2 vector]
    for i, bm in await store.keyword_episodes(qw, vis, s.pool):
        found[("e", i)] = [bm, None, 1]
    for i, bm in await store.keyword_memories(qw, vis, s.pool, include_archived):
        found[("m", i)] = [bm, None, 1]
    if qvec is not None and index is not None:
        for kind, i, sim in index.search(qvec, vis, s.pool, include_archived):
            f = found.setdefault((kind, i), [0.0, None, 0])
            f[1], f[2] = sim, f[2] | 2
    seeds = [i for k, i in _best(found, 0, s.seeds) + _best(found, 1, s.seeds) if k == "e"]
    rows = await _rows(store, found, list(dict.fromkeys(seeds)), s.radius)
    seen = _visible(vis, rows, include_archived)
    keep = [(key, v, rows[key]) for key, v in found.items() if key in seen]
    pool = Pool([key[0] for key, _, _ in keep], [key[1] for key, _, _ in keep], [v[0] for _, v, _ in keep],
                [v[1] for _, v, _ in keep], [v[2] == 3 for _, v, _ in keep], [row for _, _, row in keep],
                {sp: store.index_mark(sp) for sp in {row[E_SPACE] for k, _, row in keep if k[0] == "e"}})
    if qvec is not None and index is not None:
        todo = [j for j, c in enumerate(pool.cos) if c is None]
        for j, cos in zip(todo, index.similarities([(pool.kinds[j], pool.ids[j]) for j in todo], qvec)):
            pool.cos[j] = cos
    return pool


async def _rows(store: SQLiteStore, found: dict[tuple[str, int], list[Any]], seeds: list[int], radius: int
                ) -> dict[tuple[str, int], Sequence[Any]]:
    """The candidates' rows, and the seeds' neighbours' (added to ``found`` in the order they come)."""
    rows: dict[tuple[str, int], Sequence[Any]] = {}
    for r in await store.candidate_episodes([i for k, i in found if k == "e"], seeds, radius):
        key = ("e", r[0])
        rows[key] = r
        if key not in found:
            found[key] = [0.0, None, 0]
    for r in await store.candidate_memories([i for k, i in found if k == "m"]):
        rows[("m", r[0])] = r
    return rows


def _best(found: dict[tuple[str, int], list[Any]], at: int, n: int) -> list[tuple[str, int]]:
    """The ``n`` candidates with the highest positive score ``at`` (ties in pool order)."""
    have = [(key, v[at]) for key, v in found.items() if v[at] is not None and v[at] > 0]
    return [key for key, _ in sorted(have, key=lambda kv: -kv[1])[:n]]


async def with_sources(store: SQLiteStore, hits: list[Hit]) -> list[Hit]:
    """The hits, each memory's ``sources`` filled in."""
    found = await store.get_memories([h.id for h in hits if h.kind == "memory"])
    return [replace(h, item=found.get(h.id, h.item)) if h.kind == "memory" else h for h in hits]


def _visible(vis: Visibility, rows: dict[tuple[str, int], Sequence[Any]], include_archived: bool
             ) -> set[tuple[str, int]]:
    """The keys of the rows the audience may see (each episode's space asked once)."""
    spaces: dict[str, bool] = {}
    out = set()
    for key, r in rows.items():
        if key[0] == "e":
            ok = spaces.get(r[E_SPACE])
            if ok is None:
                ok = spaces[r[E_SPACE]] = vis.sees_episode(r[E_SPACE])
        else:
            status = r[M_STATUS]
            live = status == "active" or (include_archived and status == "archived")
            ok = live and vis.sees_memory(r[M_SCOPE])
        if ok:
            out.add(key)
    return out
