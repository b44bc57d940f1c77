"""Writing to the PostgreSQL store: the one door for writes. One transaction writes at a time across
every instance on the database (an advisory lock held to its COMMIT), so ids and each place's
sequence numbers are given out in commit order, and the change log numbers commits in that order."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import psycopg

from ...errors import StoreError, StoreUnwritable
from .. import Listener
from .connection import WRITING, Link
from .following import Following
from .postings_cache import PostingsCache
from .writes import PostgresWrites, WriterView

log = logging.getLogger("engram.store")
# the tables a hard forget deletes from: vacuumed after it (docs/postgres.md says what that does)
ERASED_TABLES = ("episodes", "episodes_kw", "episode_words", "memories", "memories_kw", "memory_words",
                 "sources", "vectors", "aliases", "place_names", "place_titles", "spaces", "cursors")


class Transactions:
    def __init__(self, where: str, path: Path, writer: Link | None, following: Following,
                 listeners: list[Listener], section_gap: float, postings: PostingsCache):
        self.where = where  # the database, as it may be shown (no password)
        self.path = path
        self._writer = writer  # None: opened read-only
        self._following = following
        self._listeners = listeners
        self._section_gap = section_gap
        self.lock = asyncio.Lock()  # one transaction of this instance at a time (and the follower's look)
        self._postings = postings  # the recall reads' cache of doclists: it follows each commit
        self._view = WriterView()  # places and ids between this instance's transactions

    def listen(self, listener: Listener) -> None:
        self._listeners.append(listener)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[PostgresWrites]:
        if self._writer is None:
            raise StoreError(f"{self.where} was opened read-only", code="store_read_only", path=self.where)
        async with self.lock:
            db, unread = await self._begin()
            writes = PostgresWrites(db, self._section_gap, self._view)
            try:
                await self._following.catch_up(unread)  # others' commits first, in their order
                if self._following.others != self._view.others:  # another instance wrote since
                    self._view.forget()
                    self._view.others = self._following.others
                yield writes
                async with db.pipeline():  # the change log and the COMMIT in one trip
                    written = await self._following.write(db, writes.log)
                    await db.execute("COMMIT")
            except BaseException as e:
                self._view.forget()  # its cached numbers may be ahead of the database now
                if not (db.closed or db.broken):
                    try:
                        await db.execute("ROLLBACK")
                    except psycopg.Error as e2:  # the first error stands
                        log.warning("rollback failed (%s)", e2)
                if isinstance(e, psycopg.OperationalError):
                    raise StoreUnwritable(f"{self.where} cannot be written now: {e}", code="store_unwritable",
                                          path=self.where) from e
                raise
            last = await self._following.committed(written)
            if last is not None:
                self._postings.committed(last - len(writes.log) + 1, last, writes.postings_added,
                                         writes.postings_cleared)
        for change in writes.changes:
            self._following.heard(change)
            for listener in self._listeners:
                listener(change)
        if writes.erased:
            await self.vacuum_erased()

    async def _begin(self) -> tuple[psycopg.AsyncConnection, list[Any]]:
        """BEGIN, the write lock and the change log's entries this instance has not followed yet (read
        under the lock), in one trip to the writer; a connection the server dropped since the last
        transaction is opened again once (nothing was written on it yet)."""
        assert self._writer is not None
        for attempt in (1, 2):
            try:
                db = await self._writer.get()
                async with db.pipeline():
                    await db.execute("BEGIN")
                    await db.execute("SELECT pg_advisory_xact_lock(%s)", (WRITING,))
                    unread = await db.execute(*self._following.unread())  # type: ignore[arg-type]
                return db, await unread.fetchall()
            except (psycopg.OperationalError, StoreError) as e:
                if attempt == 2 or isinstance(e, StoreError):  # the server is away: the journal keeps it
                    raise StoreUnwritable(f"{self.where} cannot be written now: {e}", code="store_unwritable",
                                          path=self.where) from e
        raise AssertionError("unreachable")

    async def vacuum_erased(self) -> None:
        """VACUUM the tables a forget deleted from: their dead rows' space is reclaimed now rather than
        whenever autovacuum comes by (docs/postgres.md: what it does not reach)."""
        assert self._writer is not None
        try:
            async with self.lock:
                await (await self._writer.get()).execute("VACUUM " + ", ".join(ERASED_TABLES))  # type: ignore[arg-type]
        except psycopg.Error as e:
            log.warning("Engram: VACUUM after a forget failed (%s); autovacuum will reclaim the rows", e)
