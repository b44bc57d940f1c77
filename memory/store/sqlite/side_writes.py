"""The writes beside the rows of one transaction: vectors, cursors and job runs (``SQLiteWrites``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import aiosqlite
import numpy as np

from .. import Change, EmbedRow, VectorsSaved
from .codec import compact_vector_blob, fetch_rows, vector_blob


class SideWrites:
    """Mixed into ``SQLiteWrites``: its writer connection and the changes heard after COMMIT."""

    _writer: aiosqlite.Connection
    changes: list[Change]

    async def save_vectors(self, model: str, kind: str, rows: Sequence[EmbedRow],
                           vectors: np.ndarray) -> None:
        """Store each row's vector for ``model`` (replacing one it had)."""
        await self._writer.executemany(
            "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)",
            [(model, kind, r.id, vector_blob(v)) for r, v in zip(rows, vectors)])
        self.changes.append(VectorsSaved(model, kind, list(rows), vectors))

    async def save_query_vectors(self, model: str, kind: str, rows: Sequence[EmbedRow],
                                 vectors: np.ndarray) -> None:
        """Store each row's second vector (the item embedded as a query) for ``model``, compact
        (``codec.compact_vector_blob``); heard as ``VectorsSaved`` of ``model``."""
        await self._writer.executemany(
            "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)",
            [(model, kind, r.id, compact_vector_blob(v)) for r, v in zip(rows, vectors)])
        self.changes.append(VectorsSaved(model, kind, list(rows), vectors))

    async def drop_vectors(self, model: str) -> None:
        await self._writer.execute("DELETE FROM vectors WHERE model = ?", (model,))

    async def cursor(self, name: str) -> int:
        """The cursor ``name`` as this transaction sees it (0 when unset)."""
        rows = await fetch_rows(self._writer, "SELECT value FROM cursors WHERE name = ?", (name,))
        return int(rows[0][0]) if rows else 0

    async def set_cursor(self, name: str, value: int) -> None:
        await self._writer.execute(
            "INSERT INTO cursors VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value",
            (name, value))

    async def save_job_run(self, job: str, record: dict[str, Any]) -> None:
        await self._writer.execute(
            "INSERT INTO job_runs VALUES (?, ?) ON CONFLICT(job) DO UPDATE SET record = excluded.record",
            (job, json.dumps(record, ensure_ascii=False)))
