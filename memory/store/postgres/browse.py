"""Paged and counted reads for browsing (the dashboard, ``/mem list``, export): never on recall's path."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ...errors import InvalidInputError
from ...model import Episode, Memory
from ...scopes import Visibility
from .codec import EPISODE_COLUMNS, episode_row
from .connection import Link, rows
from .recall_reads import RecallReads

COUNTED = ("kind", "scope", "status")
MAX_PAGE = 500
DAY = "engram_day(time, tz)"  # migration m011's function: a line's day in its own zone


def _page(limit: int, offset: int) -> None:
    if not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE:
        raise InvalidInputError(f"limit must be a whole number from 1 to {MAX_PAGE}")
    if not isinstance(offset, int) or offset < 0:
        raise InvalidInputError("offset must be a whole number from 0")


class Browse:
    """``BrowseReads``: pages and counts of what the store holds."""

    def __init__(self, reader: Link, items: RecallReads):
        self._db = reader
        self._items = items

    async def list_memories(self, vis: Visibility | None = None, *, scope: str | None = None,
                            kind: str | None = None, status: str | None = "active", place: str | None = None,
                            people: Sequence[str] = (), named: str = "", text: str | None = None,
                            limit: int = 10, offset: int = 0) -> tuple[list[Memory], int]:
        where: list[str] = []
        args: list[Any] = []
        if status is not None:
            where.append("status = %s")
            args.append(status)
        if vis is not None and vis.memory_scopes is not None:
            where.append("scope = ANY(%s)")
            args.append(sorted(vis.memory_scopes))
        for column, v in (("scope", scope), ("kind", kind)):
            if v is not None:
                where.append(f"{column} = %s")
                args.append(v)
        if place is not None:
            where.append("(scope = %s OR EXISTS (SELECT 1 FROM sources s JOIN episodes e ON e.id = "
                         "s.episode_id"
                         " WHERE s.memory_id = memories.id AND e.space = %s))")
            args += [f"space:{place}", place]
        if people or named:
            about = ["strpos(subjects, %s) > 0" for _ in people]
            args += [json.dumps(p, ensure_ascii=False) for p in people]
            if named:
                about.append("(subjects = '[]' AND strpos(lower(text), lower(%s)) > 0)")
                args.append(named)
            where.append("(" + " OR ".join(about) + ")")
        if text is not None:
            where.append("strpos(lower(text), lower(%s)) > 0")
            args.append(text)
        cond = " WHERE " + " AND ".join(where) if where else ""
        total = (await rows(self._db, f"SELECT count(*) FROM memories{cond}", args))[0][0]
        ids = [r[0] for r in await rows(self._db, f"SELECT id FROM memories{cond} ORDER BY created_at DESC,"
                                        " id DESC LIMIT %s OFFSET %s", [*args, limit, offset])]
        found = await self._items.get_memories(ids)
        return [found[i] for i in ids if i in found], int(total)

    async def versions(self, memory_id: int) -> list[int]:
        return [r[0] for r in await rows(
            self._db, "SELECT id FROM memories WHERE root = (SELECT root FROM memories WHERE id = %s) ORDER "
                      "BY id",
            (memory_id,))]

    async def place_episodes(self, place: str, limit: int = 50, offset: int = 0) -> list[Episode]:
        _page(limit, offset)
        found = await rows(self._db, f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE space = %s"
                           " ORDER BY time, id LIMIT %s OFFSET %s", (place, limit, offset))  # as SQLite's
        return [episode_row(r) for r in found]

    async def episodes_around(self, episode: Episode, before: int = 2, after: int = 2) -> list[Episode]:
        seq = episode.seq or 0
        found = await rows(self._db, f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE space = %s"
                           " AND seq BETWEEN %s AND %s ORDER BY seq", (episode.place, seq - before,
                                                                       seq + after))
        return [episode_row(r) for r in found]

    async def memory_counts(self, by: str) -> dict[str, int]:
        if by not in COUNTED:
            raise InvalidInputError(f"memories are counted by one of {', '.join(COUNTED)}, not {by!r}")
        return dict(await rows(self._db, f"SELECT {by}, count(*) FROM memories GROUP BY {by} ORDER BY {by}"))

    async def episodes_per_day(self, place: str | None = None) -> list[tuple[str, int]]:
        if place is None:
            return [(d, n) for d, n in await rows(self._db, "SELECT day, n FROM episode_days ORDER BY day")]
        return [(d, n) for d, n in await rows(
            self._db, f"SELECT {DAY} AS day, count(*) FROM episodes WHERE space = %s GROUP BY day ORDER BY "
                      f"day",
            (place,))]

    async def count_episodes(self) -> int:
        return int((await rows(self._db, "SELECT count(*) FROM episodes"))[0][0])

    async def count_place_episodes(self, place: str, before_seq: int | None = None) -> int:
        if before_seq is None:
            return int((await rows(self._db, "SELECT count(*) FROM episodes WHERE space = %s",
                                   (place,)))[0][0])
        return int((await rows(self._db, "SELECT count(*) FROM episodes e, (SELECT time, id FROM episodes"
                               " WHERE space = %s AND seq = %s) x WHERE e.space = %s"
                               " AND (e.time < x.time OR (e.time = x.time AND e.id < x.id))",
                               (place, before_seq, place)))[0][0])

    async def has_place(self, place: str) -> bool:
        found = await rows(self._db, "SELECT EXISTS (SELECT 1 FROM episodes WHERE space = %s)"
                           " OR EXISTS (SELECT 1 FROM memories WHERE scope = %s)", (place, f"space:{place}"))
        return bool(found[0][0])

    async def places(self) -> list[tuple[str, int, float]]:
        found = await rows(self._db, "SELECT space, n, (SELECT max(time) FROM episodes e WHERE e.space = "
                                     "p.space)"
                           " FROM place_counts p ORDER BY 2 DESC, 1")
        return [(r[0], r[1], r[2]) for r in found]

    async def people(self) -> list[tuple[str, str, int]]:
        found = await rows(
            self._db, "SELECT a.person, (SELECT alias FROM aliases b WHERE b.person = a.person"
            " ORDER BY last_seen DESC LIMIT 1), coalesce(c.n, 0)"
            " FROM (SELECT DISTINCT person FROM aliases) a LEFT JOIN speaker_counts c ON c.actor = a.person"
            " ORDER BY 3 DESC, 1")
        return [(r[0], r[1], r[2]) for r in found]

    async def memories_about(self, limit: int) -> list[Memory]:
        ids = [r[0] for r in await rows(self._db, "SELECT id FROM memories WHERE status = 'active'"
                                        " AND subjects != '[]' ORDER BY importance DESC, id DESC LIMIT %s",
                                        (limit,))]
        found = await self._items.get_memories(ids)
        return [found[i] for i in ids if i in found]

    async def count_memories_about(self) -> int:
        return int((await rows(self._db, "SELECT count(*) FROM memories WHERE status = 'active'"
                               " AND subjects != '[]'"))[0][0])

    async def talks(self, limit: int) -> list[tuple[str, str, int]]:
        return [(a, b, n) for a, b, n in await rows(
            self._db, "SELECT a, b, n FROM talk_pairs ORDER BY n DESC, a, b LIMIT %s", (limit,))]

    async def count_talks(self) -> int:
        return int((await rows(self._db, "SELECT count(*) FROM talk_pairs"))[0][0])

    async def counts(self) -> dict[str, int]:
        out = {}
        for name, sql in (
            ("episodes", "SELECT count(*) FROM episodes"),
            ("memories", "SELECT count(*) FROM memories WHERE status = 'active'"),
            ("archived", "SELECT count(*) FROM memories WHERE status = 'archived'"),
            ("superseded", "SELECT count(*) FROM memories WHERE status = 'superseded'"),
            ("spaces", "SELECT count(*) FROM place_counts"),
            ("people", "SELECT count(DISTINCT person) FROM aliases"),
            ("vectors", "SELECT count(*) FROM (SELECT DISTINCT kind, item FROM vectors) v"),
        ):
            out[name] = int((await rows(self._db, sql))[0][0])
        return out


# each summary table and what it holds, counted from the episodes directly (a full scan: checks only)
SUMMARIES: dict[str, tuple[str, str]] = {
    "episode_days": ("SELECT day, n FROM episode_days",
                     f"SELECT {DAY} AS day, count(*) FROM episodes GROUP BY day"),
    "place_counts": ("SELECT space, n FROM place_counts",
                     "SELECT space, count(*) FROM episodes GROUP BY space"),
    "speaker_counts": ("SELECT actor, n FROM speaker_counts",
                       "SELECT actor, count(*) FROM episodes WHERE actor != '' GROUP BY actor"),
    "talk_pairs": ("SELECT a, b, n FROM talk_pairs",
                   "SELECT least(x, y), greatest(x, y), count(*) FROM (SELECT actor AS x, lag(actor) OVER"
                   " (PARTITION BY space ORDER BY seq) AS y FROM episodes WHERE actor != '') p"
                   " WHERE y IS NOT NULL AND x != y GROUP BY 1, 2"),
}


async def check_summaries(db: Link) -> list[str]:
    problems = []
    for table, (kept, counted) in SUMMARIES.items():
        sql = (f"SELECT (SELECT count(*) FROM (({kept}) EXCEPT ({counted})) a)"
               f" + (SELECT count(*) FROM (({counted}) EXCEPT ({kept})) b)")
        n = (await rows(db, sql))[0][0]
        if n:
            problems.append(f"{table}: {n} rows differ from a count of the episodes")
    return problems
