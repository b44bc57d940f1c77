"""The other roles' reads: where background work stands, people's names, the bot's days, the
metabolism's strengths, what a hard forget reaches, and the whole store for the soul bundle."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ...model import Episode, Memory, timestamp
from ...text.person_names import given_names
from ...text.words import holds_name
from .codec import EPISODE_COLUMNS, MEMORY_COLUMNS, dt, episode_row, memory_row
from .connection import Link, rows

_LATER = "greatest(coalesce(last_recalled, 0), created_at)"


class Reads:
    """``ProgressReads``, ``PeopleReads``, ``DayReads``, ``MetabolismReads``, ``ForgettingReads`` and
    ``BundleReads`` on the reader (autocommit: each read sees what is committed, by any instance)."""

    def __init__(self, reader: Link):
        self._db = reader

    async def erase_list_records(self) -> list[str]:
        """The database's erase list (``store/erase_records``), its salt first."""
        return [r[0] for r in await rows(self._db, "SELECT record FROM erase_list ORDER BY n")]

    # ---- progress --------------------------------------------------------------------------
    async def cursor(self, name: str) -> int:
        found = await rows(self._db, "SELECT value FROM cursors WHERE name = %s", (name,))
        return int(found[0][0]) if found else 0

    async def cursors(self, prefix: str) -> dict[str, int]:
        return dict(await rows(self._db, "SELECT name, value FROM cursors WHERE name >= %s AND name < %s",
                               (prefix, prefix + "\uffff")))

    async def episode_backlog(self, after: dict[str, int]) -> list[tuple[str, int, int, float, float]]:
        found = await rows(
            self._db, "SELECT s.name, b.n, b.last, b.first_time, b.last_time FROM spaces s CROSS JOIN LATERAL"
            " (SELECT count(*) AS n, max(id) AS last, min(time) AS first_time, max(time) AS last_time"
            " FROM episodes e WHERE e.space = s.name"
            " AND e.id > coalesce((%s::jsonb ->> s.name)::bigint, 0)) b"
            " WHERE b.n > 0 ORDER BY s.id", (json.dumps(after),))
        return [tuple(r) for r in found]  # type: ignore[misc]

    async def episodes_after(self, place: str, after: int, limit: int) -> list[Episode]:
        found = await rows(self._db, f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE space = %s AND id > %s"
                           " ORDER BY id LIMIT %s", (place, after, limit))
        return [episode_row(r) for r in found]

    async def job_runs(self) -> dict[str, dict[str, Any]]:
        return {job: json.loads(record) for job, record in await rows(self._db, "SELECT job, record FROM "
                                                                                "job_runs")}

    # ---- the learned ranking ---------------------------------------------------------------
    async def ranking_state(self, name: str) -> dict[str, Any] | None:
        found = await rows(self._db, "SELECT state FROM ranking WHERE name = %s", (name,))
        return json.loads(found[0][0]) if found else None

    async def recall_feedback(self) -> list[tuple[int, str, dict[str, Any]]]:
        found = await rows(self._db, "SELECT id, space, record FROM recall_feedback ORDER BY id")
        return [(int(i), str(p), json.loads(r)) for i, p, r in found]

    # ---- people ----------------------------------------------------------------------------
    async def aliases(self, person: str) -> list[str]:
        found = await rows(self._db, "SELECT alias FROM aliases WHERE person = %s ORDER BY last_seen DESC",
                           (person,))
        return [r[0] for r in found]

    async def people_named(self, name: str) -> list[str]:
        found = await rows(self._db, "SELECT DISTINCT person FROM aliases WHERE lower(alias) = lower(%s)",
                           (name,))
        return [r[0] for r in found]

    async def people_named_in(self, place: str, name: str) -> list[str]:
        found = await rows(self._db, "SELECT person FROM place_names WHERE space = %s AND lower(name) = "
                                     "lower(%s)"
                           " ORDER BY last_seen DESC", (place, name.strip()))
        return [r[0] for r in found]

    async def people_mentioned_in(self, place: str, text: str) -> list[str]:
        found = await rows(self._db, "SELECT person, name FROM place_names WHERE space = %s"
                           " AND length(name) >= 2", (place,))
        low = text.lower()
        return list(dict.fromkeys(person for person, name in found
                                  if any(holds_name(low, n.lower()) for n in {name, *given_names(name)})))

    async def names_in_place(self, place: str, people: Sequence[str]) -> dict[str, str]:
        if not people:
            return {}
        return dict(await rows(self._db, "SELECT person, name FROM place_names WHERE space = %s"
                               " AND person = ANY(%s)", (place, list(people))))

    async def place_titles(self) -> dict[str, str]:
        return dict(await rows(self._db, "SELECT space, title FROM place_titles"))

    # ---- days ------------------------------------------------------------------------------
    async def episodes_between(self, start: datetime, end: datetime, limit: int) -> list[Episode]:
        found = await rows(self._db, f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE time >= %s AND time < %s"
                           " ORDER BY time, id LIMIT %s", (timestamp(start), timestamp(end), limit))
        return [episode_row(r) for r in found]

    async def memory_ids_of_kind(self, kind: str, status: str = "active", *, after: datetime | None = None,
                                 before: datetime | None = None, latest: int = 0) -> list[int]:
        sql = "SELECT id, valid_from, created_at FROM memories WHERE kind = %s AND status = %s"
        args: list[Any] = [kind, status]
        for op, t in ((">", after), ("<", before)):
            if t is not None:
                sql += f" AND valid_from {op} %s"
                args.append(timestamp(t))
        if latest > 0:
            sql = (f"SELECT id FROM ({sql} ORDER BY coalesce(valid_from, created_at) DESC, id DESC LIMIT "
                   f"%s) l"
                   " ORDER BY id")
            args.append(latest)
        else:
            sql += " ORDER BY id"
        return [r[0] for r in await rows(self._db, sql, args)]

    async def last_time_with(self, actor: str, before: datetime | None = None,
                             place: str | None = None) -> datetime | None:
        sql, args = "SELECT time, tz FROM episodes WHERE actor = %s", [actor]
        if place is not None:
            sql += " AND space = %s"
            args.append(place)
        if before is not None:
            sql += " AND time < %s"
            args.append(timestamp(before))  # type: ignore[arg-type]
        found = await rows(self._db, sql + " ORDER BY time DESC LIMIT 1", args)
        return dt(found[0][0], found[0][1]) if found else None

    # ---- metabolism ------------------------------------------------------------------------
    async def strength_rows(self, since: int = 0, limit: int = 100_000) -> list[tuple[Any, ...]]:
        return [tuple(r) for r in await rows(
            self._db, f"SELECT id, strength, {_LATER}, importance, kind FROM memories"
            " WHERE status = 'active' AND id > %s ORDER BY id LIMIT %s", (since, limit))]

    async def strength_of(self, ids: Sequence[int]) -> dict[int, tuple[float, float, str]]:
        found = await rows(self._db,
                           f"SELECT id, strength, {_LATER}, status FROM memories WHERE id = ANY(%s)",
                           (sorted({int(i) for i in ids}),))
        return {i: (st, t, status) for i, st, t, status in found}

    async def scope_memories(self, scope: str, kinds: Sequence[str]) -> list[tuple[int, str]]:
        return [(i, t) for i, t in await rows(
            self._db, "SELECT id, text FROM memories WHERE scope = %s AND status = 'active'"
            " AND kind = ANY(%s) ORDER BY id", (scope, list(kinds)))]

    async def memory_scopes(self) -> list[str]:
        return [r[0] for r in await rows(
            self._db, "SELECT DISTINCT scope FROM memories WHERE status = 'active' ORDER BY scope")]

    async def kept_apart(self, ids: Sequence[int]) -> set[tuple[int, int]]:
        found = await rows(self._db, "SELECT a, b FROM kept_apart WHERE a = ANY(%s)", (list(map(int, ids)),))
        return {(a, b) for a, b in found}

    # ---- forgetting ------------------------------------------------------------------------
    async def all_versions(self, ids: Sequence[int]) -> list[int]:
        return await self._ids("SELECT id FROM memories WHERE root IN"
                               " (SELECT root FROM memories WHERE id = ANY(%s))", ids)

    async def memories_citing(self, episode_ids: Sequence[int]) -> list[int]:
        return await self._ids("SELECT DISTINCT memory_id FROM sources WHERE episode_id = ANY(%s)",
                               episode_ids)

    async def source_ids(self, memory_ids: Sequence[int]) -> list[int]:
        return await self._ids("SELECT episode_id FROM sources WHERE memory_id = ANY(%s)", memory_ids)

    async def episodes_where(self, *, actor: str | None = None, place: str | None = None,
                             mentions: Sequence[str] = ()) -> list[tuple[int, str]]:
        cond: list[str] = []
        args: list[Any] = []
        if actor is not None:
            cond.append("actor = %s")
            args.append(actor)
        if place is not None:
            cond.append("space = %s")
            args.append(place)
        for m in mentions:
            cond.append("strpos(lower(content), lower(%s)) > 0")
            args.append(m)
        if not cond:
            return []
        return [(i, c) for i, c in await rows(
            self._db, f"SELECT id, content FROM episodes WHERE {' OR '.join(cond)}", args)]

    async def lines_of(self, actor: str, place: str, limit: int) -> list[int]:
        return [r[0] for r in await rows(
            self._db, "SELECT id FROM episodes WHERE actor = %s AND space = %s AND kind != 'message_out'"
            " ORDER BY id DESC LIMIT %s", (actor, place, limit))]

    async def memories_mentioning(self, names: Sequence[str]) -> list[tuple[int, str]]:
        if not names:
            return []
        cond = " OR ".join("strpos(lower(text), lower(%s)) > 0" for _ in names)
        return [(i, t) for i, t in await rows(self._db, f"SELECT id, text FROM memories WHERE {cond}",
                                              list(names))]

    async def names_holding(self, name: str) -> list[tuple[str, str]]:
        return [(p, a) for p, a in await rows(
            self._db, "SELECT person, alias FROM aliases WHERE strpos(lower(alias), lower(%s)) > 0", (name,))]

    async def memories_where(self, *, subject: str | None = None, scope: str | None = None) -> list[int]:
        found: list[Any] = []
        if subject is not None:
            found += await rows(self._db, "SELECT id FROM memories WHERE strpos(subjects, %s) > 0",
                                (json.dumps(subject, ensure_ascii=False),))
        if scope is not None:
            found += await rows(self._db, "SELECT id FROM memories WHERE scope = %s", (scope,))
        return sorted({r[0] for r in found})

    async def _ids(self, sql: str, ids: Sequence[int]) -> list[int]:
        return sorted({r[0] for r in await rows(self._db, sql, (sorted({int(i) for i in ids}),))})

    # ---- the whole store, for the soul bundle ----------------------------------------------
    async def episodes_page(self, after: int, limit: int) -> list[Episode]:
        found = await rows(self._db, f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE id > %s ORDER BY id "
                                     f"LIMIT %s",
                           (after, limit))
        return [episode_row(r) for r in found]

    async def memories_page(self, after: int, limit: int) -> list[tuple[Memory, int]]:
        found = await rows(self._db, f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id > %s ORDER BY id "
                                     f"LIMIT %s",
                           (after, limit))
        sources: dict[int, list[int]] = {}
        for mid, eid in await rows(self._db, "SELECT memory_id, episode_id FROM sources WHERE memory_id = "
                                             "ANY(%s)"
                                   " ORDER BY memory_id, episode_id", ([r[0] for r in found],)):
            sources.setdefault(mid, []).append(eid)
        return [(memory_row(r, sources.get(r[0], [])), r[1]) for r in found]

    async def alias_rows(self) -> list[tuple[str, str, float, float]]:
        return [tuple(r) for r in await rows(  # type: ignore[misc]
            self._db, "SELECT person, alias, first_seen, last_seen FROM aliases ORDER BY person, alias")]

    async def place_name_rows(self) -> list[tuple[str, str, str, float]]:
        return [tuple(r) for r in await rows(  # type: ignore[misc]
            self._db, "SELECT space, person, name, last_seen FROM place_names ORDER BY space, person")]

    async def place_title_rows(self) -> list[tuple[str, str, float]]:
        return [tuple(r) for r in await rows(  # type: ignore[misc]
            self._db, "SELECT space, title, seen FROM place_titles ORDER BY space")]

    async def place_names(self) -> list[str]:
        return [r[0] for r in await rows(self._db, "SELECT space FROM place_counts ORDER BY space")]

    async def kept_apart_pairs(self) -> list[tuple[int, int]]:
        return [(a, b) for a, b in await rows(self._db, "SELECT a, b FROM kept_apart ORDER BY a, b")]
