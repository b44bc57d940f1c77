"""Episodes and memories by id, and the rows recall and the in-memory indexes load of them."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import datetime
from functools import partial
from operator import itemgetter
from typing import Any

import aiosqlite

from ...model import Episode, Memory, timestamp
from .. import EpisodeColumnRow, MemoryRankRow
from . import keywords
from .codec import (
    EPISODE_COLUMNS,
    MEMORY_COLUMNS,
    chunks,
    dt,
    episode_row,
    in_list,
    memory_row,
    meta_names_image,
    quick_rows,
)

# recall's candidate memories: what it checks and ranks them by
_RANK_COLUMNS = "id, text, scope, status, importance, strength, created_at, valid_from, last_recalled"
# each episode's columns kept in memory, as ``EpisodeColumnRow`` has them (image and own as 1 / 0),
# but a meta that may name an image in place of the image flag (JSON's truth is judged in Python)
_COLUMN_ROWS = ("SELECT id, time, tz, space, seq, section, shape, actor_name,"
                " CASE WHEN kind = 'image' THEN 1 WHEN meta != '{}' AND instr(meta, '\"image\"') THEN meta"
                " ELSE 0 END, kind = 'message_out' FROM episodes WHERE id > ? ORDER BY id LIMIT ?")
_COLUMN_ROW = partial(tuple.__new__, EpisodeColumnRow)  # a row as it comes: no Python call per row
_IMAGE = itemgetter(8)


class Items:
    """Episodes and memories as the core asks for them (most on the event loop's thread, ``quick``)."""

    def __init__(self, reader: aiosqlite.Connection, quick: sqlite3.Connection):
        self._reader = reader
        self._quick = quick

    # ---- episodes ------------------------------------------------------------------------
    async def get_episodes(self, ids: Sequence[int]) -> dict[int, Episode]:
        out: dict[int, Episode] = {}
        for chunk in chunks(list(ids)):
            sql, vals = in_list(chunk)
            rows = quick_rows(self._quick, f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE id IN {sql}", vals)
            out.update((r[0], episode_row(r)) for r in rows)
        return out

    async def episode_index_words(self, ids: Sequence[int]) -> dict[int, list[str]]:
        """The keyword-index words of the episodes ``ids``: the text's, the speaker's, then the month
        and the year (``text.episode_words``)."""
        ins, vals = in_list(ids)
        rows = quick_rows(self._quick, f"SELECT id, c0 FROM episodes_fts_content WHERE id IN {ins}", vals)
        return {i: keywords.unkeyed(words).split(" ") for i, words in rows if words}

    async def last_episode_time(self, place: str, before: datetime | None = None) -> datetime | None:
        sql = "SELECT time, tz FROM episodes WHERE space = ?"
        args: list[Any] = [place]
        if before is not None:
            sql += " AND time < ?"
            args.append(timestamp(before))
        async with self._reader.execute(sql + " ORDER BY time DESC LIMIT 1", args) as cur:
            row = await cur.fetchone()
        return dt(row[0], row[1]) if row else None

    async def last_heard(self) -> datetime | None:
        """When the latest message someone sent came in (by the time index, newest first)."""
        async with self._reader.execute("SELECT time, tz FROM episodes WHERE kind = 'message_in'"
                                        " ORDER BY time DESC LIMIT 1") as cur:
            row = await cur.fetchone()
        return dt(row[0], row[1]) if row else None

    async def episode_columns(self, after: int, limit: int) -> list[EpisodeColumnRow]:
        """The in-memory columns of up to ``limit`` episodes past ``after``, in id order. Read on the
        event loop's thread (``quick``): at open, the keyword and vector pages are read on the
        reader's meanwhile, each in one step of SQLite that runs without the GIL; read there too,
        these rows (one GIL hand-off each) would keep the two threads taking turns."""
        rows = list(map(_COLUMN_ROW, quick_rows(self._quick, _COLUMN_ROWS, (after, limit))))
        if str in set(map(type, map(_IMAGE, rows))):  # a meta that may name an image: judged here
            for n in [n for n, r in enumerate(rows) if r.image.__class__ is str]:
                rows[n] = rows[n]._replace(image=meta_names_image(rows[n].image))  # type: ignore[arg-type]
        return rows

    async def last_episode_id(self) -> int:
        return int(quick_rows(self._quick, "SELECT max(id) FROM episodes")[0][0] or 0)

    async def keyed_places(self) -> dict[int, str]:
        """Every space by its key."""
        return dict(quick_rows(self._quick, "SELECT id, name FROM spaces"))

    async def place_key(self, place: str) -> int | None:
        """The space's key (its number in the keyword table); None if nothing was recorded there."""
        rows = quick_rows(self._quick, "SELECT id FROM spaces WHERE name = ?", (place,))
        return int(rows[0][0]) if rows else None

    # ---- memories ------------------------------------------------------------------------
    async def get_memories(self, ids: Sequence[int]) -> dict[int, Memory]:
        out: dict[int, Memory] = {}
        for chunk in chunks(list(ids)):
            sql, vals = in_list(chunk)
            rows = quick_rows(self._quick, f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id IN {sql}", vals)
            srcs: dict[int, list[int]] = {}
            for mid, eid in quick_rows(self._quick,
                                       f"SELECT memory_id, episode_id FROM sources WHERE memory_id IN {sql}",
                                       vals):
                srcs.setdefault(mid, []).append(eid)
            for row in rows:
                out[row[0]] = memory_row(row, sorted(srcs.get(row[0], [])))
        return out

    async def memory_rank_rows(self, ids: Sequence[int]) -> list[MemoryRankRow]:
        """What recall checks and ranks the memories ``ids`` by (those still in the file)."""
        if not ids:
            return []
        ins, vals = in_list(ids)
        rows = quick_rows(self._quick, f"SELECT {_RANK_COLUMNS} FROM memories WHERE id IN {ins}", vals)
        return [MemoryRankRow(*r) for r in rows]
