"""The whole store, page by page and table by table, as the soul bundle reads it (``memory/bundle``):
every episode and every memory version in id order (a memory with its root), the names people went
by, places' titles, pairs kept apart and cursors. Nothing here is filtered: the bundle asks the one
scope function what a place's export may hold."""

from __future__ import annotations

import aiosqlite

from ...model import Episode, Memory
from .codec import EPISODE_COLUMNS, MEMORY_COLUMNS, chunks, episode_row, fetch_rows, in_list, memory_row


class Whole:
    """``BundleReads`` on the reader (a committed view: a write meanwhile is read whole or not at all
    by each page, and pages go by id)."""

    def __init__(self, reader: aiosqlite.Connection):
        self._reader = reader

    async def episodes_page(self, after: int, limit: int) -> list[Episode]:
        """The first ``limit`` episodes past the id ``after``, in id order."""
        rows = await fetch_rows(self._reader, f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE id > ?"
                                " ORDER BY id LIMIT ?", (after, limit))
        return [episode_row(r) for r in rows]

    async def memories_page(self, after: int, limit: int) -> list[tuple[Memory, int]]:
        """The first ``limit`` memory rows (every version) past the id ``after``, in id order, each
        with its sources (in id order) and its root (the first version of its history)."""
        rows = await fetch_rows(self._reader, f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id > ?"
                                " ORDER BY id LIMIT ?", (after, limit))
        sources: dict[int, list[int]] = {}
        for chunk in chunks([r[0] for r in rows]):
            sql, vals = in_list(chunk)
            for mid, eid in await fetch_rows(self._reader, "SELECT memory_id, episode_id FROM sources WHERE"
                                             f" memory_id IN {sql} ORDER BY memory_id, episode_id", vals):
                sources.setdefault(mid, []).append(eid)
        return [(memory_row(r, sources.get(r[0], [])), r[1]) for r in rows]

    async def alias_rows(self) -> list[tuple[str, str, float, float]]:
        """(person, alias, first seen, last seen) of every name a person went by, by person and alias."""
        return [tuple(r) for r in await fetch_rows(
            self._reader, "SELECT person, alias, first_seen, last_seen FROM aliases ORDER BY person, alias")]

    async def place_name_rows(self) -> list[tuple[str, str, str, float]]:
        """(place, person, name, last seen) of the name each place knows each person by."""
        return [tuple(r) for r in await fetch_rows(
            self._reader, "SELECT space, person, name, last_seen FROM place_names ORDER BY space, person")]

    async def place_title_rows(self) -> list[tuple[str, str, float]]:
        """(place, title, when it was seen) of every place's latest title, by place."""
        return [tuple(r) for r in await fetch_rows(
            self._reader, "SELECT space, title, seen FROM place_titles ORDER BY space")]

    async def place_names(self) -> list[str]:
        """Every place that has a line, by name (m011's counts: a place whose lines were all forgotten
        is not one)."""
        return [r[0] for r in await fetch_rows(self._reader, "SELECT space FROM place_counts ORDER BY space")]

    async def kept_apart_pairs(self) -> list[tuple[int, int]]:
        """Every pair of memories the model said record different things (a < b), in order."""
        rows = await fetch_rows(self._reader, "SELECT a, b FROM kept_apart ORDER BY a, b")
        return [(a, b) for a, b in rows]
