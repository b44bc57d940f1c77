"""A cheaper first pass over large vector blocks: a PCA projection fitted on the index's own vectors.

Scanning a block reads all its float32 rows (16,000 x 384 = 25 MB: ~3 ms, memory-bound). Sentence
embeddings keep most of their variance in few directions, so cosines through a 64-dim projection
rank the rows nearly as the full ones do: the index takes the best few hundred by the projection
and ranks those by their exact cosines. It is approximate, so it checks itself: it is used only
when the projection keeps enough of the vectors' variance (random vectors: far too little), and
it compares itself with an exact scan on a share of searches and turns itself off when it misses.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

DIMS = 128  # of E5's 384: a 3x smaller scan; the top-35 by exact cosine is kept 99.6 % of the time
EXTRA = 100  # rows scored exactly beyond the k asked for, to learn the projection's error
Z = 5.0  # rows whose projected score is within Z standard deviations of that error are scored too
MIN_ROWS = 4096  # smaller blocks are scanned in full: the scan costs < 1 ms there
MIN_ENERGY = 0.5  # share of the centred vectors' variance the projection must keep
SAMPLE = 8192  # rows the projection is fitted on
WARMUP, EVERY = 32, 50  # audit the first 32 searches of each fit, then one in 50
MAX_MISS = 0.01  # share of audited searches whose top may differ from the exact one


class Rows(Protocol):
    mat: np.ndarray
    live: np.ndarray
    n: int
    low: np.ndarray | None
    low_n: int
    low_fit: int


class Projector:
    """Fits, keeps and audits the projection; blocks hold their projected rows, filled lazily."""

    def __init__(self, dims: int = DIMS, extra: int = EXTRA, z: float = Z, min_rows: int = MIN_ROWS):
        self.dims, self.extra, self.z, self.min_rows = dims, extra, z, min_rows
        self.mean: np.ndarray | None = None
        self.comps: np.ndarray | None = None  # dims x dim, orthonormal rows
        self.energy = 0.0
        self.fits = 0  # bumps on each fit: blocks projected under an older one start again
        self.tried_at = 0  # index size at the last fit; the next comes when it has doubled
        self.searches = self.audits = self.missed = 0

    @property
    def on(self) -> bool:
        return self.comps is not None

    def wants(self, block: Rows, want: int) -> bool:
        """Whether searching ``block`` for ``want`` rows would go through the projection."""
        return block.n >= self.min_rows and (want + self.extra) * 4 <= block.n

    def maybe_fit(self, blocks: Sequence[Rows], size: int) -> None:
        """Fit when none was tried yet, or again once the index has doubled since the last try."""
        if size >= max(2 * self.tried_at, self.min_rows):
            self.fit(blocks, size)

    def fit(self, blocks: Sequence[Rows], size: int) -> None:
        """PCA of a sample of the blocks' rows; kept only if it holds ``MIN_ENERGY`` of the variance."""
        self.tried_at, self.comps, self.fits = size, None, self.fits + 1
        self.searches = self.audits = self.missed = 0
        total = sum(b.n for b in blocks)
        step = max(1, total // SAMPLE)
        x = np.concatenate([b.mat[: b.n : step] for b in blocks if b.n]).astype(np.float64)
        if len(x) < 2 * self.dims:
            return
        mean = x.mean(axis=0)
        x -= mean
        vals, vecs = np.linalg.eigh(x.T @ x)
        self.energy = float(vals[-self.dims:].sum() / max(vals.sum(), 1e-12))
        if self.energy >= MIN_ENERGY:
            self.mean = mean.astype(np.float32)
            self.comps = np.ascontiguousarray(vecs[:, ::-1][:, : self.dims].T, np.float32)

    def candidates(self, block: Rows, q: np.ndarray, want: int) -> np.ndarray | None:
        """Rows (ascending) that should hold the block's best ``want``; None: scan it all.

        The best ``want + extra`` by the projection are scored exactly; how far their projected
        scores fall from the exact ones (this question's error) sets how far below the
        ``want``-th exact cosine a projected score must reach for its row to be scored too.
        """
        if self.comps is None or not self.wants(block, want):
            return None
        approx = np.einsum("ij,j->i", self._low(block), np.einsum("ij,j->i", self.comps, q))
        first = np.argpartition(-approx, want + self.extra)[: want + self.extra]
        err = np.einsum("ij,j->i", block.mat[first], q) - approx[first]
        kth = np.partition(approx[first] + err, -want)[-want]
        spread = float(np.sqrt(np.mean((err - err.mean()) ** 2)))
        near = approx >= kth - float(np.median(err)) - self.z * spread
        near[first] = True
        rows = np.flatnonzero(near)
        return None if len(rows) * 3 > block.n else rows  # a flat question: the full scan is cheaper

    def _low(self, block: Rows) -> np.ndarray:
        """The block's rows through the projection, catching up on rows added since last time."""
        assert self.comps is not None and self.mean is not None
        if block.low is None or block.low_fit != self.fits or len(block.low) < block.n:
            old = block.low if block.low is not None and block.low_fit == self.fits else None
            block.low = np.zeros((len(block.mat), self.dims), np.float32)
            block.low_n = 0 if old is None else block.low_n
            if old is not None:
                block.low[: block.low_n] = old[: block.low_n]
            block.low_fit = self.fits
        for a in range(block.low_n, block.n, 4096):  # in pages: a bounded temporary
            b = min(a + 4096, block.n)
            block.low[a:b] = (block.mat[a:b] - self.mean) @ self.comps.T
        block.low_n = block.n
        return block.low[: block.n]

    def audit_due(self) -> bool:
        """Whether this projected search should also be checked against an exact scan."""
        self.searches += 1
        return self.audits < WARMUP or self.searches % EVERY == 0

    def record(self, exact: np.ndarray, found: np.ndarray) -> None:
        """Note whether a projected search missed (its cosines, best first, fell below the exact
        scan's); turn the projection off once more than ``MAX_MISS`` of the audited searches did.
        """
        self.audits += 1
        # position by position: a tie (two rows of one text) swapped is no miss
        self.missed += len(found) < len(exact) or bool(np.any(found < exact[: len(found)] - 1e-6))
        if self.missed >= 3 and self.missed > MAX_MISS * self.audits:
            self.comps = None  # exact scans until the index has doubled and a new fit is tried
