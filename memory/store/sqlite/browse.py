"""Paged and counted reads for browsing a store (the dashboard, export): never on recall's path."""

from __future__ import annotations

from typing import Any

import aiosqlite

from ...errors import InvalidInputError
from ...model import Episode
from .codec import EPISODE_COLUMNS, episode_row, fetch_rows

COUNTED = ("kind", "scope", "status")
MAX_PAGE = 500


def _limit(page: int, per_page: int) -> tuple[int, int]:
    """LIMIT and OFFSET of a page (pages count from 1)."""
    if not isinstance(page, int) or page < 1:
        raise InvalidInputError("page must be a whole number from 1")
    if not isinstance(per_page, int) or not 1 <= per_page <= MAX_PAGE:
        raise InvalidInputError(f"per_page must be a whole number from 1 to {MAX_PAGE}")
    return per_page, (page - 1) * per_page


async def memory_ids(db: aiosqlite.Connection, *, scope: str | None, kind: str | None, status: str | None,
                     space: str | None, person: str | None, page: int, per_page: int) -> list[int]:
    """Ids of the memories matching every filter given, newest first, one page.

    ``space``: learned there (its scope is that space's, or one of its sources was said there);
    ``person``: one of its subjects.
    """
    where, args = [], []  # type: ignore[var-annotated]
    for column, value in (("scope", scope), ("kind", kind), ("status", status)):
        if value is not None:
            where.append(f"{column} = ?")
            args.append(value)
    if space is not None:
        where.append("(scope = ? OR EXISTS (SELECT 1 FROM sources s JOIN episodes e ON e.id = s.episode_id"
                     " WHERE s.memory_id = memories.id AND e.space = ?))")
        args += [f"space:{space}", space]
    if person is not None:
        where.append("EXISTS (SELECT 1 FROM json_each(memories.subjects) WHERE value = ?)")
        args.append(person)
    limit, offset = _limit(page, per_page)
    sql = "SELECT id FROM memories" + (" WHERE " + " AND ".join(where) if where else "")
    rows = await fetch_rows(db, sql + " ORDER BY id DESC LIMIT ? OFFSET ?", [*args, limit, offset])
    return [r[0] for r in rows]


async def space_episodes(db: aiosqlite.Connection, space: str, page: int, per_page: int) -> list[Episode]:
    """A space's episodes in order of place, one page."""
    limit, offset = _limit(page, per_page)
    rows = await fetch_rows(db, f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE space = ? ORDER BY seq"
                                " LIMIT ? OFFSET ?", (space, limit, offset))
    return [episode_row(r) for r in rows]


async def memory_counts(db: aiosqlite.Connection, by: str) -> dict[str, int]:
    """How many memories have each value of ``by`` (kind, scope or status)."""
    if by not in COUNTED:
        raise InvalidInputError(f"memories are counted by one of {', '.join(COUNTED)}, not {by!r}")
    return dict(await fetch_rows(db, f"SELECT {by}, count(*) FROM memories GROUP BY {by} ORDER BY {by}"))


async def episodes_per_day(db: aiosqlite.Connection, space: str | None) -> list[tuple[str, int]]:
    """(day, count): each day's episodes, the day in the episode's own zone, oldest first."""
    sql = "SELECT date(time + tz * 60, 'unixepoch') AS day, count(*) FROM episodes"
    args: list[Any] = []
    if space is not None:
        sql += " WHERE space = ?"
        args.append(space)
    return [(d, n) for d, n in await fetch_rows(db, sql + " GROUP BY day ORDER BY day", args)]
