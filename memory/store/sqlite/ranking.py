"""What the learned ranking keeps (issue 32): its named states and the recent recalls' feedback rows
(written in a transaction: ``writes.SQLiteWrites.save_ranking``)."""

from __future__ import annotations

import json
from typing import Any

import aiosqlite

from .codec import fetch_rows


class RankingRows:
    """The learned ranking's reads (on the writer when there is one: a job reads what it wrote)."""

    def __init__(self, latest: aiosqlite.Connection):
        self._latest = latest

    async def ranking_state(self, name: str) -> dict[str, Any] | None:
        """The state saved under ``name`` (None: never saved, or reset)."""
        rows = await fetch_rows(self._latest, "SELECT state FROM ranking WHERE name = ?", (name,))
        return json.loads(rows[0][0]) if rows else None

    async def recall_feedback(self) -> list[tuple[int, str, dict[str, Any]]]:
        """Every kept recall: (id, place, record), oldest first."""
        rows = await fetch_rows(self._latest, "SELECT id, space, record FROM recall_feedback ORDER BY id")
        return [(int(i), str(p), json.loads(r)) for i, p, r in rows]
