"""Where background work stands: cursors by prefix, each place's unconsolidated backlog, the
episodes past a cursor, and the jobs' run records."""

from __future__ import annotations

import json
from typing import Any

import aiosqlite

from ...model import Episode
from .codec import EPISODE_COLUMNS, episode_row, fetch_rows


async def cursors(db: aiosqlite.Connection, prefix: str) -> dict[str, int]:
    """Every cursor whose name starts with ``prefix``, by name."""
    return dict(await fetch_rows(db, "SELECT name, value FROM cursors WHERE name >= ? AND name < ?",
                                 (prefix, prefix + "\uffff")))


async def episode_backlog(db: aiosqlite.Connection, after: dict[str, int]
                          ) -> list[tuple[str, int, int, float, float]]:
    """(space, episodes past ``after[space]``, last id, first time, last time) of every space that
    has any (read through the ``(space, id)`` index: a place's already-consolidated lines are skipped)."""
    out = []
    for (space,) in await fetch_rows(db, "SELECT name FROM spaces"):
        rows = await fetch_rows(db, "SELECT count(*), max(id), min(time), max(time) FROM episodes"
                                " WHERE space = ? AND id > ?", (space, after.get(space, 0)))
        if rows and rows[0][0]:
            out.append((space, *rows[0]))
    return out


async def episodes_after(db: aiosqlite.Connection, space: str, after: int, limit: int) -> list[Episode]:
    """The first ``limit`` episodes of ``space`` past the id ``after``, oldest first."""
    rows = await fetch_rows(db, f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE space = ? AND id > ?"
                            " ORDER BY id LIMIT ?", (space, after, limit))
    return [episode_row(r) for r in rows]


async def job_runs(db: aiosqlite.Connection) -> dict[str, dict[str, Any]]:
    rows = await fetch_rows(db, "SELECT job, record FROM job_runs")
    return {job: json.loads(record) for job, record in rows}
