"""Where background work stands: cursors, each place's unconsolidated backlog, the episodes past a
cursor, and the jobs' run records (read on the writer when there is one)."""

from __future__ import annotations

import json
from typing import Any

import aiosqlite

from ...model import Episode
from .codec import EPISODE_COLUMNS, episode_row, fetch_rows
from .transactions import Transactions

# A place's lines past an id, found by sequence number (migration m018 dropped the (space, id) index;
# in a place ids rise with sequence numbers, which ``SQLiteWrites.restore_episodes`` keeps true):
# those after the place's last line at or before the id, which its (space, seq) index finds reading
# back from the place's newest line over only those past it. Its arguments: ``past(place, id)``.
PAST = ("space = ? AND seq > CASE WHEN ? <= 0 THEN -1 ELSE coalesce((SELECT seq FROM episodes"
        " WHERE space = ? AND id <= ? ORDER BY seq DESC LIMIT 1), -1) END")


def past(place: str, after: int) -> tuple[str, int, str, int]:
    """The arguments of ``PAST``."""
    return place, after, place, after


class Progress:
    """What consolidation, the indexer and the scheduler read back of their own progress."""

    def __init__(self, reader: aiosqlite.Connection, latest: aiosqlite.Connection,
                 transactions: Transactions):
        self._reader = reader
        self._latest = latest  # the writer when there is one, else the reader
        self._transactions = transactions  # where a job's run is saved

    async def cursor(self, name: str) -> int:
        """The cursor ``name`` as committed (0 when unset): a read, on the reader (a transaction's own
        view of it is ``Writes.cursor``)."""
        rows = await fetch_rows(self._reader, "SELECT value FROM cursors WHERE name = ?", (name,))
        return int(rows[0][0]) if rows else 0

    async def cursors(self, prefix: str) -> dict[str, int]:
        """Every cursor whose name starts with ``prefix``, by name."""
        return dict(await fetch_rows(self._latest,
                                     "SELECT name, value FROM cursors WHERE name >= ? AND name < ?",
                                     (prefix, prefix + "\uffff")))

    async def episode_backlog(self, after: dict[str, int]) -> list[tuple[str, int, int, float, float]]:
        """(space, episodes past ``after[space]`` (0 when absent), last id, first time, last time) of
        every space that has any (read through the ``(space, seq)`` index, ``PAST``: a place's
        already-consolidated lines are skipped)."""
        db = self._latest
        out = []
        for (place,) in await fetch_rows(db, "SELECT name FROM spaces"):
            rows = await fetch_rows(db, f"SELECT count(*), max(id), min(time), max(time) FROM episodes"
                                    f" WHERE {PAST}", past(place, after.get(place, 0)))
            if rows and rows[0][0]:
                out.append((place, *rows[0]))
        return out

    async def episodes_after(self, place: str, after: int, limit: int) -> list[Episode]:
        """The first ``limit`` episodes of ``space`` past the id ``after``, oldest first."""
        rows = await fetch_rows(self._latest, f"SELECT {EPISODE_COLUMNS} FROM episodes"
                                f" WHERE {PAST} ORDER BY seq LIMIT ?", (*past(place, after), limit))
        return [episode_row(r) for r in rows]

    async def job_runs(self) -> dict[str, dict[str, Any]]:
        """Each background job's record (last run, status, stats, totals)."""
        rows = await fetch_rows(self._latest, "SELECT job, record FROM job_runs")
        return {job: json.loads(record) for job, record in rows}

    async def save_job_run(self, job: str, record: dict[str, Any]) -> None:
        """Keep ``job``'s record (replacing the last): a transaction of its own, taken even once the
        file was found damaged (``Transactions.transaction``'s ``bookkeeping``)."""
        async with self._transactions.transaction(bookkeeping=True) as tx:
            await tx.save_job_run(job, record)
