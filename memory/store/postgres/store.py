"""The PostgreSQL store: the Store protocol on a database several Engram instances may share.

Two connections per instance: a writer (the one door for writes, ``transactions``) and a reader
(every read, in autocommit: each sees what any instance committed). ``PostgresStore`` opens,
migrates and closes; the reads are the parts it is composed of (``recall_reads``, ``reads``,
``browse``), the writes ``writes``, following the other instances ``following``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg

from ...errors import StoreError
from ..opening import shown
from .browse import Browse, check_summaries
from .connection import TURNS, rows, value
from .following import Following
from .migrations import MIGRATIONS, migrate, pending
from .reads import Reads
from .recall_reads import RecallReads
from .transactions import ERASED_TABLES, Transactions

log = logging.getLogger("engram.store")
SECTION_GAP = timedelta(hours=3)  # as the SQLite store: a silence this long starts a new section
STORE_NAME = "engram.postgres"  # the store's ``path`` in the data folder (nothing is written there)


class PostgresStore:
    """Episodes, memories, sources, vectors, cursors and postings in one PostgreSQL database."""

    def __init__(self, url: str, folder: Path, writer: psycopg.AsyncConnection | None,
                 reader: psycopg.AsyncConnection):
        self.url = url
        self.where = shown(url)
        self.path = folder / STORE_NAME  # its folder holds the diaries, identity and erase notes
        self._writer = writer
        self._reader = reader
        self._listeners: list[Any] = []
        self.recall = recall = RecallReads(reader)
        self.reads = reads = Reads(reader)
        self.browse = browse = Browse(reader, recall)
        self.following = Following(reader, recall, self._listeners)
        self.writing = Transactions(self.where, self.path, writer, self.following, self._listeners,
                                    SECTION_GAP.total_seconds())
        self.transaction = self.writing.transaction
        self.listen = self.writing.listen
        for name in ("get_episodes", "get_memories", "episode_index_words", "memory_rank_rows", "episode_columns",
                     "last_episode_id", "keyed_places", "place_key", "episode_postings", "memory_postings",
                     "episode_keyword_rows", "memory_keyword_rows", "vector_counts", "vectors_page",
                     "query_vectors_page", "query_vectors", "items_to_embed", "last_episode_time", "last_heard",
                     "memory_vectors"):
            setattr(self, name, getattr(recall, name))
        for name in ("cursor", "cursors", "episode_backlog", "episodes_after", "aliases", "people_named",
                     "people_named_in", "people_mentioned_in", "names_in_place", "episodes_between",
                     "memory_ids_of_kind", "last_time_with", "strength_rows", "strength_of", "scope_memories",
                     "memory_scopes", "kept_apart", "all_versions", "memories_citing", "source_ids",
                     "episodes_where", "lines_of", "memories_mentioning", "names_holding", "memories_where",
                     "episodes_page", "memories_page", "alias_rows", "place_name_rows", "place_title_rows",
                     "place_names", "kept_apart_pairs", "job_runs", "place_titles"):
            setattr(self, name, getattr(reads, name))
        for name in ("list_memories", "versions", "place_episodes", "episodes_around", "memory_counts",
                     "episodes_per_day", "count_episodes", "count_place_episodes", "has_place", "places", "people",
                     "memories_about", "count_memories_about", "talks", "count_talks", "counts"):
            setattr(self, name, getattr(browse, name))

    @property
    def read_only(self) -> bool:
        return self._writer is None

    @asynccontextmanager
    async def turn(self, name: str) -> AsyncIterator[bool]:
        """A session advisory lock on ``name`` (on the reader: autocommit, so no transaction's end
        lets it go early), tried, not waited for: False while another instance holds it."""
        key = ("SELECT {}(%s, hashtext(%s))", (TURNS, name))
        mine = bool(await value(self._reader, key[0].format("pg_try_advisory_lock"), key[1]))
        try:
            yield mine
        finally:
            if mine:
                await value(self._reader, key[0].format("pg_advisory_unlock"), key[1])

    async def save_job_run(self, job: str, record: dict[str, Any]) -> None:
        async with self.transaction() as tx:
            await tx.save_job_run(job, record)

    # ---- opening -------------------------------------------------------------------------
    @classmethod
    async def open(cls, url: str, folder: str | Path | None = None, *, read_only: bool = False) -> PostgresStore:
        """Open the database at ``url`` (its tables created or migrated); ``read_only``: one Engram
        made, without a writer. ``folder``: the data folder beside it (diaries, identity; default
        the working directory)."""
        where = shown(url)
        folder = Path(folder) if folder is not None else Path.cwd()
        try:
            reader = await psycopg.AsyncConnection.connect(url, autocommit=True)
        except psycopg.Error as e:
            raise StoreError(f"cannot open {where}: {shown(str(e))}", code="store_cannot_open", path=where) from e
        writer = None
        try:
            if read_only:
                await reader.execute("SET default_transaction_read_only = on")
                await _check_known(reader, where)
                if await pending(reader):
                    raise StoreError(f"no Engram store at {where} to open read-only (or one not yet migrated)",
                                     code="store_missing", path=where)
            else:
                writer = await psycopg.AsyncConnection.connect(url, autocommit=True)
                await _check_known(writer, where)
                await migrate(writer)
            self = cls(url, folder, writer, reader)
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
            await self._writer.execute("VACUUM FULL " + ", ".join(ERASED_TABLES))  # type: ignore[arg-type]
        return int(before), int((await rows(self._writer, size))[0][0])

    async def check(self) -> dict[str, int]:
        started = time.monotonic()
        problems = await self.integrity()
        if problems:
            raise StoreError(f"{self.where}: " + "; ".join(problems), code="store_damaged", path=self.where)
        return {"seconds": round(time.monotonic() - started)}


async def _check_known(db: psycopg.AsyncConnection, where: str) -> None:
    """Refuse a database a newer Engram migrated (a migration this one does not know)."""
    if (await rows(db, "SELECT to_regclass('_migrations') IS NULL"))[0][0]:
        return
    known = {n for n, _ in MIGRATIONS}
    newer = [r[0] for r in await rows(db, "SELECT name FROM _migrations") if r[0] not in known]
    if newer:
        raise StoreError(f"{where} was migrated by a newer Engram ({', '.join(sorted(newer))}): update the "
                         "plugin; nothing was changed", code="store_newer", path=where)
