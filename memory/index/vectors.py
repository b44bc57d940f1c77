"""The in-memory vector index: float32, normalised, one block per space (episodes) or scope (memories).

Blocks keep the scope filter cheap: a recall multiplies only the blocks its audience may see, so
the cost follows what one chat can see, not the size of the whole store.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..scopes import Visibility

STATUS_CODE = {"active": 1, "archived": 2, "superseded": 0}
_STATUS_NAME = {v: k for k, v in STATUS_CODE.items()}


@dataclass
class _Block:
    kind: str
    dim: int
    ids: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    live: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int8))  # 1 active, 2 archived, 0 dead
    mat: np.ndarray = field(init=False)
    n: int = 0
    count: list[int] = field(default_factory=lambda: [0, 0, 0])  # rows per live code

    def __post_init__(self) -> None:
        self.mat = np.zeros((0, self.dim), np.float32)

    def add(self, ids: np.ndarray, vecs: np.ndarray, live: np.ndarray) -> None:
        need = self.n + len(ids)
        if need > len(self.ids):
            self.reserve(max(need, len(self.ids) + len(self.ids) // 4, 64))  # +25 %: RSS over copy count
        self.mat[self.n:need] = vecs
        self.ids[self.n:need] = ids
        self.live[self.n:need] = live
        self.count = [c + int(x) for c, x in zip(self.count, np.bincount(live, minlength=3))]
        self.n = need

    def reserve(self, cap: int) -> None:
        if cap > len(self.ids):
            self.mat, self.ids, self.live = _grow(self.mat, cap), _grow(self.ids, cap), _grow(self.live, cap)

    def set_live(self, row: int, code: int) -> None:
        self.count[int(self.live[row])] -= 1
        self.count[code] += 1
        self.live[row] = code

    def hidden(self, include_archived: bool) -> int:
        """How many rows a search must skip."""
        return self.count[0] + (0 if include_archived else self.count[2])


def _grow(a: np.ndarray, cap: int) -> np.ndarray:
    out = np.zeros((cap, *a.shape[1:]), a.dtype)
    out[: len(a)] = a
    return out


def normalise(vecs: np.ndarray) -> np.ndarray:
    vecs = np.asarray(vecs, np.float32)
    norms = np.linalg.norm(vecs, axis=-1, keepdims=True)
    return vecs / np.where(norms == 0, 1, norms)


class _Locator:
    """Where each item of one kind lives: block number and row, in arrays indexed by id."""

    def __init__(self) -> None:
        self.block = np.full(0, -1, np.int32)
        self.row = np.zeros(0, np.int64)
        self.size = 0

    def get(self, item: int) -> tuple[int, int] | None:
        if 0 <= item < len(self.block) and self.block[item] >= 0:
            return int(self.block[item]), int(self.row[item])
        return None

    def known(self, items: np.ndarray) -> np.ndarray:
        return self.find(items)[0] >= 0

    def find(self, items: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Block numbers (-1: no vector) and rows of ``items``."""
        inside = np.flatnonzero((items >= 0) & (items < len(self.block)))
        blocks, rows = np.full(len(items), -1, np.int64), np.zeros(len(items), np.int64)
        blocks[inside], rows[inside] = self.block[items[inside]], self.row[items[inside]]
        return blocks, rows

    def put(self, items: np.ndarray, block: int, rows: np.ndarray) -> None:
        top = int(items.max()) + 1 if len(items) else 0
        if top > len(self.block):  # ids are the store's rowids: dense, so arrays by id stay small
            cap = max(top, len(self.block) + len(self.block) // 4, 1024)
            self.block = np.concatenate([self.block, np.full(cap - len(self.block), -1, np.int32)])
            self.row = _grow(self.row, cap)
        self.size += int(np.count_nonzero(self.block[items] < 0))  # callers pass distinct ids
        self.block[items], self.row[items] = block, rows


class VectorIndex:
    """Vectors of one embedding model, searchable by cosine under a visibility filter."""

    def __init__(self, model: str, dim: int | None = None):
        self.model = model
        self.dim = dim
        self._blocks: list[_Block] = []
        self._number: dict[tuple[str, str], int] = {}  # (kind, group) -> index into _blocks
        self._loc = {"e": _Locator(), "m": _Locator()}
        self._recent = _Recent(np.zeros(0, np.float32), np.zeros(0, np.int64), np.zeros(0, np.int64),
                               np.zeros(0, np.float32))

    def __len__(self) -> int:
        return self._loc["e"].size + self._loc["m"].size

    def _block(self, kind: str, group: str) -> tuple[int, _Block]:
        if self.dim is None:
            raise ValueError("the index has no dimension yet")
        b = self._number.get((kind, group))
        if b is None:
            b = self._number[(kind, group)] = len(self._blocks)
            self._blocks.append(_Block(kind, self.dim))
        return b, self._blocks[b]

    def add(self, kind: str, group: str, ids: list[int], vecs: np.ndarray, statuses: list[str]) -> None:
        """Add vectors of episodes (``kind`` 'e', group = space) or memories ('m', group = scope)."""
        self.add_many(kind, [group] * len(ids), ids, vecs, statuses)

    def add_many(self, kind: str, groups: Sequence[str], ids: Sequence[int], vecs: np.ndarray,
                 statuses: Sequence[str]) -> None:
        """``add`` for items of several groups at once (a page read at open spans hundreds of chats:
        one pass over it costs less than a call per chat). Each group's items keep their order."""
        if not len(ids):
            return
        vecs = normalise(vecs)
        if self.dim is None:
            self.dim = vecs.shape[1]
        if vecs.shape != (len(ids), self.dim):
            raise ValueError(f"expected vectors of shape ({len(ids)}, {self.dim}), got {vecs.shape}")
        loc = self._loc[kind]
        arr = np.asarray(ids, np.int64)
        if arr.min() < 0:
            raise ValueError("ids are the store's row ids: never negative")
        keep = np.zeros(len(arr), bool)
        keep[np.unique(arr, return_index=True)[1]] = True  # an id twice in one call: its first vector
        sel = np.flatnonzero(keep & ~loc.known(arr))
        if not len(sel):
            return
        codes = np.array([STATUS_CODE.get(statuses[i], 1) for i in sel.tolist()], np.int8)
        number: dict[str, int] = {}  # each group by first appearance: blocks are made in that order
        at = np.array([number.setdefault(groups[i], len(number)) for i in sel.tolist()], np.int64)
        order = np.argsort(at, kind="stable")
        bounds = np.searchsorted(at[order], np.arange(len(number) + 1))
        for g, group in enumerate(number):
            part = order[bounds[g] : bounds[g + 1]]
            b, block = self._block(kind, group)
            loc.put(arr[sel[part]], b, np.arange(block.n, block.n + len(part)))
            block.add(arr[sel[part]], vecs[sel[part]], codes[part])

    def reserve(self, kind: str, group: str, n: int) -> None:
        """Make room for ``n`` more vectors in one block (loading at open: no regrowth, no slack)."""
        if self.dim is None:
            raise ValueError("reserve needs the dimension")
        block = self._block(kind, group)[1]
        block.reserve(block.n + n)

    def set_status(self, kind: str, item: int, status: str) -> None:
        """Mark an item archived, active or dead (superseded / forgotten)."""
        where = self._loc[kind].get(item)
        if where:
            self._blocks[where[0]].set_live(where[1], STATUS_CODE.get(status, 0))

    def move(self, item: int, scope: str) -> None:
        """Re-file a memory under a new scope (its vector moves to that block)."""
        loc = self._loc["m"]
        where = loc.get(item)
        if not where:
            return
        block = self._blocks[where[0]]
        vec, live = block.mat[where[1]].copy(), int(block.live[where[1]])
        block.set_live(where[1], 0)
        loc.block[item] = -1
        loc.size -= 1
        self.add("m", scope, [item], vec[None, :], [_STATUS_NAME.get(live, "superseded")])

    def erase(self, kind: str, item: int) -> None:
        """Forget an item's vector (a hard-forgotten episode): its row is zeroed and never found again."""
        loc = self._loc[kind]
        where = loc.get(item)
        if not where:
            return
        block = self._blocks[where[0]]
        block.set_live(where[1], 0)
        block.mat[where[1]] = 0.0
        loc.block[item] = -1
        loc.size -= 1

    def has(self, kind: str, item: int) -> bool:
        return self._loc[kind].get(item) is not None

    def similarity(self, kind: str, item: int, query: np.ndarray) -> float | None:
        """Cosine between the query and one item, or None when the item has no vector yet."""
        return self.similarities([(kind, item)], query)[0]

    def similarities(self, items: Sequence[tuple[str, int]], query: np.ndarray) -> list[float | None]:
        """Cosines between the query and each (kind, id); None for an item without a vector yet."""
        if self.dim is None or query.shape[-1] != self.dim or not items:
            return [None] * len(items)
        q = normalise(query.reshape(-1))
        out = np.full(len(items), np.nan)
        for kind, loc in self._loc.items():
            at = np.array([n for n, it in enumerate(items) if it[0] == kind], np.int64)
            if len(at):
                blocks, rows = loc.find(np.array([items[n][1] for n in at.tolist()], np.int64))
                have = blocks >= 0
                out[at[have]] = self._cosines(blocks[have], rows[have], q)
        return [None if s != s else s for s in out.tolist()]  # NaN: no vector

    def _cosines(self, blocks: np.ndarray, rows: np.ndarray, q: np.ndarray) -> np.ndarray:
        """Cosines of rows: looked up where the last search scanned them with ``q``, else computed."""
        out = np.zeros(len(rows), np.float32)
        seen = np.zeros(len(rows), bool)
        if len(rows) and np.array_equal(self._recent.query, q):
            start = np.full(len(rows), -1, np.int64)
            old = np.flatnonzero(blocks < len(self._recent.start))  # blocks made since: not scanned
            start[old] = self._recent.start[blocks[old]]
            seen[old] = (start[old] >= 0) & (rows[old] < self._recent.size[blocks[old]])
            out[seen] = self._recent.sims[start[seen] + rows[seen]]
        for b in np.unique(blocks[~seen]).tolist():
            sel = ~seen & (blocks == b)
            out[sel] = np.einsum("ij,j->i", self._blocks[b].mat[rows[sel]], q)
        return out

    def search(self, query: np.ndarray, vis: Visibility, k: int, include_archived: bool = False
               ) -> list[tuple[str, int, float]]:
        """The ``k`` most similar visible items as (kind, id, cosine), best first."""
        if self.dim is None or query.shape[-1] != self.dim or k <= 0:
            return []
        q = normalise(query.reshape(-1))
        blocks = {b: self._blocks[b] for b in self._visible(vis)}
        # einsum, not BLAS: a threaded gemv waits on its other threads when the machine is busy
        # (1,600 x 384: 3 ms instead of 0.5 ms under load), and one thread suffices here.
        sims_of = {b: np.einsum("ij,j->i", block.mat[: block.n], q) for b, block in blocks.items()}
        self._recent = _Recent.of(q, sims_of, len(self._blocks))
        found = [_best(blocks[b], sims, k, include_archived) for b, sims in sims_of.items()]
        if not found:
            return []
        ids = np.concatenate([f[0] for f in found])
        sims = np.concatenate([f[1] for f in found])
        kinds = [block.kind for block, f in zip(blocks.values(), found) for _ in range(len(f[0]))]
        top = _top(sims, k).tolist()
        return [(kinds[t], i, s) for t, i, s in zip(top, ids[top].tolist(), sims[top].tolist())]

    def _visible(self, vis: Visibility) -> Iterator[int]:
        """Numbers of the non-empty blocks ``vis`` may see, looked up by name (not by a filter)."""
        for kind, groups in (("e", vis.episode_places), ("m", vis.memory_scopes)):
            if groups is None:
                yield from (b for b, block in enumerate(self._blocks) if block.kind == kind and block.n)
                continue
            for g in sorted(groups):
                b = self._number.get((kind, g))
                if b is not None and self._blocks[b].n:
                    yield b


@dataclass
class _Recent:
    """The last search's query and the cosines of every row it scanned (``sims``, block after
    block): recall asks its other candidates' cosines with the same query next, and looking them
    up costs less than gathering their rows again.
    """

    query: np.ndarray
    start: np.ndarray  # per block number: where its cosines begin in ``sims``, -1 if not scanned
    size: np.ndarray  # per block number: how many rows were scanned
    sims: np.ndarray

    @classmethod
    def of(cls, query: np.ndarray, sims_of: dict[int, np.ndarray], blocks: int) -> _Recent:
        start, size = np.full(blocks, -1, np.int64), np.zeros(blocks, np.int64)
        at = 0
        for b, sims in sims_of.items():
            start[b], size[b], at = at, len(sims), at + len(sims)
        flat = np.concatenate(list(sims_of.values())) if sims_of else np.zeros(0, np.float32)
        return cls(query, start, size, flat)


def _best(block: _Block, sims: np.ndarray, k: int, include_archived: bool) -> tuple[np.ndarray, np.ndarray]:
    """Ids and cosines of the ``k`` best visible rows of one block (``sims``: all its cosines)."""
    skip = block.hidden(include_archived)
    if skip * 4 > block.n:  # many hidden rows: mask them before ranking
        sims = np.where(_shown(block.live[: block.n], include_archived), sims, -np.inf)
        top = _top(sims, k)
        top = top[sims[top] > -np.inf]
    else:  # few (the usual case): rank k + skip rows and drop the hidden ones among them
        top = _top(sims, k + skip)
        top = top[_shown(block.live[top], include_archived)][:k]
    return block.ids[top], sims[top]


def _shown(live: np.ndarray, include_archived: bool) -> np.ndarray:
    return (live == 1) | (live == 2) if include_archived else live == 1


def _top(sims: np.ndarray, k: int) -> np.ndarray:
    if len(sims) <= k:
        return np.argsort(-sims, kind="stable")
    part = np.argpartition(-sims, k)[:k]
    return part[np.argsort(-sims[part], kind="stable")]
