"""The SQLite store: one file per bot, WAL, one long-lived writer and read-only readers.

It implements ``memory.store.Store``; everything SQLite-specific (FTS5, pragmas, migrations, blob
layouts) stays in this package. Opened with ``read_only=True`` (the dashboard) it has no writer
at all: every connection is ``mode=ro`` and a write is refused.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import aiosqlite
import numpy as np

from ...errors import StoreError
from ...model import Episode, Memory, timestamp
from ...scopes import Visibility
from .. import EmbedRow, EpisodeColumnRow, KeywordRow, Listener, MemoryRankRow, Postings
from . import browse, days, keywords, progress, vectors
from .codec import (
    EPISODE_COLUMNS,
    MEMORY_COLUMNS,
    chunks,
    dt,
    episode_row,
    fetch_rows,
    in_list,
    memory_row,
    meta_names_image,
)
from .migrations import check_header, check_known_schema, check_migrated, migrate
from .writes import SQLiteWrites, WriterView

log = logging.getLogger("engram.store")

SECTION_GAP = timedelta(hours=3)  # a silence this long in a place starts a new section
# recall's candidate memories: what it checks and ranks them by
_RANK_COLUMNS = "id, text, scope, status, importance, strength, created_at, valid_from, last_recalled"
# each episode's columns kept in memory; meta only when it may name an image
_COLUMN_ROWS = ("SELECT id, time, tz, space, seq, section, shape, actor_name, kind,"
                " CASE WHEN meta != '{}' AND instr(meta, '\"image\"') THEN meta END"
                " FROM episodes WHERE id > ? ORDER BY id LIMIT ?")


class SQLiteStore:
    """Episodes, memories, sources, vectors, cursors and keyword tables in one SQLite file."""

    def __init__(self, path: Path, writer: aiosqlite.Connection | None, reader: aiosqlite.Connection,
                 quick: sqlite3.Connection):
        self.path = path
        self._writer = writer
        self._reader = reader
        # Recall's small indexed reads run right here on the event loop: each trip to aiosqlite's
        # thread costs a GIL hand-off (up to 5 ms on a busy machine), more than the read itself.
        self._quick = quick
        self._lock = asyncio.Lock()
        self._view = WriterView()  # the writer's view of each space, across transactions
        self._listeners: list[Listener] = []
        self.section_gap = SECTION_GAP.total_seconds()

    @property
    def read_only(self) -> bool:
        return self._writer is None

    # ---- opening -------------------------------------------------------------------------
    @classmethod
    async def open(cls, path: str | Path, *, durable: bool = False, read_only: bool = False) -> SQLiteStore:
        """Open (or create) the store at ``path``; a foreign or newer file is refused untouched.

        ``read_only``: open an existing, migrated store without a writer (``mode=ro`` only).
        """
        path = Path(path)
        check_header(path)
        if read_only:
            return await cls._open_read_only(path)
        try:
            writer = await aiosqlite.connect(path, isolation_level=None)
        except sqlite3.Error as e:
            raise StoreError(f"cannot open {path}: {e}") from e
        try:
            await check_known_schema(writer, path)
            for pragma in ("journal_mode=WAL", f"synchronous={'FULL' if durable else 'NORMAL'}",
                           "foreign_keys=ON", "busy_timeout=5000", "secure_delete=ON"):
                await writer.execute(f"PRAGMA {pragma}")
            await migrate(writer)
            # a forget killed after its commit left the erased text in the log's older frames
            await writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            reader, quick = await _readers(path)
        except BaseException:
            await writer.close()
            raise
        return cls(path, writer, reader, quick)

    @classmethod
    async def _open_read_only(cls, path: Path) -> SQLiteStore:
        if not path.exists():  # noqa: ASYNC240 - one stat, before anything opens
            raise StoreError(f"no store at {path} to open read-only")
        try:
            reader, quick = await _readers(path)
        except sqlite3.Error as e:
            raise StoreError(f"cannot open {path}: {e}") from e
        try:
            await check_known_schema(reader, path)
            await check_migrated(reader, path)
        except BaseException:
            quick.close()
            await reader.close()
            raise
        return cls(path, None, reader, quick)

    async def close(self) -> None:
        self._quick.close()
        await self._reader.close()
        if self._writer is not None:
            await self._writer.close()

    # ---- writing -------------------------------------------------------------------------
    def listen(self, listener: Listener) -> None:
        """Call ``listener`` with each change, after the transaction holding it has committed."""
        self._listeners.append(listener)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[SQLiteWrites]:
        """One write transaction under the writer lock: its writes commit together or not at all.

        A failed rollback never hides the first error; listeners hear of the changes after COMMIT.
        """
        db = self._writer
        if db is None:
            raise StoreError(f"{self.path} was opened read-only")
        async with self._lock:
            writes = SQLiteWrites(db, self._view, self.section_gap)
            try:
                await db.execute("BEGIN IMMEDIATE")
                try:
                    yield writes
                    await db.execute("COMMIT")
                except BaseException:
                    try:
                        await db.execute("ROLLBACK")
                    except sqlite3.Error as e:  # e.g. a cancel that arrived after the COMMIT went through
                        log.warning("rollback failed (%s); the transaction had already ended", e)
                    raise
            except BaseException:
                self._view.forget()  # the cached seq/section may be ahead of the file now
                raise
        for change in writes.changes:
            for listener in self._listeners:
                listener(change)
        if writes.erased:  # no copy of hard-forgotten text may stay in the write-ahead log
            await self.checkpoint()

    async def checkpoint(self) -> bool:
        """Copy the write-ahead log into the file and truncate it (erased text must not linger there);
        False if readers kept it from finishing after a few tries (the next open finishes it).

        On a connection of its own: SQLiteStore's readers may be in the middle of a read, and SQLite
        refuses a checkpoint on a connection with a statement open."""
        if self._writer is None:
            raise StoreError(f"{self.path} was opened read-only")
        async with self._lock:
            for attempt in range(5):
                if await asyncio.to_thread(_checkpoint, self.path):
                    return True
                await asyncio.sleep(0.1 * (attempt + 1))
        log.warning("the write-ahead log of %s could not be truncated yet (at the next open)", self.path)
        return False

    async def add_episodes(self, episodes: Sequence[Episode],
                           prepared: Sequence[tuple[str, int]] | None = None) -> list[int]:
        """Write ``episodes`` in one transaction; returns their ids once committed (see
        ``SQLiteWrites.add_episodes``)."""
        async with self.transaction() as tx:
            return await tx.add_episodes(episodes, prepared)

    async def add_memory(self, memory: Memory, *, supersedes: int | None = None) -> int:
        """Insert a memory (or a new version superseding ``supersedes``) with its sources."""
        async with self.transaction() as tx:
            return await tx.add_memory(memory, supersedes=supersedes)

    async def set_memory_fields(self, memory_id: int, **fields: Any) -> None:
        """Change bookkeeping fields (status, strength, last_recalled, scope, importance) in place."""
        async with self.transaction() as tx:
            await tx.set_memory_fields(memory_id, **fields)

    async def delete_memories(self, ids: Sequence[int]) -> list[int]:
        """Hard-delete every version of the given memories; returns the deleted row ids."""
        async with self.transaction() as tx:
            return await tx.delete_memories(ids)

    async def save_vectors(self, model: str, kind: str, rows: Sequence[EmbedRow],
                           vectors: np.ndarray) -> None:
        async with self.transaction() as tx:
            await tx.save_vectors(model, kind, rows, vectors)

    async def drop_vectors(self, model: str) -> None:
        async with self.transaction() as tx:
            await tx.drop_vectors(model)

    async def delete_episodes(self, ids: Sequence[int]) -> list[int]:
        """Hard-delete episodes with their keyword rows and vectors (see ``SQLiteWrites``)."""
        async with self.transaction() as tx:
            return await tx.delete_episodes(ids)

    async def erase(self, episode_ids: Sequence[int], memory_ids: Sequence[int], *,
                    people: Sequence[str] = (), spaces: Sequence[str] = ()) -> tuple[list[int], list[int]]:
        """Hard-forget, in one transaction (see ``SQLiteWrites.erase``); the log is truncated after."""
        async with self.transaction() as tx:
            return await tx.erase(episode_ids, memory_ids, people=people, spaces=spaces)

    async def existing(self, table: str, ids: Sequence[int]) -> list[int]:
        async with self.transaction() as tx:
            return await tx.existing(table, ids)

    async def all_versions(self, ids: Sequence[int]) -> list[int]:
        """Every version of the memories ``ids`` (those that exist), merged ones' originals included."""
        out: list[int] = []
        for chunk in chunks(list(map(int, ids))):
            sql, vals = in_list(chunk)
            out += [r[0] for r in self._read("SELECT id FROM memories WHERE root IN"
                                             f" (SELECT root FROM memories WHERE id IN {sql})", vals)]
        return sorted(set(out))

    async def set_strengths(self, rows: Sequence[tuple[int, float, float, str]]) -> None:
        async with self.transaction() as tx:
            await tx.set_strengths(rows)

    async def archive(self, ids: Sequence[int]) -> list[tuple[int, str]]:
        async with self.transaction() as tx:
            return await tx.archive(ids)

    async def keep_apart(self, ids: Sequence[int]) -> None:
        async with self.transaction() as tx:
            await tx.keep_apart(ids)

    async def merge_memories(self, merged: Memory, originals: Sequence[int]) -> int | None:
        async with self.transaction() as tx:
            return await tx.merge_memories(merged, originals)

    async def set_cursor(self, name: str, value: int) -> None:
        async with self.transaction() as tx:
            await tx.set_cursor(name, value)

    async def save_job_run(self, job: str, record: dict[str, Any]) -> None:
        async with self.transaction() as tx:
            await tx.save_job_run(job, record)

    # ---- episodes ------------------------------------------------------------------------
    async def get_episodes(self, ids: Sequence[int]) -> dict[int, Episode]:
        out: dict[int, Episode] = {}
        for chunk in chunks(list(ids)):
            sql, vals = in_list(chunk)
            rows = self._read(f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE id IN {sql}", vals)
            out.update((r[0], episode_row(r)) for r in rows)
        return out

    async def episode_index_words(self, ids: Sequence[int]) -> dict[int, list[str]]:
        """The keyword-index words of the episodes ``ids``: the text's, the speaker's, then the month
        and the year (``text.episode_words``)."""
        ins, vals = in_list(ids)
        rows = self._read(f"SELECT id, c0 FROM episodes_fts_content WHERE id IN {ins}", vals)
        return {i: keywords.unkeyed(words).split(" ") for i, words in rows if words}

    async def last_episode_time(self, space: str, before: datetime | None = None) -> datetime | None:
        sql = "SELECT time, tz FROM episodes WHERE space = ?"
        args: list[Any] = [space]
        if before is not None:
            sql += " AND time < ?"
            args.append(timestamp(before))
        async with self._reader.execute(sql + " ORDER BY time DESC LIMIT 1", args) as cur:
            row = await cur.fetchone()
        return dt(row[0], row[1]) if row else None

    async def episode_columns(self, after: int, limit: int) -> list[EpisodeColumnRow]:
        """The in-memory columns of up to ``limit`` episodes past ``after``, in id order."""
        return [EpisodeColumnRow(i, t, tz, space, seq, section, shape, name,
                                 kind == "image" or (meta is not None and meta_names_image(meta)),
                                 kind == "message_out")
                for i, t, tz, space, seq, section, shape, name, kind, meta in self._read(_COLUMN_ROWS,
                                                                                        (after, limit))]

    async def last_episode_id(self) -> int:
        return int(self._read("SELECT max(id) FROM episodes")[0][0] or 0)

    async def spaces(self) -> dict[int, str]:
        """Every space by its key."""
        return dict(self._read("SELECT id, name FROM spaces"))

    async def space_key(self, space: str) -> int | None:
        """The space's key (its number in the keyword table); None if nothing was recorded there."""
        row = self._quick.execute("SELECT id FROM spaces WHERE name = ?", (space,)).fetchone()
        return None if row is None else int(row[0])

    # ---- memories ------------------------------------------------------------------------
    async def get_memories(self, ids: Sequence[int]) -> dict[int, Memory]:
        out: dict[int, Memory] = {}
        for chunk in chunks(list(ids)):
            sql, vals = in_list(chunk)
            rows = self._read(f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id IN {sql}", vals)
            srcs: dict[int, list[int]] = {}
            for mid, eid in self._read(f"SELECT memory_id, episode_id FROM sources WHERE memory_id IN {sql}",
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
        rows = self._read(f"SELECT {_RANK_COLUMNS} FROM memories WHERE id IN {ins}", vals)
        return [MemoryRankRow(*r) for r in rows]

    async def versions(self, memory_id: int) -> list[int]:
        """Ids of every version of the memory ``memory_id`` belongs to, oldest first."""
        async with self._reader.execute(
            "SELECT id FROM memories WHERE root = (SELECT root FROM memories WHERE id = ?) ORDER BY id",
            (memory_id,),
        ) as cur:
            return [r[0] for r in await cur.fetchall()]

    # ---- keyword tables ------------------------------------------------------------------
    async def episode_postings(self, words: list[str], space_keys: list[int] | None) -> Postings:
        return keywords.episode_postings(self._quick, words, space_keys)

    async def memory_postings(self, words: list[str]) -> list[np.ndarray]:
        return keywords.memory_postings(self._quick, words)

    async def episode_keyword_rows(self, after: int, limit: int, ids: Sequence[int] | None = None
                                   ) -> list[KeywordRow]:
        return keywords.keyword_rows(self._quick, "episodes", after, limit, ids)

    async def memory_keyword_rows(self, after: int, limit: int, ids: Sequence[int] | None = None
                                  ) -> list[KeywordRow]:
        return keywords.keyword_rows(self._quick, "memories", after, limit, ids)

    # ---- vectors and cursors -------------------------------------------------------------
    async def items_to_embed(self, kind: str, after: int, limit: int) -> list[EmbedRow]:
        return await vectors.items_to_embed(self._writer or self._reader, kind, after, limit)

    async def vector_counts(self, model: str) -> list[tuple[str, str, int]]:
        return await vectors.vector_counts(self._reader, model)

    async def vectors_page(self, model: str, kind: str, after: int, limit: int
                           ) -> tuple[list[EmbedRow], np.ndarray]:
        return await vectors.vectors_page(self._reader, model, kind, after, limit)

    async def cursor(self, name: str) -> int:
        async with (self._writer or self._reader).execute("SELECT value FROM cursors WHERE name = ?",
                                                           (name,)) as cur:
            row = await cur.fetchone()
        return int(row[0]) if row else 0

    # ---- where background work stands ----------------------------------------------------
    async def cursors(self, prefix: str) -> dict[str, int]:
        """Every cursor whose name starts with ``prefix``, by name."""
        return await progress.cursors(self._writer or self._reader, prefix)

    async def episode_backlog(self, after: dict[str, int]) -> list[tuple[str, int, int, float, float]]:
        """(space, new episodes, last id, first time, last time) of every space with episodes past
        ``after[space]`` (0 when absent)."""
        return await progress.episode_backlog(self._writer or self._reader, after)

    async def episodes_after(self, space: str, after: int, limit: int) -> list[Episode]:
        """The first ``limit`` episodes of ``space`` past the id ``after``, oldest first."""
        return await progress.episodes_after(self._writer or self._reader, space, after, limit)

    async def job_runs(self) -> dict[str, dict[str, Any]]:
        """Each background job's record (last run, status, stats, totals)."""
        return await progress.job_runs(self._writer or self._reader)

    # ---- the bot's days (issue 13) -------------------------------------------------------
    async def episodes_between(self, start: datetime, end: datetime, limit: int) -> list[Episode]:
        """The first ``limit`` episodes of every space with ``start <= time < end``, in time order."""
        return await days.episodes_between(self._writer or self._reader, start, end, limit)

    async def memory_ids_of_kind(self, kind: str, status: str = "active") -> list[int]:
        """Ids of the memories of ``kind`` in ``status``, oldest first (diaries, self-images)."""
        return await days.memory_ids_of_kind(self._writer or self._reader, kind, status)

    async def last_time_with(self, actor: str, before: datetime | None = None,
                             space: str | None = None) -> datetime | None:
        """When ``actor`` last said something (in ``space``, or anywhere), before ``before``."""
        return await days.last_time_with(self._writer or self._reader, actor, before, space)

    # ---- browsing ------------------------------------------------------------------------
    async def list_memories(self, vis: Visibility | None = None, *, scope: str | None = None,
                            kind: str | None = None, status: str | None = "active", space: str | None = None,
                            people: Sequence[str] = (), named: str = "", text: str | None = None,
                            limit: int = 10, offset: int = 0) -> tuple[list[Memory], int]:
        """Memories ``vis`` may see (None: all) matching every filter given, newest first: one page
        of them and how many there are in all. ``status`` None: any; ``space``: learned there (its
        scope is that space's, or one of its sources was said there); ``people``: about any of them;
        ``named``: (or) about no known person, naming ``named`` in their text; ``text``: a substring
        of the text (case ignored for ASCII)."""
        ids, total = browse.memory_ids(self._quick, vis, scope=scope, kind=kind, status=status, space=space,
                                       people=people, named=named, text=text, limit=limit, offset=offset)
        found = await self.get_memories(ids)
        return [found[i] for i in ids if i in found], total

    async def people_named(self, name: str) -> list[str]:
        """The people who have gone by ``name`` (case ignored)."""
        rows = self._read("SELECT DISTINCT person FROM aliases WHERE lower(alias) = lower(?)", (name,))
        return [r[0] for r in rows]

    async def people_named_in(self, space: str, name: str) -> list[str]:
        """Who went by ``name`` (case folded) in ``space``, the latest first."""
        rows = self._read("SELECT person FROM place_names WHERE space = ? AND lower(name) = lower(?)"
                          " ORDER BY last_seen DESC", (space, name.strip()))
        return [r[0] for r in rows]

    async def names_in_space(self, space: str, people: Sequence[str]) -> dict[str, str]:
        """The display name each of ``people`` last went by in ``space``, for those who spoke there: a
        name from one chat is not shown in another."""
        if not people:
            return {}
        ins, vals = in_list(list(people))
        return dict(self._read(f"SELECT person, name FROM place_names WHERE space = ? AND person IN {ins}",
                               [space, *vals]))

    async def space_episodes(self, space: str, limit: int = 50, offset: int = 0) -> list[Episode]:
        """A space's episodes in order of place, one page."""
        return await browse.space_episodes(self._reader, space, limit, offset)

    async def memory_counts(self, by: str) -> dict[str, int]:
        """How many memories there are of each kind, scope or status (``by``)."""
        return await browse.memory_counts(self._reader, by)

    async def episodes_per_day(self, space: str | None = None) -> list[tuple[str, int]]:
        """(YYYY-MM-DD in the episode's own zone, count), oldest day first."""
        return await browse.episodes_per_day(self._reader, space)

    async def count_space_episodes(self, space: str) -> int:
        return await browse.count_space_episodes(self._reader, space)

    async def episodes_around(self, episode: Episode, before: int = 2, after: int = 2) -> list[Episode]:
        """The episode with its neighbours in its place, in order."""
        return await browse.episodes_around(self._reader, episode.space, episode.seq or 0, before, after)

    async def places(self) -> list[tuple[str, int, float]]:
        """(space, episodes, time of the last one) of every space, the busiest first."""
        return await browse.places(self._reader)

    async def people(self) -> list[tuple[str, str, int]]:
        """(person, latest name, episodes said) of everyone with a name, the most talkative first."""
        return await browse.people(self._reader)

    async def memories_about(self, limit: int) -> list[Memory]:
        """Active memories about someone, the most important first."""
        ids = await browse.memories_about_ids(self._reader, limit)
        found = await self.get_memories(ids)
        return [found[i] for i in ids if i in found]

    async def talks(self, limit: int) -> list[tuple[str, str, int]]:
        """(person, person, turns): who answers whom (consecutive lines by two people in one place)."""
        return await browse.talks(self._reader, limit)

    async def has_space(self, space: str) -> bool:
        """Whether ``space`` has an episode or a memory scoped to it."""
        return await browse.has_space(self._reader, space)

    # ---- facts about the store -----------------------------------------------------------
    async def counts(self) -> dict[str, int]:
        out = {}
        for name, sql in (
            ("episodes", "SELECT count(*) FROM episodes"),
            ("memories", "SELECT count(*) FROM memories WHERE status = 'active'"),
            ("archived", "SELECT count(*) FROM memories WHERE status = 'archived'"),
            ("superseded", "SELECT count(*) FROM memories WHERE status = 'superseded'"),
            ("spaces", "SELECT count(DISTINCT space) FROM episodes"),
            ("people", "SELECT count(DISTINCT person) FROM aliases"),
            ("vectors", "SELECT count(*) FROM vectors"),
        ):
            async with self._reader.execute(sql) as cur:
                out[name] = (await cur.fetchone())[0]  # type: ignore[index]
        return out

    async def aliases(self, person: str) -> list[str]:
        async with self._reader.execute(
            "SELECT alias FROM aliases WHERE person = ? ORDER BY last_seen DESC", (person,)) as cur:
            return [r[0] for r in await cur.fetchall()]

    async def integrity(self) -> list[str]:
        """Problems found by SQLite's integrity check and FTS5's own check (empty when sound)."""
        problems = []
        async with self._reader.execute("PRAGMA integrity_check") as cur:
            problems += [r[0] for r in await cur.fetchall() if r[0] != "ok"]
        if self._writer is None:  # FTS5's check is a write command
            return problems
        for t in ("episodes_fts", "memories_fts"):
            try:
                async with self._lock:
                    await self._writer.execute(f"INSERT INTO {t}({t}) VALUES ('integrity-check')")
            except sqlite3.DatabaseError as e:
                problems.append(f"{t}: {e}")
        return problems

    # ---- metabolism (issue 14): strength, merging, what a forget reaches ---------------------
    async def strength_rows(self, since: int = 0, limit: int = 100_000) -> list[tuple[Any, ...]]:
        """(id, strength, last recalled or created, importance, kind) of active memories past ``since``."""
        return await fetch_rows(self._reader, "SELECT id, strength, coalesce(last_recalled, created_at),"
                                " importance, kind FROM memories WHERE status = 'active' AND id > ?"
                                " ORDER BY id LIMIT ?", (since, limit))

    async def strength_of(self, ids: Sequence[int]) -> dict[int, tuple[float, float, str]]:
        """Each memory's (stored strength, last recalled or created, status)."""
        out = {}
        for chunk in chunks(sorted(set(ids))):
            sql, vals = in_list(chunk)
            for i, st, t, status in self._read(
                    "SELECT id, strength, coalesce(last_recalled, created_at), status FROM memories"
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

    async def memory_vectors(self, model: str, ids: Sequence[int]) -> dict[int, bytes]:
        out: dict[int, bytes] = {}
        for chunk in chunks(list(ids)):
            sql, vals = in_list(chunk)
            out.update(await fetch_rows(self._reader, "SELECT item, vec FROM vectors WHERE model = ?"
                                        f" AND kind = 'm' AND item IN {sql}", [model, *vals]))
        return out

    async def kept_apart(self, ids: Sequence[int]) -> set[tuple[int, int]]:
        """The pairs (a < b) among ``ids`` the model said record different things."""
        out: set[tuple[int, int]] = set()
        for chunk in chunks(list(ids)):
            sql, vals = in_list(chunk)
            out |= {(a, b) for a, b in self._read(f"SELECT a, b FROM kept_apart WHERE a IN {sql}", vals)}
        return out

    async def memories_citing(self, episode_ids: Sequence[int]) -> list[int]:
        """Memories (any status) with a source among ``episode_ids``."""
        out: set[int] = set()
        for chunk in chunks(sorted(set(episode_ids))):
            sql, vals = in_list(chunk)
            out |= {r[0] for r in self._read(
                f"SELECT DISTINCT memory_id FROM sources WHERE episode_id IN {sql}", vals)}
        return sorted(out)

    async def source_ids(self, memory_ids: Sequence[int]) -> list[int]:
        out: set[int] = set()
        for chunk in chunks(sorted(set(memory_ids))):
            sql, vals = in_list(chunk)
            out |= {r[0] for r in self._read(
                f"SELECT episode_id FROM sources WHERE memory_id IN {sql}", vals)}
        return sorted(out)

    async def episodes_where(self, *, actor: str | None = None, space: str | None = None,
                             mentions: Sequence[str] = ()) -> list[tuple[int, str]]:
        """(id, content) of the episodes said by ``actor``, in ``space``, or whose text holds one of
        ``mentions`` (a substring; the caller checks word edges)."""
        cond, args = [], []
        if actor is not None:
            cond.append("actor = ?")
            args.append(actor)
        if space is not None:
            cond.append("space = ?")
            args.append(space)
        for m in mentions:
            cond.append("instr(lower(content), lower(?)) > 0")
            args.append(m)
        if not cond:
            return []
        return await fetch_rows(self._reader, f"SELECT id, content FROM episodes WHERE {' OR '.join(cond)}",
                                args)

    async def memories_mentioning(self, names: Sequence[str]) -> list[tuple[int, str]]:
        """(id, text) of the memories whose text holds one of ``names`` (the caller checks word edges)."""
        if not names:
            return []
        cond = " OR ".join("instr(lower(text), lower(?)) > 0" for _ in names)
        return await fetch_rows(self._reader, f"SELECT id, text FROM memories WHERE {cond}", list(names))

    async def memories_where(self, *, subject: str | None = None, scope: str | None = None) -> list[int]:
        """Memories (any status) about ``subject`` or of ``scope``."""
        rows: list[Any] = []
        if subject is not None:
            rows += await fetch_rows(self._reader, "SELECT id FROM memories WHERE instr(subjects, ?) > 0",
                                     (json.dumps(subject, ensure_ascii=False),))
        if scope is not None:
            rows += await fetch_rows(self._reader, "SELECT id FROM memories WHERE scope = ?", (scope,))
        return sorted({r[0] for r in rows})

    def _read(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        """Rows of a quick indexed read, run on the event loop's own thread (see ``__init__``)."""
        return self._quick.execute(sql, args).fetchall()


def _checkpoint(path: Path) -> bool:
    """One TRUNCATE checkpoint on a short-lived connection; True when the log was emptied."""
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.execute("PRAGMA busy_timeout=5000")
        busy, _, _ = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        return not busy
    except sqlite3.OperationalError as e:
        log.debug("checkpoint of %s: %s", path, e)
        return False
    finally:
        db.close()


async def _readers(path: Path) -> tuple[aiosqlite.Connection, sqlite3.Connection]:
    """A read-only aiosqlite connection and a plain one for reads on the event loop's thread."""
    # as_uri() escapes '#', '?' and '%', which would otherwise cut the file name short
    uri = f"{path.resolve().as_uri()}?mode=ro"  # noqa: ASYNC240 - once per open
    reader = await aiosqlite.connect(uri, uri=True, isolation_level=None)
    await reader.execute("PRAGMA busy_timeout=5000")
    quick = sqlite3.connect(uri, uri=True, isolation_level=None)
    quick.execute("PRAGMA busy_timeout=5000")
    return reader, quick
