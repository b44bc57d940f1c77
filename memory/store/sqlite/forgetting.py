"""What a hard forget reaches (issue 14): along provenance (versions, sources, the memories citing an
episode) and by person or place (the lines they said or that name them, the memories about them).
The erase itself is ``SQLiteWrites.erase``."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

import aiosqlite

from .codec import chunks, fetch_rows, in_list, quick_rows


class Forgetting:
    """What ``memory/forgetting.py`` reads to plan a forget."""

    def __init__(self, reader: aiosqlite.Connection, quick: sqlite3.Connection):
        self._reader = reader
        self._quick = quick

    async def all_versions(self, ids: Sequence[int]) -> list[int]:
        """Every version of the memories ``ids`` (those that exist), merged ones' originals included."""
        return self._ids("SELECT id FROM memories WHERE root IN"
                         " (SELECT root FROM memories WHERE id IN {})", ids)

    async def memories_citing(self, episode_ids: Sequence[int]) -> list[int]:
        """Memories (any status) with a source among ``episode_ids``."""
        return self._ids("SELECT DISTINCT memory_id FROM sources WHERE episode_id IN {}", episode_ids)

    async def source_ids(self, memory_ids: Sequence[int]) -> list[int]:
        """The episodes the memories ``memory_ids`` were drawn from."""
        return self._ids("SELECT episode_id FROM sources WHERE memory_id IN {}", memory_ids)

    async def episodes_where(self, *, actor: str | None = None, place: str | None = None,
                             mentions: Sequence[str] = ()) -> list[tuple[int, str]]:
        """(id, content) of the episodes said by ``actor``, in ``space``, or whose text holds one of
        ``mentions`` (a substring; the caller checks word edges)."""
        cond, args = [], []
        if actor is not None:
            cond.append("actor = ?")
            args.append(actor)
        if place is not None:
            cond.append("space = ?")
            args.append(place)
        for m in mentions:
            cond.append("instr(lower(content), lower(?)) > 0")
            args.append(m)
        if not cond:
            return []
        return await fetch_rows(self._reader, f"SELECT id, content FROM episodes WHERE {' OR '.join(cond)}",
                                args)

    async def lines_of(self, actor: str, place: str, limit: int) -> list[int]:
        """The ids of the last ``limit`` lines ``actor`` said in ``place`` (not the bot's), newest first."""
        rows = await fetch_rows(self._reader, "SELECT id FROM episodes WHERE actor = ? AND space = ? AND"
                                " kind != 'message_out' ORDER BY seq DESC LIMIT ?", (actor, place, limit))
        return [r[0] for r in rows]

    async def memories_mentioning(self, names: Sequence[str]) -> list[tuple[int, str]]:
        """(id, text) of the memories whose text holds one of ``names`` (the caller checks word edges)."""
        if not names:
            return []
        cond = " OR ".join("instr(lower(text), lower(?)) > 0" for _ in names)
        return await fetch_rows(self._reader, f"SELECT id, text FROM memories WHERE {cond}", list(names))

    async def names_holding(self, name: str) -> list[tuple[str, str]]:
        """(person, name) of the names people went by that hold ``name`` (case folded, as a substring:
        the caller checks word edges)."""
        sql = "SELECT person, alias FROM aliases WHERE instr(lower(alias), lower(?)) > 0"
        return [(r[0], r[1]) for r in quick_rows(self._quick, sql, (name,))]

    async def memories_where(self, *, subject: str | None = None, scope: str | None = None) -> list[int]:
        """Memories (any status) about ``subject`` or of ``scope``."""
        rows: list[Any] = []
        if subject is not None:
            rows += await fetch_rows(self._reader, "SELECT id FROM memories WHERE instr(subjects, ?) > 0",
                                     (json.dumps(subject, ensure_ascii=False),))
        if scope is not None:
            rows += await fetch_rows(self._reader, "SELECT id FROM memories WHERE scope = ?", (scope,))
        return sorted({r[0] for r in rows})

    def _ids(self, sql: str, ids: Sequence[int]) -> list[int]:
        """The ids ``sql`` reads for ``ids`` (its ``{}`` takes their list, a chunk at a time), each once,
        in order."""
        out: set[int] = set()
        for chunk in chunks(sorted({int(i) for i in ids})):
            ins, vals = in_list(chunk)
            out |= {r[0] for r in quick_rows(self._quick, sql.format(ins), vals)}
        return sorted(out)
