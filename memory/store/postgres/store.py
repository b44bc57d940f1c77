"""The PostgreSQL store: the Store protocol on a database several Engram instances may share.

Two connections per instance: a writer (the one door for writes, ``transactions``) and a reader
(every read, in autocommit: each sees what any instance committed). ``PostgresStore`` opens,
migrates and closes; the reads are the parts it is composed of (``recall_reads``, ``reads``,
``browse``), the writes ``writes``, following the other instances ``following``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg

from ...errors import StoreError
from ...model import Episode
from ..opening import STORE_NAME, shown
from .browse import Browse, check_summaries
from .connection import HOLD_OPEN, OPEN, TURNS, Link, connect, rows, value
from .following import Following
from .migrations import MIGRATIONS, migrate, pending
from .reads import Reads
from .recall_reads import RecallReads
from .transactions import ERASED_TABLES, Transactions

log = logging.getLogger("engram.store")
SECTION_GAP = timedelta(hours=3)  # as the SQLite store: a silence this long starts a new section


class PostgresStore:
    """Episodes, memories, sources, vectors, cursors and postings in one PostgreSQL database."""

    def __init__(self, url: str, folder: Path, writer: Link | None, reader: Link):
        self.url = url
        self.where = shown(url)
        self.path = folder / STORE_NAME  # its folder holds the diaries, identity and erase notes
        self._writer = writer
        self._reader = reader
        self._listeners: list[Any] = []
        self._turns: set[str] = set()  # the turns a task of this instance holds
        self.recall = recall = RecallReads(reader)
        self.reads = reads = Reads(reader)
        self.browse = browse = Browse(reader, recall)
        self.following = Following(reader, recall, self._listeners)
        self.writing = Transactions(self.where, self.path, writer, self.following, self._listeners,
                                    SECTION_GAP.total_seconds(), recall.postings)
        self.transaction = self.writing.transaction
        self.listen = self.writing.listen
        # RecallReads (and the indexer's reads)
        self.get_episodes = recall.get_episodes
        self.get_memories = recall.get_memories
        self.episode_index_words = recall.episode_index_words
        self.memory_rank_rows = recall.memory_rank_rows
        self.episode_columns = recall.episode_columns
        self.last_episode_id = recall.last_episode_id
        self.keyed_places = recall.keyed_places
        self.place_key = recall.place_key
        self.episode_postings = recall.episode_postings
        self.memory_postings = recall.memory_postings
        self.episode_keyword_rows = recall.episode_keyword_rows
        self.memory_keyword_rows = recall.memory_keyword_rows
        self.episode_keyword_page = recall.episode_keyword_page
        self.vector_counts = recall.vector_counts
        self.vectors_page = recall.vectors_page
        self.vector_scale = recall.vector_scale
        self.vector_codes_page = recall.vector_codes_page
        self.query_vectors_page = recall.query_vectors_page
        self.query_vectors = recall.query_vectors
        self.items_to_embed = recall.items_to_embed
        self.last_episode_time = recall.last_episode_time
        self.last_heard = recall.last_heard
        self.memory_vectors = recall.memory_vectors
        # ProgressReads, PeopleReads, DayReads, MetabolismReads, ForgettingReads, BundleReads, JobRuns
        self.cursor = reads.cursor
        self.erase_list_records = reads.erase_list_records
        self.cursors = reads.cursors
        self.episode_backlog = reads.episode_backlog
        self.episodes_after = reads.episodes_after
        self.aliases = reads.aliases
        self.people_named = reads.people_named
        self.people_named_in = reads.people_named_in
        self.people_mentioned_in = reads.people_mentioned_in
        self.names_in_place = reads.names_in_place
        self.episodes_between = reads.episodes_between
        self.memory_ids_of_kind = reads.memory_ids_of_kind
        self.last_time_with = reads.last_time_with
        self.strength_rows = reads.strength_rows
        self.strength_of = reads.strength_of
        self.scope_memories = reads.scope_memories
        self.memory_scopes = reads.memory_scopes
        self.kept_apart = reads.kept_apart
        self.all_versions = reads.all_versions
        self.memories_citing = reads.memories_citing
        self.source_ids = reads.source_ids
        self.episodes_where = reads.episodes_where
        self.lines_of = reads.lines_of
        self.memories_mentioning = reads.memories_mentioning
        self.names_holding = reads.names_holding
        self.memories_where = reads.memories_where
        self.episodes_page = reads.episodes_page
        self.memories_page = reads.memories_page
        self.alias_rows = reads.alias_rows
        self.place_name_rows = reads.place_name_rows
        self.place_title_rows = reads.place_title_rows
        self.place_names = reads.place_names
        self.kept_apart_pairs = reads.kept_apart_pairs
        self.job_runs = reads.job_runs
        self.ranking_state = reads.ranking_state
        self.recall_feedback = reads.recall_feedback
        self.place_titles = reads.place_titles
        # BrowseReads
        self.list_memories = browse.list_memories
        self.versions = browse.versions
        self.place_episodes = browse.place_episodes
        self.episodes_around = browse.episodes_around
        self.memory_counts = browse.memory_counts
        self.episodes_per_day = browse.episodes_per_day
        self.count_episodes = browse.count_episodes
        self.count_place_episodes = browse.count_place_episodes
        self.has_place = browse.has_place
        self.places = browse.places
        self.people = browse.people
        self.memories_about = browse.memories_about
        self.count_memories_about = browse.count_memories_about
        self.talks = browse.talks
        self.count_talks = browse.count_talks
        self.counts = browse.counts

    @property
    def read_only(self) -> bool:
        return self._writer is None

    async def append_episodes(self, episodes: Sequence[Episode], prepared: Sequence[tuple[str, int]]
                              ) -> list[int] | None:
        """No shortcut here: recording uses a ``transaction`` (``Store.append_episodes``)."""
        return None

    @asynccontextmanager
    async def turn(self, name: str) -> AsyncIterator[bool]:
        """A session advisory lock on ``name`` (on the reader: autocommit, so no transaction's end
        lets it go early), tried, not waited for: False while another instance holds it, or another
        task of this one (a session's advisory locks stack: they would not keep it out)."""
        if name in self._turns:
            yield False
            return
        self._turns.add(name)
        try:
            key = ("SELECT {}(%s, hashtext(%s))", (TURNS, name))
            mine = bool(await value(self._reader, key[0].format("pg_try_advisory_lock"), key[1]))
            try:
                yield mine
            finally:
                if mine:
                    await value(self._reader, key[0].format("pg_advisory_unlock"), key[1])
        finally:
            self._turns.discard(name)

    async def save_job_run(self, job: str, record: dict[str, Any]) -> None:
        async with self.transaction() as tx:
            await tx.save_job_run(job, record)

    # ---- opening -------------------------------------------------------------------------
    @classmethod
    async def open(cls, url: str, folder: str | Path | None = None, *,
                   read_only: bool = False, alone: bool = False) -> PostgresStore:
        """Open the database at ``url`` (its tables created or migrated); ``read_only``: one Engram
        made, without a writer. ``folder``: the data folder beside it (diaries, identity; default
        the working directory). Every open store holds the database open (a shared advisory lock, for
        as long as it is open; an open waits while a restore runs); ``alone``: refused while any other
        store has it open, and none can open it until this one closes (a restore)."""
        where = shown(url)
        folder = Path(folder) if folder is not None else Path.cwd()
        reader = await connect(url, read_only=read_only)
        writer = None
        try:
            await _hold_open(reader, where, alone)
            if read_only:
                await _check_known(reader, where)
                if await pending(reader):
                    raise StoreError(f"no Engram store at {where} to open read-only (or one not migrated)",
                                     code="store_missing", path=where)
            else:
                writer = await connect(url)
                await _check_known(writer, where)
                await migrate(writer)
            self = cls(url, folder, None if writer is None else Link(url, writer),
                       Link(url, reader, read_only=read_only, hold="" if alone else HOLD_OPEN))
            if writer is not None:
                await self.following.start()
                self.listen(self.following.heard)
                self.following.run(self.writing.lock)
            return self
        except BaseException:
            await reader.close()
            if writer is not None:
                await writer.close()
            raise

    @classmethod
    @asynccontextmanager
    async def snapshot(cls, url: str, folder: str | Path | None = None) -> AsyncIterator[PostgresStore]:
        """The database as one moment: a read-only store whose every read runs in one REPEATABLE READ
        transaction on a connection of its own (what any instance commits meanwhile is not in it), for
        a backup. It takes no lock: the instances record and reply meanwhile."""
        where = shown(url)
        conn = await connect(url, read_only=True)
        try:
            await _check_known(conn, where)
            if await pending(conn):
                raise StoreError(f"no Engram store at {where} to copy (or one not migrated)",
                                 code="store_missing", path=where)
            await conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            await conn.execute("SELECT 1")  # the moment is taken at the first statement: now
            yield cls(url, Path(folder) if folder is not None else Path.cwd(), None,
                      Link(url, conn, read_only=True, reconnect=False))
        finally:
            await conn.close()

    async def close(self) -> None:
        await self.following.stop()
        await self._reader.close()
        if self._writer is not None:
            await self._writer.close()

    # ---- the database itself -------------------------------------------------------------
    async def integrity(self) -> list[str]:
        """The counts kept beside the episodes against a count of them, and every episode's postings
        row present (empty when sound)."""
        problems = await check_summaries(self._reader)
        n = (await rows(self._reader, "SELECT count(*) FROM episodes e WHERE NOT EXISTS"
                        " (SELECT 1 FROM episodes_kw k WHERE k.id = e.id)"))[0][0]
        if n:
            problems.append(f"episodes_kw: {n} episodes without their keyword row")
        return problems

    async def checkpoint(self) -> bool:
        """Nothing to copy: PostgreSQL keeps its own write-ahead log (docs/postgres.md); refused
        read-only, as every write."""
        if self._writer is None:
            raise StoreError(f"{self.where} was opened read-only", code="store_read_only", path=self.where)
        return True

    async def vacuum(self) -> tuple[int, int]:
        """VACUUM FULL of the store's tables (rewritten without their dead rows); the database's size
        before and after."""
        if self._writer is None:
            raise StoreError(f"{self.where} was opened read-only", code="store_read_only", path=self.where)
        size = "SELECT pg_database_size(current_database())"
        before = (await rows(self._writer, size))[0][0]
        async with self.writing.lock:
            await (await self._writer.get()).execute("VACUUM FULL "  # type: ignore[arg-type]
                                                     + ", ".join(ERASED_TABLES))
        return int(before), int((await rows(self._writer, size))[0][0])

    async def check(self) -> dict[str, int]:
        started = time.monotonic()
        problems = await self.integrity()
        if problems:
            raise StoreError(f"{self.where}: " + "; ".join(problems), code="store_damaged", path=self.where)
        return {"seconds": round(time.monotonic() - started)}


async def _hold_open(db: psycopg.AsyncConnection, where: str, alone: bool) -> None:
    """The shared hold every open store keeps (waiting while a restore runs), or, ``alone``, the whole."""
    if not alone:
        await db.execute(HOLD_OPEN)  # type: ignore[arg-type]
    elif not await value(db, "SELECT pg_try_advisory_lock(%s)", (OPEN,)):
        raise StoreError(f"{where} is open in another Engram instance (a bot, the MCP server, a dashboard or "
                         "a command): stop them all first; nothing was changed", code="store_in_use",
                         path=where)


async def _check_known(db: psycopg.AsyncConnection, where: str) -> None:
    """Refuse a database a newer Engram migrated (a migration this one does not know)."""
    if (await rows(db, "SELECT to_regclass('_migrations') IS NULL"))[0][0]:
        return
    known = {n for n, _ in MIGRATIONS}
    newer = [r[0] for r in await rows(db, "SELECT name FROM _migrations") if r[0] not in known]
    if newer:
        raise StoreError(f"{where} was migrated by a newer Engram ({', '.join(sorted(newer))}): update the "
                         "plugin; nothing was changed", code="store_newer", path=where)
