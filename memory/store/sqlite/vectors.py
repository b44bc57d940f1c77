"""The store's vector rows and indexing cursors: what the background indexer reads and writes.

Part of the SQLite store (it shares the store's connections and writer transaction); kept apart
so each file holds one kind of table.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager

import aiosqlite
import numpy as np

from .codec import fetch_rows


class VectorRows:
    """Vectors per embedding model, and the cursors that say how far indexing got."""

    def __init__(self, writer: aiosqlite.Connection, reader: aiosqlite.Connection,
                 transaction: Callable[[], AbstractAsyncContextManager[None]]):
        self._w = writer
        self._r = reader
        self._transaction = transaction

    async def items_after(self, kind: str, after: int, limit: int) -> list[tuple[int, str, str, str]]:
        """(id, group, status, text to embed) of episodes ('e') or memories ('m') past ``after``."""
        if kind == "e":
            sql = ("SELECT id, space, 'active', CASE WHEN actor_name != '' THEN actor_name || ': ' "
                   "ELSE '' END || content FROM episodes WHERE id > ? ORDER BY id LIMIT ?")
        else:
            sql = "SELECT id, scope, status, text FROM memories WHERE id > ? ORDER BY id LIMIT ?"
        async with self._w.execute(sql, (after, limit)) as cur:
            return [tuple(r) for r in await cur.fetchall()]  # type: ignore[misc]

    async def save_vectors(self, model: str, kind: str, rows: list[tuple[int, np.ndarray]],
                           cursor: tuple[str, int] | None = None) -> None:
        """Store vectors (and advance a cursor) in one transaction."""
        async with self._transaction():
            await self._w.executemany(
                "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)",
                [(model, kind, i, v.astype(np.float32).tobytes()) for i, v in rows])
            if cursor:
                await self._set_cursor(*cursor)

    async def vector_groups(self, model: str) -> list[tuple[str, str, int]]:
        """(kind, group, count) of the stored vectors of ``model``: lets the index size its blocks."""
        return await fetch_rows(self._r,
            "SELECT 'e', e.space, count(*) FROM vectors v JOIN episodes e ON e.id = v.item"
            " WHERE v.model = ? AND v.kind = 'e' GROUP BY e.space"
            " UNION ALL SELECT 'm', m.scope, count(*) FROM vectors v JOIN memories m ON m.id = v.item"
            " WHERE v.model = ? AND v.kind = 'm' GROUP BY m.scope", (model, model))

    async def vectors_page(self, model: str, kind: str, after: int, limit: int
                           ) -> list[tuple[int, str, str, bytes]]:
        """(id, group, status, blob) of up to ``limit`` items of ``kind`` past ``after`` with a vector."""
        if kind == "e":
            sql = ("SELECT e.id, e.space, 'active', v.vec FROM vectors v JOIN episodes e ON e.id = v.item"
                   " WHERE v.model = ? AND v.kind = 'e' AND v.item > ? ORDER BY v.item LIMIT ?")
        else:
            sql = ("SELECT m.id, m.scope, m.status, v.vec FROM vectors v JOIN memories m ON m.id = v.item"
                   " WHERE v.model = ? AND v.kind = 'm' AND v.item > ? ORDER BY v.item LIMIT ?")
        return await fetch_rows(self._r, sql, (model, after, limit))

    async def drop_vectors(self, model: str) -> None:
        async with self._transaction():
            await self._w.execute("DELETE FROM vectors WHERE model = ?", (model,))
            await self._w.execute("DELETE FROM cursors WHERE name LIKE ?", (f"vectors:{model}:%",))

    async def cursor(self, name: str) -> int:
        async with self._w.execute("SELECT value FROM cursors WHERE name = ?", (name,)) as cur:
            row = await cur.fetchone()
        return int(row[0]) if row else 0

    async def _set_cursor(self, name: str, value: int) -> None:
        await self._w.execute(
            "INSERT INTO cursors VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value",
            (name, value))
