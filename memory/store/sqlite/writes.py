"""The writes of one SQLite transaction; what each changed is handed to listeners after COMMIT."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import aiosqlite
import numpy as np

from ...errors import UnknownIdError
from ...model import Episode, Memory, aware, timestamp, zone_minutes
from ...text import memory_words, prepare_episode
from .. import (
    Change,
    EmbedRow,
    EpisodeColumnRow,
    EpisodesAdded,
    EpisodesDeleted,
    MemoriesDeleted,
    MemoryAdded,
    MemoryChanged,
    VectorsSaved,
)
from .codec import EPISODE_COLUMNS, chunks, fetch_rows, in_list, vector_blob
from .keywords import keyed_words, word_count

SETTABLE = frozenset({"status", "strength", "last_recalled", "scope", "importance"})


@dataclass
class SpacePlace:
    """Where the writer is in one space: its key, the last sequence number and section, the last time."""

    key: int  # the space's number (``keywords.keyed_words``)
    seq: int
    section: int
    last_time: float


class SQLiteWrites:
    """Writes inside one open transaction on the store's writer connection (``SQLiteStore.transaction``)."""

    def __init__(self, db: aiosqlite.Connection, places: dict[str, SpacePlace], section_gap: float):
        self._writer = db
        self._places = places  # the writer's view of each space, kept by the store across transactions
        self._section_gap = section_gap
        self.changes: list[Change] = []

    # ---- episodes ------------------------------------------------------------------------
    async def add_episodes(self, episodes: Sequence[Episode],
                           prepared: Sequence[tuple[str, int]] | None = None) -> list[int]:
        """Insert ``episodes``; returns their ids (final once the transaction commits).

        ``prepared``: each episode's ``text.prepare_episode``, when the caller worked them out
        beforehand (outside the writer lock they overlap the previous batch's commit).
        """
        if prepared is not None and len(prepared) != len(episodes):
            raise ValueError("one (words, shape) per episode")
        db = self._writer
        next_id = (await fetch_rows(db, "SELECT coalesce(max(id), 0) FROM episodes"))[0][0] + 1
        rows, fts, aliases, columns, keys, lengths = [], [], [], [], [], []
        for n, ep in enumerate(episodes):
            t = aware(ep.time)
            stamp, meta = t.timestamp(), json.dumps(ep.meta, ensure_ascii=False) if ep.meta else "{}"
            key, seq, section = await self._place(ep.space, stamp, bool(ep.meta.get("section_break")))
            ws, shape = prepare_episode(ep) if prepared is None else prepared[n]
            row = (next_id, stamp, zone_minutes(t), ep.space, seq, section, ep.source, ep.actor,
                   ep.actor_name, ep.kind, ep.content, meta, shape)
            rows.append(row)
            columns.append(EpisodeColumnRow(*row[:6], shape, ep.actor_name,  # type: ignore[call-arg]
                                            ep.kind == "image" or bool(ep.meta.get("image")),
                                            ep.kind == "message_out"))
            fts.append((next_id, keyed_words(ws, key)))
            keys.append(key)
            lengths.append(word_count(ws))
            if ep.actor and ep.actor_name:
                aliases.append((ep.actor, ep.actor_name, stamp, stamp))
            next_id += 1
        await db.executemany(f"INSERT INTO episodes({EPISODE_COLUMNS}) VALUES"
                             " (?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
        await db.executemany("INSERT INTO episodes_fts(rowid, words) VALUES (?,?)", fts)
        await db.executemany(
            "INSERT INTO aliases VALUES (?,?,?,?) ON CONFLICT(person, alias) DO UPDATE SET"
            " last_seen = max(last_seen, excluded.last_seen)", aliases)
        if columns:
            self.changes.append(EpisodesAdded(columns, keys, lengths))
        return [c.id for c in columns]

    async def _place(self, space: str, stamp: float, section_break: bool) -> tuple[int, int, int]:
        """The space's key, the next sequence number in it and its section (new after a silence)."""
        place = self._places.get(space)
        if place is None:
            db = self._writer
            rows = await fetch_rows(db, "SELECT id FROM spaces WHERE name = ?", (space,))
            if rows:
                key = rows[0][0]
            else:
                key = (await db.execute("INSERT INTO spaces(name) VALUES (?)", (space,))).lastrowid
            rows = await fetch_rows(
                db, "SELECT seq, section, time FROM episodes WHERE space = ? ORDER BY seq DESC LIMIT 1",
                (space,))
            place = SpacePlace(key, *rows[0]) if rows else SpacePlace(key, 0, 0, stamp)  # type: ignore[arg-type]
            self._places[space] = place
        if section_break or stamp - place.last_time > self._section_gap:
            place.section += 1
        place.seq += 1
        place.last_time = max(place.last_time, stamp)
        return place.key, place.seq, place.section

    async def delete_episodes(self, ids: Sequence[int]) -> list[int]:
        """Hard-delete episodes with their keyword rows and vectors; returns the ids deleted.

        The one exception to episodes being append-only (a person's right to have a line erased);
        ``secure_delete`` overwrites the freed pages."""
        db = self._writer
        sql, vals = in_list(map(int, ids))
        gone = [r[0] for r in await fetch_rows(db, f"SELECT id FROM episodes WHERE id IN {sql}", vals)]
        await self._delete("episodes", "e", gone)
        self.changes.append(EpisodesDeleted(gone))
        return gone

    # ---- memories ------------------------------------------------------------------------
    async def add_memory(self, m: Memory, *, supersedes: int | None = None) -> int:
        """Insert a memory (or a new version superseding ``supersedes``) with its sources."""
        db = self._writer
        root = None
        if supersedes is not None:
            async with db.execute("SELECT root, status FROM memories WHERE id = ?", (supersedes,)) as cur:
                row = await cur.fetchone()
            if row is None:
                raise UnknownIdError(f"no memory with id {supersedes}")
            if row[1] == "superseded":
                raise UnknownIdError(f"memory {supersedes} was already superseded")
            root = row[0]
            await db.execute("UPDATE memories SET status = 'superseded' WHERE id = ?", (supersedes,))
            await db.execute("DELETE FROM memories_fts WHERE rowid = ?", (supersedes,))
        cur = await db.execute(
            "INSERT INTO memories (root, kind, text, scope, subjects, importance, strength,"
            " last_recalled, created_at, valid_from, valid_to, status, supersedes)"
            " VALUES (0,?,?,?,?,?,?,?,?,?,?,?,?)",
            (m.kind, m.text, m.scope, json.dumps(list(m.subjects), ensure_ascii=False),
             m.importance, m.strength, timestamp(m.last_recalled), timestamp(aware(m.created_at)),
             timestamp(m.valid_from), timestamp(m.valid_to), m.status, supersedes))
        mid = int(cur.lastrowid)  # type: ignore[arg-type]
        await db.execute("UPDATE memories SET root = ? WHERE id = ?", (root or mid, mid))
        words = memory_words(m)
        await db.execute("INSERT INTO memories_fts(rowid, words) VALUES (?, ?)", (mid, words))
        await db.executemany("INSERT OR IGNORE INTO sources VALUES (?, ?)", [(mid, e) for e in m.sources])
        self.changes.append(MemoryAdded(mid, m.scope, m.status, word_count(words), supersedes))
        return mid

    async def set_memory_fields(self, memory_id: int, **fields: Any) -> None:
        """Change bookkeeping fields (status, strength, last_recalled, scope, importance) in place."""
        if not fields or set(fields) - SETTABLE:
            raise ValueError(f"only {sorted(SETTABLE)} can be set in place")
        vals = [timestamp(v) if isinstance(v, datetime) else v for v in fields.values()]
        sets = ", ".join(f"{k} = ?" for k in fields)
        await self._writer.execute(f"UPDATE memories SET {sets} WHERE id = ?", [*vals, memory_id])
        if "scope" in fields or "status" in fields:  # who may find it changed: read back only then
            row = await fetch_rows(self._writer, "SELECT scope, status FROM memories WHERE id = ?",
                                   (memory_id,))
            if row:
                self.changes.append(MemoryChanged(memory_id, row[0][0], row[0][1], frozenset(fields)))

    async def delete_memories(self, root_ids: Sequence[int]) -> list[int]:
        """Hard-delete every version of the given memories; returns the deleted row ids."""
        db = self._writer
        sql, vals = in_list(map(int, root_ids))
        async with db.execute(
            f"SELECT id FROM memories WHERE root IN (SELECT root FROM memories WHERE id IN {sql})", vals,
        ) as cur:
            ids = [r[0] for r in await cur.fetchall()]
        await self._delete("memories", "m", ids)
        self.changes.append(MemoriesDeleted(ids))
        return ids

    async def _delete(self, table: str, kind: str, ids: list[int]) -> None:
        """Delete rows of ``table`` (episodes 'e' or memories 'm') with their keyword rows and vectors."""
        for chunk in chunks(ids):
            q, v = in_list(chunk)
            await self._writer.execute(f"DELETE FROM {table}_fts WHERE rowid IN {q}", v)
            await self._writer.execute(f"DELETE FROM vectors WHERE kind = ? AND item IN {q}", [kind, *v])
            await self._writer.execute(f"DELETE FROM {table} WHERE id IN {q}", v)

    # ---- vectors and cursors -------------------------------------------------------------
    async def save_vectors(self, model: str, kind: str, rows: Sequence[EmbedRow],
                           vectors: np.ndarray) -> None:
        """Store each row's vector for ``model`` (replacing one it had)."""
        await self._writer.executemany(
            "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)",
            [(model, kind, r.id, vector_blob(v)) for r, v in zip(rows, vectors)])
        self.changes.append(VectorsSaved(model, kind, list(rows), vectors))

    async def drop_vectors(self, model: str) -> None:
        await self._writer.execute("DELETE FROM vectors WHERE model = ?", (model,))

    async def set_cursor(self, name: str, value: int) -> None:
        await self._writer.execute(
            "INSERT INTO cursors VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value",
            (name, value))

    async def save_job_run(self, job: str, record: dict[str, Any]) -> None:
        await self._writer.execute(
            "INSERT INTO job_runs VALUES (?, ?) ON CONFLICT(job) DO UPDATE SET record = excluded.record",
            (job, json.dumps(record, ensure_ascii=False)))
