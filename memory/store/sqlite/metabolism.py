"""Reads for the memories' metabolism (issue 14): their strength, what fading may archive, and what
merging compares (one scope's memories, and the pairs the model said to keep apart)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

import aiosqlite

from .codec import chunks, fetch_rows, in_list, quick_rows


class Metabolism:
    """What ``memory/metabolism.py`` and ``memory/merging.py`` read."""

    def __init__(self, reader: aiosqlite.Connection, quick: sqlite3.Connection):
        self._reader = reader
        self._quick = quick

    async def strength_rows(self, since: int = 0, limit: int = 100_000) -> list[tuple[Any, ...]]:
        """(id, strength, last recalled or created (the later: a new version starts from its making),
        importance, kind) of active memories past ``since``."""
        return await fetch_rows(self._reader, "SELECT id, strength,"
                                " max(coalesce(last_recalled, 0), created_at), importance, kind FROM memories"
                                " WHERE status = 'active' AND id > ?"
                                " ORDER BY id LIMIT ?", (since, limit))

    async def strength_of(self, ids: Sequence[int]) -> dict[int, tuple[float, float, str]]:
        """Each memory's (stored strength, last recalled or created (the later), status)."""
        out = {}
        for chunk in chunks(sorted(set(ids))):
            sql, vals = in_list(chunk)
            for i, st, t, status in quick_rows(self._quick,
                    "SELECT id, strength, max(coalesce(last_recalled, 0), created_at), status FROM memories"
                    f" WHERE id IN {sql}", vals):
                out[i] = (st, t, status)
        return out

    async def scope_memories(self, scope: str, kinds: Sequence[str]) -> list[tuple[int, str]]:
        """(id, text) of the active memories of ``scope`` of ``kinds``."""
        sql, vals = in_list(kinds)
        return await fetch_rows(self._reader, "SELECT id, text FROM memories WHERE scope = ?"
                                f" AND status = 'active' AND kind IN {sql} ORDER BY id", [scope, *vals])

    async def memory_scopes(self) -> list[str]:
        return [r[0] for r in await fetch_rows(
            self._reader, "SELECT DISTINCT scope FROM memories WHERE status = 'active' ORDER BY scope")]

    async def kept_apart(self, ids: Sequence[int]) -> set[tuple[int, int]]:
        """The pairs (a < b) among ``ids`` the model said record different things."""
        out: set[tuple[int, int]] = set()
        for chunk in chunks(list(ids)):
            sql, vals = in_list(chunk)
            rows = quick_rows(self._quick, f"SELECT a, b FROM kept_apart WHERE a IN {sql}", vals)
            out |= {(a, b) for a, b in rows}
        return out
