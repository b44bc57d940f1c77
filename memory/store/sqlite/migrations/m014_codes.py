"""m014: each passage vector also as its int8 codes, with one factor per model (issue 33), filled
from the stored float32 vectors (with its frozen copy of the quantisation)."""

from __future__ import annotations

import math

import aiosqlite
import numpy as np

from .base import migration, run_script

_M014_PAGE = 16_384  # vectors converted per step; also how many fixed the factor at open before m014


@migration
async def m014_vector_codes(db: aiosqlite.Connection) -> None:
    """The int8 codes the in-memory index searches, kept beside the float32 vectors so that opening a
    store reads them as they are (a quarter of the bytes, nothing to convert) instead of quantising a
    million vectors at every start. ``place`` is an episode's place key (``spaces.id``: an episode
    never moves, so a page of codes needs no join with the episodes); NULL for a memory, whose scope
    and status change and are read from ``memories``. Erased with the item's vectors.

    An older store's factor is the one its index worked out at every open until now (from the first
    16,384 episode vectors, else memory vectors, of the model), so its recall is unchanged; second
    vectors (models ending ``#as-query``) are kept compact already and get none.
    """
    await run_script(db, """
        CREATE TABLE vector_codes (
            model TEXT NOT NULL,
            kind TEXT NOT NULL,
            item INTEGER NOT NULL,
            place INTEGER,
            codes BLOB NOT NULL,
            PRIMARY KEY (model, kind, item)
        ) WITHOUT ROWID;
        CREATE TABLE vector_scales (model TEXT PRIMARY KEY, factor REAL NOT NULL) WITHOUT ROWID;
        """)
    models = [r[0] for r in await db.execute_fetchall(
        "SELECT DISTINCT model FROM vectors WHERE model NOT LIKE '%#as-query'")]
    for model in models:
        factor = None
        for kind in ("e", "m"):
            after = 0
            while rows := list(await db.execute_fetchall(_M014_ROWS[kind], (model, after, _M014_PAGE))):
                raw = np.frombuffer(b"".join(r[2] for r in rows), np.float32).reshape(len(rows), -1)
                vecs = _m014_unit(raw)
                if factor is None:
                    factor = _m014_factor(vecs)
                    await db.execute("INSERT INTO vector_scales VALUES (?, ?)", (model, factor))
                codes = np.clip(np.rint(vecs * factor), -127, 127).astype(np.int8)
                await db.executemany("INSERT INTO vector_codes VALUES (?, ?, ?, ?, ?)",
                                     [(model, kind, r[0], r[1], c.tobytes()) for r, c in zip(rows, codes)])
                after = rows[-1][0]


_M014_ROWS = {
    "e": ("SELECT v.item, s.id, v.vec FROM vectors v JOIN episodes e ON e.id = v.item"
          " JOIN spaces s ON s.name = e.space WHERE v.model = ? AND v.kind = 'e' AND v.item > ?"
          " ORDER BY v.item LIMIT ?"),
    "m": ("SELECT v.item, NULL, v.vec FROM vectors v JOIN memories m ON m.id = v.item"
          " WHERE v.model = ? AND v.kind = 'm' AND v.item > ? ORDER BY v.item LIMIT ?"),
}


def _m014_unit(vecs: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vecs, axis=-1, keepdims=True)
    return vecs / np.where(norms == 0, 1, norms)


def _m014_factor(first: np.ndarray) -> float:
    top = float(np.abs(first).max()) if first.size else 0.0
    return 127.0 / min(1.0, max(1.5 * top, 4.0 / math.sqrt(first.shape[-1])))
