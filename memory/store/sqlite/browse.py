"""Paged and counted reads for browsing a store (the dashboard, ``/mem list``, export): never on recall's
path."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

import aiosqlite

from ...errors import InvalidInputError
from ...model import Episode, Memory
from ...scopes import Visibility
from . import summaries
from .codec import EPISODE_COLUMNS, episode_row, fetch_rows, in_list
from .items import Items
from .summaries import PAIR_COUNT, SPEAKERS_LATER, TOP_PAIRS

COUNTED = ("kind", "scope", "status")
MAX_PAGE = 500


def _page(limit: int, offset: int) -> None:
    if not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE:
        raise InvalidInputError(f"limit must be a whole number from 1 to {MAX_PAGE}")
    if not isinstance(offset, int) or offset < 0:
        raise InvalidInputError("offset must be a whole number from 0")


def memory_ids(db: sqlite3.Connection, vis: Visibility | None, *, scope: str | None, kind: str | None,
               status: str | None, place: str | None, people: Sequence[str], limit: int, offset: int,
               named: str = "", text: str | None = None) -> tuple[list[int], int]:
    """Ids of one page of the memories matching every filter, newest first, and how many match.
    ``people`` and ``named`` together: about any of ``people`` or, about no known person, naming
    ``named`` in the text; ``text``: a substring of the text."""
    where: list[str] = []
    args: list[Any] = []
    if status is not None:
        where.append("status = ?")
        args.append(status)
    if vis is not None and vis.memory_scopes is not None:
        q, v = in_list(sorted(vis.memory_scopes))
        where.append(f"scope IN {q}")
        args += v
    for column, value in (("scope", scope), ("kind", kind)):
        if value is not None:
            where.append(f"{column} = ?")
            args.append(value)
    if place is not None:
        where.append("(scope = ? OR EXISTS (SELECT 1 FROM sources s JOIN episodes e ON e.id = s.episode_id"
                     " WHERE s.memory_id = memories.id AND e.space = ?))")
        args += [f"space:{place}", place]
    if people or named:
        about = ["instr(subjects, ?) > 0" for _ in people]
        args += [json.dumps(p, ensure_ascii=False) for p in people]
        if named:
            about.append("(subjects = '[]' AND instr(lower(text), lower(?)) > 0)")
            args.append(named)
        where.append("(" + " OR ".join(about) + ")")
    if text is not None:
        where.append("instr(lower(text), lower(?)) > 0")
        args.append(text)
    cond = " WHERE " + " AND ".join(where) if where else ""
    total = db.execute(f"SELECT count(*) FROM memories{cond}", args).fetchone()[0]
    rows = db.execute(f"SELECT id FROM memories{cond} ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
                      [*args, limit, offset]).fetchall()
    return [r[0] for r in rows], int(total)


class Browse:
    """Pages and counts of what the store holds, for the dashboard and ``/mem list``."""

    def __init__(self, reader: aiosqlite.Connection, quick: sqlite3.Connection, items: Items):
        self._reader = reader
        self._quick = quick
        self._items = items  # a page's memories are read whole, as everywhere

    async def list_memories(self, vis: Visibility | None = None, *, scope: str | None = None,
                            kind: str | None = None, status: str | None = "active", place: str | None = None,
                            people: Sequence[str] = (), named: str = "", text: str | None = None,
                            limit: int = 10, offset: int = 0) -> tuple[list[Memory], int]:
        """Memories ``vis`` may see (None: all) matching every filter given, newest first: one page
        of them and how many there are in all. ``status`` None: any; ``space``: learned there (its
        scope is that space's, or one of its sources was said there); ``people``: about any of them;
        ``named``: (or) about no known person, naming ``named`` in their text; ``text``: a substring
        of the text (case ignored for ASCII)."""
        ids, total = memory_ids(self._quick, vis, scope=scope, kind=kind, status=status, place=place,
                                people=people, named=named, text=text, limit=limit, offset=offset)
        found = await self._items.get_memories(ids)
        return [found[i] for i in ids if i in found], total

    async def place_episodes(self, place: str, limit: int = 50, offset: int = 0) -> list[Episode]:
        """A space's episodes in time order (a line recorded late with its own earlier time stands where
        it was said; lines of one time in the order recorded: by id, which the (space, time) index
        holds, so no sort), one page."""
        _page(limit, offset)
        rows = await fetch_rows(self._reader, f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE space = ?"
                                " ORDER BY time, id LIMIT ? OFFSET ?", (place, limit, offset))
        return [episode_row(r) for r in rows]

    async def memory_counts(self, by: str) -> dict[str, int]:
        """How many memories there are of each kind, scope or status (``by``)."""
        if by not in COUNTED:
            raise InvalidInputError(f"memories are counted by one of {', '.join(COUNTED)}, not {by!r}")
        return dict(await fetch_rows(self._reader,
                                     f"SELECT {by}, count(*) FROM memories GROUP BY {by} ORDER BY {by}"))

    async def episodes_per_day(self, place: str | None = None) -> list[tuple[str, int]]:
        """(YYYY-MM-DD in the episode's own zone, count), oldest day first."""
        if place is None:  # kept by the writer's triggers (migration m011)
            rows = await fetch_rows(self._reader, "SELECT day, n FROM episode_days ORDER BY day")
            return [(d, n) for d, n in rows]
        return [(d, n) for d, n in await fetch_rows(
            self._reader, f"SELECT {summaries.DAY} AS day, count(*) FROM episodes"
            " WHERE space = ? GROUP BY day ORDER BY day", (place,))]

    async def versions(self, memory_id: int) -> list[int]:
        """Ids of every version of the memory ``memory_id`` belongs to, oldest first."""
        async with self._reader.execute(
            "SELECT id FROM memories WHERE root = (SELECT root FROM memories WHERE id = ?) ORDER BY id",
            (memory_id,),
        ) as cur:
            return [r[0] for r in await cur.fetchall()]

    # ---- the dashboard's overview, places and graph ------------------------------------------
    async def counts(self) -> dict[str, int]:
        out = {}
        for name, sql in (
            ("episodes", "SELECT count(*) FROM episodes"),
            ("memories", "SELECT count(*) FROM memories WHERE status = 'active'"),
            ("archived", "SELECT count(*) FROM memories WHERE status = 'archived'"),
            ("superseded", "SELECT count(*) FROM memories WHERE status = 'superseded'"),
            ("spaces", "SELECT count(*) FROM place_counts"),  # the places with an episode (m011)
            ("people", "SELECT count(DISTINCT person) FROM aliases"),
            ("vectors", "SELECT count(*) FROM (SELECT DISTINCT kind, item FROM vectors)"),  # items with one
        ):
            async with self._reader.execute(sql) as cur:
                out[name] = (await cur.fetchone())[0]  # type: ignore[index]
        return out

    async def count_episodes(self) -> int:
        return int((await fetch_rows(self._reader, "SELECT count(*) FROM episodes"))[0][0])

    async def count_place_episodes(self, place: str, before_seq: int | None = None) -> int:
        """A space's episodes (those before the one at ``before_seq``, if given, in the time order
        ``place_episodes`` pages them in: where it stands)."""
        if before_seq is None:
            return int((await fetch_rows(self._reader, "SELECT count(*) FROM episodes WHERE space = ?",
                                         (place,)))[0][0])
        return int((await fetch_rows(self._reader, "SELECT count(*) FROM episodes e, (SELECT time, id"
                                     " FROM episodes WHERE space = ? AND seq = ?) x WHERE e.space = ?"
                                     " AND (e.time < x.time OR (e.time = x.time AND e.id < x.id))",
                                     (place, before_seq, place)))[0][0])

    async def episodes_around(self, episode: Episode, before: int = 2, after: int = 2) -> list[Episode]:
        """The episode with its neighbours in its place, in order."""
        seq = episode.seq or 0
        rows = await fetch_rows(self._reader, f"SELECT {EPISODE_COLUMNS} FROM episodes"
                                " WHERE space = ? AND seq BETWEEN ? AND ? ORDER BY seq",
                                (episode.place, seq - before, seq + after))
        return [episode_row(r) for r in rows]

    async def places(self) -> list[tuple[str, int, float]]:
        """(space, episodes, time of the last one) of every space, the busiest first."""
        rows = await fetch_rows(self._reader, "SELECT space, n, (SELECT max(time) FROM episodes e"
                                " WHERE e.space = p.space) FROM place_counts p ORDER BY 2 DESC, 1")
        return [(r[0], r[1], r[2]) for r in rows]

    async def people(self) -> list[tuple[str, str, int]]:
        """(person, latest name, episodes said) of everyone with a name, the most talkative first."""
        rows = await fetch_rows(
            self._reader, "SELECT a.person, (SELECT alias FROM aliases b WHERE b.person = a.person"
            " ORDER BY last_seen DESC LIMIT 1), coalesce(c.n, 0) + coalesce(l.n, 0)"
            " FROM (SELECT DISTINCT person FROM aliases) a LEFT JOIN speaker_counts c ON c.actor = a.person"
            f" LEFT JOIN {SPEAKERS_LATER} l ON l.actor = a.person"
            " ORDER BY 3 DESC, 1")
        return [(r[0], r[1], r[2]) for r in rows]

    async def memories_about(self, limit: int) -> list[Memory]:
        """Active memories about someone, the most important first."""
        rows = await fetch_rows(self._reader, "SELECT id FROM memories WHERE status = 'active'"
                                " AND subjects != '[]' ORDER BY importance DESC, id DESC LIMIT ?", (limit,))
        ids = [r[0] for r in rows]
        found = await self._items.get_memories(ids)
        return [found[i] for i in ids if i in found]

    async def count_memories_about(self) -> int:
        """How many active memories are about someone."""
        return int((await fetch_rows(self._reader, "SELECT count(*) FROM memories WHERE status = 'active'"
                                     " AND subjects != '[]'"))[0][0])

    async def count_talks(self) -> int:
        """How many pairs of people answered each other."""
        return int((await fetch_rows(self._reader, PAIR_COUNT))[0][0])

    async def talks(self, limit: int) -> list[tuple[str, str, int]]:
        """(person, person, turns): who answers whom (consecutive lines by two people in one place),
        the most turns first."""
        rows = await fetch_rows(self._reader, TOP_PAIRS, (limit, limit))
        return [(r[0], r[1], r[2]) for r in rows]

    async def has_place(self, place: str) -> bool:
        """Whether ``space`` has an episode or a memory scoped to it."""
        rows = await fetch_rows(self._reader, "SELECT EXISTS (SELECT 1 FROM episodes WHERE space = ?)"
                                " OR EXISTS (SELECT 1 FROM memories WHERE scope = ?)",
                                (place, f"space:{place}"))
        return bool(rows[0][0])
