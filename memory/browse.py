"""Paging through the store for the owner's dashboard, on its own read-only connection.

NEW SQL FOR THE DASHBOARD LIVES HERE (and only here) until the Store protocol offers these reads.
The connection is opened with ``mode=ro``: it cannot write, whatever it is asked. It is the
dashboard's own (its own thread), so a slow page never queues in front of the reads a reply needs.
These reads are the owner's view of everything; nothing here is shown to a chat.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiosqlite

from .errors import StoreError
from .model import Episode, Memory
from .rows import EPISODE_COLUMNS, episode_row, fetch_rows, memory_row


@dataclass(frozen=True)
class MemoryFilter:
    """Which memories a page lists; empty fields do not filter."""

    scope: str = ""
    kind: str = ""
    status: str = ""
    space: str = ""  # learned there: scoped to it or derived from its episodes
    person: str = ""  # among the memory's subjects
    text: str = ""  # a substring of the text


@dataclass(frozen=True)
class Page:
    """One page of items and how many there are in all."""

    items: list[Any]
    total: int


class Browser:
    """Read-only reads for listing, counting and paging."""

    def __init__(self, conn: aiosqlite.Connection):
        self.conn = conn

    @classmethod
    async def open(cls, path: str | Path) -> Browser:
        path = Path(path)
        if not path.is_file():
            raise StoreError(f"no store at {path}")
        try:
            conn = await aiosqlite.connect(
                f"{path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None
            )
        except sqlite3.Error as e:
            raise StoreError(f"cannot open {path} read-only: {e}") from e
        await conn.execute("PRAGMA busy_timeout=5000")
        await conn.execute("PRAGMA query_only=ON")
        return cls(conn)

    async def close(self) -> None:
        await self.conn.close()

    async def _rows(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        return await fetch_rows(self.conn, sql, args)

    # ---- counts --------------------------------------------------------------------------
    async def memory_counts(self) -> list[tuple[str, str, str, int]]:
        """(kind, scope, status, count) of every memory group."""
        return [
            tuple(r)
            for r in await self._rows(  # type: ignore[misc]
                "SELECT kind, scope, status, count(*) FROM memories GROUP BY 1, 2, 3 ORDER BY 4 DESC"
            )
        ]

    async def episodes_per_day(self, days: int = 90) -> list[tuple[str, int]]:
        """(local date, episodes) for the last ``days`` days that have any, oldest first."""
        rows = await self._rows(
            "SELECT date(time + tz * 60, 'unixepoch') AS d, count(*) FROM episodes"
            " WHERE time >= (SELECT max(time) FROM episodes) - ? * 86400 GROUP BY d ORDER BY d",
            (days,),
        )
        return [(r[0], r[1]) for r in rows]

    async def places(self) -> list[tuple[str, int, float]]:
        """(space, episodes, time of the last one) of every space, the busiest first."""
        rows = await self._rows(
            "SELECT space, count(*), max(time) FROM episodes GROUP BY space ORDER BY 2 DESC, 1"
        )
        return [(r[0], r[1], r[2]) for r in rows]

    async def place_names(self) -> list[str]:
        """Every space that has episodes, by name (one row per space: no episode is read)."""
        return [r[0] for r in await self._rows("SELECT name FROM spaces ORDER BY name")]

    async def people(self) -> list[tuple[str, str, int]]:
        """(person, latest name, episodes said) of everyone with a name, the most talkative first."""
        rows = await self._rows(
            "SELECT a.person, (SELECT alias FROM aliases b WHERE b.person = a.person"
            " ORDER BY last_seen DESC LIMIT 1), coalesce(e.n, 0)"
            " FROM (SELECT DISTINCT person FROM aliases) a"
            " LEFT JOIN (SELECT actor, count(*) AS n FROM episodes GROUP BY actor) e ON e.actor = a.person"
            " ORDER BY 3 DESC, 1"
        )
        return [(r[0], r[1], r[2]) for r in rows]

    async def vector_counts(self) -> dict[str, int]:
        """Vectors stored per embedding model."""
        return {r[0]: r[1] for r in await self._rows("SELECT model, count(*) FROM vectors GROUP BY model")}

    async def has_space(self, space: str) -> bool:
        """Whether ``space`` has an episode or a memory scoped to it."""
        rows = await self._rows(
            "SELECT EXISTS (SELECT 1 FROM episodes WHERE space = ?)"
            " OR EXISTS (SELECT 1 FROM memories WHERE scope = ?)",
            (space, "space:" + space),
        )
        return bool(rows[0][0])

    # ---- pages ---------------------------------------------------------------------------
    async def memories(self, f: MemoryFilter, offset: int, limit: int) -> Page:
        """A page of memories matching ``f``, newest first (their sources are not read)."""
        where, args = _memory_where(f)
        total = (await self._rows(f"SELECT count(*) FROM memories WHERE {where}", args))[0][0]
        rows = await self._rows(
            f"SELECT * FROM memories WHERE {where} ORDER BY id DESC LIMIT ? OFFSET ?", [*args, limit, offset]
        )
        return Page([memory_row(r, []) for r in rows], total)

    async def space_episodes(self, space: str, offset: int, limit: int) -> Page:
        """A page of a space's episodes, the latest first."""
        total = (await self._rows("SELECT count(*) FROM episodes WHERE space = ?", (space,)))[0][0]
        rows = await self._rows(
            f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE space = ? ORDER BY seq DESC LIMIT ? OFFSET ?",
            (space, limit, offset),
        )
        return Page([episode_row(r) for r in rows], total)

    async def around(self, episode: Episode, before: int = 2, after: int = 2) -> list[Episode]:
        """The episode with its neighbours in its conversation, in order."""
        rows = await self._rows(
            f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE space = ? AND seq BETWEEN ? AND ? ORDER BY seq",
            (episode.space, (episode.seq or 0) - before, (episode.seq or 0) + after),
        )
        return [episode_row(r) for r in rows]

    async def about(self, limit: int) -> list[Memory]:
        """Active memories about someone, the most important first."""
        rows = await self._rows(
            "SELECT * FROM memories WHERE status = 'active' AND subjects != '[]'"
            " ORDER BY importance DESC, id DESC LIMIT ?",
            (limit,),
        )
        return [memory_row(r, []) for r in rows]

    async def talks(self, limit: int) -> list[tuple[str, str, int]]:
        """(person, person, turns) of who answers whom: consecutive lines by two people in one place."""
        rows = await self._rows(
            "SELECT min(a, b), max(a, b), count(*) FROM (SELECT actor AS a, lag(actor) OVER"
            " (PARTITION BY space ORDER BY seq) AS b FROM episodes WHERE actor != '')"
            " WHERE b IS NOT NULL AND a != b GROUP BY 1, 2 ORDER BY 3 DESC LIMIT ?",
            (limit,),
        )
        return [(r[0], r[1], r[2]) for r in rows]


def _memory_where(f: MemoryFilter) -> tuple[str, list[Any]]:
    clauses, args = ["1"], []  # type: ignore[var-annotated]
    for column in ("scope", "kind", "status"):
        if getattr(f, column):
            clauses.append(f"{column} = ?")
            args.append(getattr(f, column))
    if f.space:
        clauses.append(
            "(scope = ? OR id IN (SELECT s.memory_id FROM sources s JOIN episodes e"
            " ON e.id = s.episode_id WHERE e.space = ?))"
        )
        args += ["space:" + f.space, f.space]
    if f.person:
        clauses.append("EXISTS (SELECT 1 FROM json_each(subjects) WHERE value = ?)")
        args.append(f.person)
    if f.text:
        clauses.append("instr(lower(text), lower(?)) > 0")
        args.append(f.text)
    return " AND ".join(clauses), args
