"""The in-memory vector index: int8 codes in faiss, one block per place (episodes) or scope (memories).

Blocks keep the scope filter cheap: a recall searches only the blocks its audience may see, so
the cost follows what one chat can see, not the size of the whole store.

Each vector is held as 384 int8 codes (one factor per model, ``store.int8_factor``, kept in the store
with the codes themselves: opening reads them as they are): a quarter of float32, so a million items
take ~0.4 GB, not 1.7 (issue 33). Every cosine — a search's, a candidate's, a moved
memory's — is worked out from the same codes, so an item's cosine does not depend on the route that
found it; against float32 it is off by ~5e-4. A block is scanned whole (faiss's scalar-quantizer
scan, one thread) until it holds ``APPROX_FROM`` vectors; past that it becomes an inverted file
(faiss's ``IndexIVFScalarQuantizer`` over the same codes, its lists from faiss's k-means): a search
scans the ``nlist // 10`` lists nearest the query. At 16k vectors the whole scan takes ~0.5 ms, at
200k ~10 ms on an idle core and several times that on a busy one; the inverted file, ~0.5 ms.
"""

from __future__ import annotations

import logging
import math
import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass, field

import faiss
import numpy as np

from ..scopes import Visibility
from ..store import CodesPage, int8_codes, int8_factor, normalise

STATUS_CODE = {"active": 1, "archived": 2, "superseded": 0}
_STATUS_NAME = {v: k for k, v in STATUS_CODE.items()}
APPROX_FROM = 50_000  # a block this large is searched through an inverted file (0: every block)
_DIRECT = faiss.ScalarQuantizer.QT_8bit_direct_signed  # each code is the int8 value itself
_IP = faiss.METRIC_INNER_PRODUCT
BUILD_BESIDE = True  # inverted files made on a thread, the block scanned whole meanwhile (False: at once)
_builder: ThreadPoolExecutor | None = None  # one file at a time: the other core stays the event loop's

log = logging.getLogger("engram")


@contextmanager
def _one_thread() -> Iterator[None]:
    """faiss on one thread for this call (the setting is the calling thread's own, put back after):
    with its default threads a single query's scan waits on the others when the machine is busy
    (200k vectors: 77 ms instead of 10 on 2 shared cores)."""
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(before)


@dataclass
class _Block:
    """One place's (or scope's) vectors: ids, statuses and codes by row, in the order they came.

    The codes sit in a numpy array (``raw``, each stored as value + 128, faiss's layout) until the
    block is first searched: then they move into faiss's flat index (one copy, no re-encoding), or
    its inverted file past ``APPROX_FROM``. Loading at open only fills arrays; of a thousand
    places, those never asked about never cost faiss anything.
    """

    kind: str
    dim: int
    ids: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    live: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int8))  # 1 active, 2 archived, 0 dead
    n: int = 0
    count: list[int] = field(default_factory=lambda: [0, 0, 0])  # rows per live code
    raw: np.ndarray | None = field(init=False)  # codes + 128 (uint8), before the first search
    flat: faiss.IndexScalarQuantizer | None = None  # the codes, scanned whole
    ivf: faiss.IndexIVFScalarQuantizer | None = None  # or the codes in an inverted file
    nprobe: int = 1
    building: Future[faiss.IndexIVFScalarQuantizer] | None = None  # the inverted file being made
    built_from: int = 0  # rows it is made of (those added since are added when it is put in place)
    failed: bool = False  # its making failed: scanned whole from then on

    def __post_init__(self) -> None:
        self.raw = np.zeros((0, self.dim), np.uint8)

    def add(self, ids: np.ndarray, codes: np.ndarray, live: np.ndarray) -> None:
        """Add rows: ``codes`` as int8 values (``store.int8_codes``)."""
        need = self.n + len(ids)
        if need > len(self.ids):
            self.reserve(max(need, len(self.ids) + len(self.ids) // 4, 64))  # +25 %: RSS over copy count
        if self.raw is not None:  # value + 128 is the value's byte with its top bit flipped
            np.bitwise_xor(codes.view(np.uint8), 128, out=self.raw[self.n:need])
        elif self.ivf is not None:
            self.ivf.add_with_ids(codes.astype(np.float32), np.arange(self.n, need, dtype=np.int64))
        else:
            assert self.flat is not None
            self.flat.add(codes.astype(np.float32))  # rows are positions: row r is the r-th added
        self.ids[self.n:need] = ids
        self.live[self.n:need] = live
        if len(live) and live[0] == 1 and bool((live == 1).all()):  # the usual case (a load's episodes)
            self.count[1] += len(live)
        else:
            self.count = [c + int(x) for c, x in zip(self.count, np.bincount(live, minlength=3))]
        self.n = need

    def reserve(self, cap: int) -> None:
        if cap > len(self.ids):
            self.ids, self.live = _grow(self.ids, cap), _grow(self.live, cap)
            if self.raw is not None:
                self.raw = _grow(self.raw, cap)

    def set_live(self, row: int, code: int) -> None:
        self.count[int(self.live[row])] -= 1
        self.count[code] += 1
        self.live[row] = code

    def hidden(self, include_archived: bool) -> int:
        """How many rows a search must skip."""
        return self.count[0] + (0 if include_archived else self.count[2])

    def codes(self, rows: np.ndarray) -> np.ndarray:
        """The codes of ``rows`` as float32 (zeros for an erased row)."""
        if self.ivf is not None:
            return self.ivf.reconstruct_batch(rows) if len(rows) else np.zeros((0, self.dim), np.float32)
        return _floats(self._stored()[rows])

    def _stored(self) -> np.ndarray:
        """The codes + 128 of every row, in place: the array, or the flat index's (valid until the
        next add)."""
        if self.raw is not None:
            return self.raw[: self.n]
        assert self.flat is not None
        return faiss.rev_swig_ptr(self.flat.codes.data(), self.n * self.dim).reshape(self.n, self.dim)

    def erase(self, row: int) -> None:
        """Forget a row's vector in memory (hard forgetting): its codes are gone, not just hidden (an
        inverted file being made of a copy of them gets this row removed before its first search)."""
        if self.building is not None and self.building.done():
            self._swap_in()
        if self.ivf is not None:
            self.ivf.remove_ids(faiss.IDSelectorArray(np.array([row], np.int64)))
        else:
            self._stored()[row] = 128  # the value 0

    def ready(self) -> None:
        """The codes into faiss, before a search: the flat index (its code array filled from ours in
        one copy), and past ``APPROX_FROM`` rows an inverted file, made beside the event loop
        (``BUILD_BESIDE``) and put in place at the first search after it is done."""
        if self.building is not None and self.building.done():
            self._swap_in()
        if self.n < APPROX_FROM or self.ivf is not None or self.failed:
            self._flatten()
        elif not BUILD_BESIDE:
            self.approximate()
        elif self.building is None:  # the builder gets the codes the flat index no longer needs, or a copy
            stored = self.raw[: self.n] if self.raw is not None else self._stored().copy()
            self._flatten()
            self.building, self.built_from = _build_beside(stored), self.n

    def _flatten(self) -> None:
        if self.raw is not None:
            flat = faiss.IndexScalarQuantizer(self.dim, _DIRECT, _IP)
            flat.codes.resize(self.n * self.dim)
            faiss.rev_swig_ptr(flat.codes.data(), self.n * self.dim)[:] = self.raw[: self.n].reshape(-1)
            flat.ntotal = self.n
            self.flat, self.raw = flat, None

    def approximate(self) -> None:
        """Move the codes into an inverted file now, on this thread (a build beside it is waited for)."""
        if self.building is not None:
            wait([self.building])
            self._swap_in()
        if self.ivf is not None or not self.n:
            return
        self.building, self.built_from = Future(), self.n
        self.building.set_result(_inverted_file(self._stored()))
        self._swap_in()

    def _swap_in(self) -> None:
        """The finished inverted file takes the flat index's place: the rows added since its build
        began are added to it and every dead row (forgotten, superseded) is removed from it, so it
        holds exactly what it would had it been made now. A failed build leaves the block scanned
        whole (exact) for good."""
        assert self.building is not None
        done, self.building = self.building, None
        try:
            ivf = done.result()
        except Exception:
            log.exception("an inverted file could not be made; the place's vectors are scanned whole")
            self.failed = True
            return
        for start in range(self.built_from, self.n, 16_384):
            rows = np.arange(start, min(self.n, start + 16_384), dtype=np.int64)
            ivf.add_with_ids(self.codes(rows), rows)
        erased = np.flatnonzero(self.live[: self.n] == 0)
        if len(erased):  # dead rows (superseded, forgotten) are never searched: not carried over
            ivf.remove_ids(faiss.IDSelectorArray(erased))
        self.ivf, self.flat, self.raw = ivf, None, None
        self.nprobe = max(1, min(ivf.nlist, max(8, ivf.nlist // 10)))

    def search(self, q: np.ndarray, k: int, shown: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """Rows and inner products (of codes) of the ``k`` best rows; ``shown``: only these rows."""
        self.ready()
        params: faiss.SearchParameters
        if self.ivf is not None:
            params = faiss.SearchParametersIVF()
            params.nprobe = self.nprobe
        else:
            params = faiss.SearchParameters()
        bits = None
        if shown is not None:
            bits = np.packbits(shown, bitorder="little")
            params.sel = faiss.IDSelectorBitmap(self.n, faiss.swig_ptr(bits))
        index = self.ivf if self.ivf is not None else self.flat
        assert index is not None
        # faiss compares codes with codes: the query is made codes too, on its own scale (the
        # order of the rows does not depend on it); the callers work the cosines out again
        top = float(np.abs(q).max()) or 1.0
        codes = np.rint(q * (127.0 / top)).astype(np.float32)
        with _one_thread():
            sims, rows = index.search(codes[None, :], min(k, self.n), params=params)
        keep = rows[0] >= 0
        return rows[0][keep], sims[0][keep]


def _build_beside(stored: np.ndarray) -> Future[faiss.IndexIVFScalarQuantizer]:
    """``_inverted_file`` of a copy of a block's codes, on the builder's thread (faiss lets go of the
    GIL while it trains and adds)."""
    global _builder
    if _builder is None:
        _builder = ThreadPoolExecutor(1, thread_name_prefix="engram-ivf", initializer=_behind_the_bot)
    return _builder.submit(_on_one_thread, _inverted_file, stored)


BUILDER_NICE = 10  # how far behind the bot's own threads the builder runs (Linux: per thread)


def _behind_the_bot() -> None:
    """The builder's thread yields the cores to the event loop's (a reply's recall, the writer) on a
    busy host: its niceness raised, on Linux, where it is the thread's own (elsewhere it would be
    the whole process's: left as it is)."""
    if sys.platform.startswith("linux"):
        try:
            me = threading.get_native_id()
            os.setpriority(os.PRIO_PROCESS, me, min(19, os.getpriority(os.PRIO_PROCESS, me) + BUILDER_NICE))
        except OSError:  # not allowed here: the build runs all the same
            log.debug("the inverted files' thread keeps its priority")


def _on_one_thread(make: Callable[[np.ndarray], faiss.IndexIVFScalarQuantizer],
                   stored: np.ndarray) -> faiss.IndexIVFScalarQuantizer:
    with _one_thread():  # the other core stays the event loop's
        return make(stored)


def _inverted_file(stored: np.ndarray) -> faiss.IndexIVFScalarQuantizer:
    """An inverted file of ~sqrt(n) lists over a block's codes (+ 128, row r with id r), trained on a
    sample of them: the same file for the same codes, on any thread, with any number of threads."""
    n, dim = stored.shape
    nlist = max(1, min(4096, round(math.sqrt(n))))
    quantizer = faiss.IndexFlatIP(dim)
    ivf = faiss.IndexIVFScalarQuantizer(quantizer, dim, nlist, _DIRECT, _IP, False)
    ivf.cp.niter, ivf.cp.max_points_per_centroid = 8, 32
    ivf.cp.spherical = True  # cosines: centroids back on the sphere
    ivf.verbose = False
    rng = np.random.default_rng(n)  # the same lists for the same block at every open
    sample = np.sort(rng.choice(n, min(n, 32 * nlist), replace=False))
    ivf.train(_floats(stored[sample]))
    # rows by id: lookups and erasing (swig's class: no stub for mypy)
    ivf.set_direct_map_type(faiss.DirectMap.Hashtable)  # type: ignore[attr-defined]
    for start in range(0, n, 16_384):
        rows = np.arange(start, min(n, start + 16_384), dtype=np.int64)
        ivf.add_with_ids(_floats(stored[rows]), rows)
    return ivf


def _floats(stored: np.ndarray) -> np.ndarray:
    """Codes + 128 (uint8) as the int8 values in float32, as faiss takes them."""
    return (stored.astype(np.int16) - 128).astype(np.float32)


def _grow(a: np.ndarray, cap: int) -> np.ndarray:
    out = np.zeros((cap, *a.shape[1:]), a.dtype)
    out[: len(a)] = a
    return out


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

    def put(self, items: np.ndarray, block: int | np.ndarray, rows: np.ndarray) -> None:
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
        self.factor: float | None = None  # of the codes: the store's for this model (``use_factor``)

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
        """``add`` for items of several groups at once, as float vectors: made codes under the index's
        factor (the first vectors' own, ``store.int8_factor``, when it has none yet)."""
        if not len(ids):
            return
        vecs = normalise(vecs)
        if self.dim is None:
            self.dim = vecs.shape[1]
        if self.factor is None and vecs.shape[1] == self.dim:
            self.factor = int8_factor(vecs)
        if vecs.shape != (len(ids), self.dim):
            raise ValueError(f"expected vectors of shape ({len(ids)}, {self.dim}), got {vecs.shape}")
        assert self.factor is not None
        self.add_codes(kind, groups, ids, int8_codes(vecs, self.factor), statuses)

    def use_factor(self, factor: float) -> None:
        """The factor of the codes this index is handed (the store's for the model, before any)."""
        self.factor = factor

    def add_codes(self, kind: str, groups: Sequence[str], ids: Sequence[int], codes: np.ndarray,
                  statuses: Sequence[str]) -> None:
        """Add items of several groups at once by their int8 codes under ``factor`` (as the store
        keeps them); each group's items keep their order."""
        if not len(ids):
            return
        number: dict[str, int] = {}  # each group by first appearance: blocks are made in that order
        at = np.fromiter((number.setdefault(g, len(number)) for g in groups), np.int64, len(groups))
        names: dict[str, int] = {}
        state = np.fromiter((names.setdefault(s, len(names)) for s in statuses), np.int64, len(statuses))
        self.add_page(kind, CodesPage(np.asarray(ids, np.int64), codes, list(number), at, list(names), state))

    def add_page(self, kind: str, page: CodesPage) -> None:
        """Add a page of codes read from the store (``Store.vector_codes_page``): an id already held,
        or twice in the page, keeps its first codes."""
        if not len(page.ids):
            return
        if self.dim is None:
            self.dim = page.codes.shape[1]
        if page.codes.shape != (len(page.ids), self.dim):
            raise ValueError(f"expected codes of shape ({len(page.ids)}, {self.dim}), got {page.codes.shape}")
        loc, arr = self._loc[kind], page.ids
        if arr.min() < 0:
            raise ValueError("ids are the store's row ids: never negative")
        keep = np.zeros(len(arr), bool)
        keep[np.unique(arr, return_index=True)[1]] = True  # an id twice in one call: its first vector
        sel = np.flatnonzero(keep & ~loc.known(arr))
        if not len(sel):
            return
        live_of = np.array([STATUS_CODE.get(s, 1) for s in page.statuses], np.int8)
        # groups by first appearance among the rows kept: blocks are made in that order
        first = np.full(len(page.groups), len(sel), np.int64)
        np.minimum.at(first, page.group_at[sel], np.arange(len(sel)))
        rank = np.empty(len(page.groups), np.int64)
        rank[np.argsort(first, kind="stable")] = np.arange(len(page.groups))
        at = rank[page.group_at[sel]]
        order = np.argsort(at, kind="stable")  # the rows by block, each block's in page order
        bounds = np.searchsorted(at[order], np.arange(len(page.groups) + 1))
        taken = sel[order]
        items, codes = arr[taken], page.codes[taken]  # one gather: each block's rows are a slice
        lives = live_of[page.status_at[taken]] if len(live_of) else np.ones(len(taken), np.int8)
        blocks, rows = np.empty(len(taken), np.int32), np.empty(len(taken), np.int64)
        for g in np.argsort(first, kind="stable").tolist():
            lo, hi = int(bounds[rank[g]]), int(bounds[rank[g] + 1])
            if lo == hi:
                continue
            b, block = self._block(kind, page.groups[g])
            blocks[lo:hi], rows[lo:hi] = b, np.arange(block.n, block.n + hi - lo)
            block.add(items[lo:hi], codes[lo:hi], lives[lo:hi])
        loc.put(items, blocks, rows)

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
        codes, live = block.codes(np.array([where[1]], np.int64)), int(block.live[where[1]])
        block.set_live(where[1], 0)
        loc.block[item] = -1
        loc.size -= 1
        self.add_codes("m", [scope], [item], codes.astype(np.int8), [_STATUS_NAME.get(live, "superseded")])

    def erase(self, kind: str, item: int) -> None:
        """Forget an item's vector (a hard-forgotten episode): its codes are erased and never found again."""
        loc = self._loc[kind]
        where = loc.get(item)
        if not where:
            return
        block = self._blocks[where[0]]
        block.set_live(where[1], 0)
        block.erase(where[1])
        loc.block[item] = -1
        loc.size -= 1

    def wait_built(self) -> None:
        """Wait for the inverted files being made beside the event loop (not needed for correct
        answers: a place is scanned whole until its file is done; a benchmark waits to time the
        settled index apart from the first seconds after open)."""
        wait([b.building for b in self._blocks if b.building is not None])

    def has(self, kind: str, item: int) -> bool:
        return self._loc[kind].get(item) is not None

    def findable(self) -> int:
        """How many vectors a search can still find (active or archived); ``len`` also counts those of
        superseded versions, which stay until the next open."""
        return sum(b.count[1] + b.count[2] for b in self._blocks)

    def similarity(self, kind: str, item: int, query: np.ndarray) -> float | None:
        """Cosine between the query and one item, or None when the item has no vector yet."""
        return self.similarities([(kind, item)], query)[0]

    def similarities(self, items: Sequence[tuple[str, int]], query: np.ndarray) -> list[float | None]:
        """Cosines between the query and each (kind, id); None for an item without a vector yet."""
        if self.dim is None or self.factor is None or query.shape[-1] != self.dim or not items:
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
        """Cosines of rows, from their codes (the same floats a search gives them)."""
        out = np.zeros(len(rows), np.float32)
        assert self.factor is not None
        for b in np.unique(blocks).tolist():
            sel = blocks == b
            out[sel] = _dots(self._blocks[b].codes(rows[sel]), q) / np.float32(self.factor)
        return out

    def search(self, query: np.ndarray, vis: Visibility, k: int, include_archived: bool = False
               ) -> list[tuple[str, int, float]]:
        """The ``k`` most similar visible items as (kind, id, cosine), best first."""
        if self.dim is None or self.factor is None or query.shape[-1] != self.dim or k <= 0:
            return []
        q = normalise(query.reshape(-1))
        found = []
        for b in self._visible(vis):
            block = self._blocks[b]
            found.append((block, *_best(block, q, k, include_archived)))
        if not found:
            return []
        ids = np.concatenate([f[1] for f in found])
        sims = np.concatenate([f[2] for f in found]) / np.float32(self.factor)
        kinds = [block.kind for block, got, _ in found for _ in range(len(got))]
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


def _best(block: _Block, q: np.ndarray, k: int, include_archived: bool) -> tuple[np.ndarray, np.ndarray]:
    """Ids and code inner products of the ``k`` best visible rows of one block: faiss's best by the
    codes of both (the query's too: ~0.3 % off), re-ranked by the codes against the query itself."""
    skip, wide = block.hidden(include_archived), 2 * k + 16  # codes against the query's codes: room
    if skip * 4 > block.n:  # many hidden rows: only the shown ones are searched
        rows = block.search(q, wide, _shown(block.live[: block.n], include_archived))[0]
    else:  # few (the usual case): the best wide + skip, the hidden ones among them dropped
        rows = block.search(q, wide + skip, None)[0]
        rows = rows[_shown(block.live[rows], include_archived)]
    # the cosines worked out again from the codes with the query as it is, as ``similarities``
    # does (the same floats by either route), and the best k of them kept
    sims = _dots(block.codes(rows), q)
    best = _top(sims, k)
    return block.ids[rows[best]], sims[best]


def _dots(codes: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Each row's inner product with ``q``, summed row by row in one order however many rows come
    (``@`` takes another path for one row than for many: the last bit would differ)."""
    return np.einsum("ij,j->i", codes, q)


def _shown(live: np.ndarray, include_archived: bool) -> np.ndarray:
    return (live == 1) | (live == 2) if include_archived else live == 1


def _top(sims: np.ndarray, k: int) -> np.ndarray:
    if len(sims) <= k:
        return np.argsort(-sims, kind="stable")
    part = np.argpartition(-sims, k)[:k]
    return part[np.argsort(-sims[part], kind="stable")]
