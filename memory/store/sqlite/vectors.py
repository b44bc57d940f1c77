"""The vectors table: what the background indexer reads and writes, and what the index loads at open."""

from __future__ import annotations

import aiosqlite
import numpy as np

from .. import EmbedRow
from .codec import fetch_rows, vectors_of


async def items_to_embed(db: aiosqlite.Connection, kind: str, after: int, limit: int) -> list[EmbedRow]:
    """(id, group, status, text to embed) of episodes ('e') or memories ('m') past ``after``."""
    if kind == "e":
        sql = ("SELECT id, space, 'active', CASE WHEN actor_name != '' THEN actor_name || ': ' "
               "ELSE '' END || content FROM episodes WHERE id > ? ORDER BY id LIMIT ?")
    else:
        sql = "SELECT id, scope, status, text FROM memories WHERE id > ? ORDER BY id LIMIT ?"
    async with db.execute(sql, (after, limit)) as cur:
        return [EmbedRow(*r) for r in await cur.fetchall()]


async def vector_counts(db: aiosqlite.Connection, model: str) -> list[tuple[str, str, int]]:
    """(kind, group, count) of the stored vectors of ``model``: lets the index size its blocks."""
    return await fetch_rows(db,
        "SELECT 'e', e.space, count(*) FROM vectors v JOIN episodes e ON e.id = v.item"
        " WHERE v.model = ? AND v.kind = 'e' GROUP BY e.space"
        " UNION ALL SELECT 'm', m.scope, count(*) FROM vectors v JOIN memories m ON m.id = v.item"
        " WHERE v.model = ? AND v.kind = 'm' GROUP BY m.scope", (model, model))


async def vectors_page(db: aiosqlite.Connection, model: str, kind: str, after: int, limit: int
                       ) -> tuple[list[EmbedRow], np.ndarray]:
    """Up to ``limit`` items of ``kind`` past ``after`` that have a vector of ``model`` (their text
    left empty), and those vectors."""
    if kind == "e":
        sql = ("SELECT e.id, e.space, 'active', v.vec FROM vectors v JOIN episodes e ON e.id = v.item"
               " WHERE v.model = ? AND v.kind = 'e' AND v.item > ? ORDER BY v.item LIMIT ?")
    else:
        sql = ("SELECT m.id, m.scope, m.status, v.vec FROM vectors v JOIN memories m ON m.id = v.item"
               " WHERE v.model = ? AND v.kind = 'm' AND v.item > ? ORDER BY v.item LIMIT ?")
    rows = await fetch_rows(db, sql, (model, after, limit))
    return [EmbedRow(i, group, status, "") for i, group, status, _ in rows], vectors_of([r[3] for r in rows])
