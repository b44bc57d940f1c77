"""Reads for the bot's days (issue 13): a day's episodes across places, the memories of one kind
(diaries, self-images), and when a person last said something."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import aiosqlite

from ...model import Episode, timestamp
from .codec import EPISODE_COLUMNS, dt, episode_row, fetch_rows


class Days:
    """What the diary, the self-image and the sense of time read (on the writer when there is one)."""

    def __init__(self, latest: aiosqlite.Connection):
        self._latest = latest  # the writer when there is one, else the reader

    async def episodes_between(self, start: datetime, end: datetime, limit: int) -> list[Episode]:
        """The first ``limit`` episodes of every space with ``start <= time < end``, in time order."""
        rows = await fetch_rows(self._latest, f"SELECT {EPISODE_COLUMNS} FROM episodes"
                                " WHERE time >= ? AND time < ? ORDER BY time, id LIMIT ?",
                                (timestamp(start), timestamp(end), limit))
        return [episode_row(r) for r in rows]

    async def memory_ids_of_kind(self, kind: str, status: str = "active", *, after: datetime | None = None,
                                 before: datetime | None = None, latest: int = 0) -> list[int]:
        """Ids of the memories of ``kind`` in ``status``, oldest first (diaries, self-images); only
        those valid from strictly between ``after`` and ``before`` when given; ``latest``: only that
        many, the latest valid (an hourly job's reads stay the same however many days were lived)."""
        sql = "SELECT id FROM memories WHERE kind = ? AND status = ?"
        args: list[Any] = [kind, status]
        for op, t in ((">", after), ("<", before)):
            if t is not None:
                sql += f" AND valid_from {op} ?"
                args.append(timestamp(t))
        if latest > 0:
            sql = (f"SELECT id FROM ({sql} ORDER BY coalesce(valid_from, created_at) DESC, id DESC LIMIT ?)"
                   " ORDER BY id")
            args.append(latest)
        else:
            sql += " ORDER BY id"
        rows = await fetch_rows(self._latest, sql, args)
        return [r[0] for r in rows]

    async def last_time_with(self, actor: str, before: datetime | None = None,
                             place: str | None = None) -> datetime | None:
        """When ``actor`` last said something (in ``space``, or anywhere), before ``before``."""
        sql = "SELECT time, tz FROM episodes WHERE actor = ?"
        args: list[Any] = [actor]
        if place is not None:
            sql += " AND space = ?"
            args.append(place)
        if before is not None:
            sql += " AND time < ?"
            args.append(timestamp(before))
        rows = await fetch_rows(self._latest, sql + " ORDER BY time DESC LIMIT 1", args)
        return dt(rows[0][0], rows[0][1]) if rows else None
