"""Writing to the store: the one door for writes, a transaction under the writer lock (listeners hear
of its changes after COMMIT), and the write-ahead log truncated after a hard forget. What a
transaction writes is ``writes.SQLiteWrites``."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiosqlite

from ...errors import StoreError, StoreUnwritable
from ...model import Episode
from .. import Listener
from .codec import fetch_rows, insert_rows
from .damage import StoreDamaged
from .log_copier import LogCopier
from .postings_cache import STAMP, STAMP_SQL, PostingsCache
from .writes import NEXT_ID, Deferred, SQLiteWrites, WriterView

log = logging.getLogger("engram.store")
BUSY_WAIT = 60.0  # seconds a write waits for another process holding the file (SQLite's own wait is 5 s)


class Transactions:
    """The writer's side of the store: the one door for writes (``transaction``) and the checkpoint."""

    def __init__(self, path: Path, writer: aiosqlite.Connection | None, postings: PostingsCache,
                 copier: LogCopier | None, section_gap: float):
        self.path = path
        self._writer = writer  # None when the store was opened read-only: every write is refused
        self._postings = postings  # follows each commit's keyword rows (``postings_cache``)
        self.copier = copier  # copies the write-ahead log into the file after commits (None: read-only)
        self._lock = asyncio.Lock()  # one transaction (or checkpoint) at a time
        self._view = WriterView()  # the writer's view of each place, across transactions
        self._listeners: list[Listener] = []
        self.section_gap = section_gap  # seconds of silence in a place that start a new section
        self.damage: str | None = None  # what the check in the background found: no more writes but job runs

    @property
    def lock(self) -> asyncio.Lock:
        """Held while a transaction or a checkpoint runs (a write command outside them takes it too)."""
        return self._lock

    def listen(self, listener: Listener) -> None:
        """Call ``listener`` with each change, after the transaction holding it has committed."""
        self._listeners.append(listener)

    @asynccontextmanager
    async def transaction(self, *, bookkeeping: bool = False) -> AsyncIterator[SQLiteWrites]:
        """One write transaction under the writer lock: its writes commit together or not at all.

        Three trips to the writer's thread at most for a batch of episodes: BEGIN (with the count for
        the postings cache), the reads the writes need, and their deferred statements with the
        COMMIT. A failed rollback never hides the first error; listeners hear of the changes after
        COMMIT.

        Once the check in the background has found the file damaged (``damage``), every write is
        refused with what it found, but for ``bookkeeping`` (the jobs' records: the dashboard shows
        the failed check from them); they go into the log, not into the store file.
        """
        db = self._writable(bookkeeping)
        async with self._lock:
            writes = SQLiteWrites(db, self._view, self.section_gap)
            try:
                await _begin(db, STAMP_SQL)  # counted for the postings cache, in the same trip
            except BaseException:
                self._view.forget()
                raise
            try:
                yield writes
                stamp = await _commit(db, writes.deferred)
            except BaseException as e:
                self._view.forget()  # the cached seq/section may be ahead of the file now
                await self._undo(db, e)
                raise
        await self._committed(writes, stamp)

    async def append_episodes(self, episodes: Sequence[Episode], prepared: Sequence[tuple[str, int]]
                              ) -> list[int] | None:
        """Record ``episodes`` in one trip to the writer's thread (BEGIN, their rows, COMMIT) where a
        ``transaction`` takes three: recording's hot path (each trip is two threads waking each other).
        The writer's view gives out the ids and sequence numbers without reading the file
        (``SQLiteWrites.guess_episodes``), so this works once the view knows the file's last episode
        and every place of the batch; the trip checks, after BEGIN, that no other process wrote
        since. None, with nothing written, when the view cannot tell, another process wrote, or
        another holds the file's lock: the caller writes them in a ``transaction`` then (which reads
        what it needs, and waits for the lock)."""
        db = self._writable(False)
        trip = _one_trip(db)
        if trip is None:
            return None
        async with self._lock:
            writes = SQLiteWrites(db, self._view, self.section_gap)
            ids = writes.guess_episodes(episodes, prepared)
            if ids is None:
                return None
            try:
                stamp = await trip[0](_finish, trip[1], writes.deferred, writes.guessed)
            except BaseException as e:
                self._view.forget()
                await self._undo(db, e)
                if isinstance(e, _Guessed) or isinstance(e, sqlite3.OperationalError) and _busy(e):
                    return None  # nothing was written
                raise
        await self._committed(writes, stamp)
        return ids

    def _writable(self, bookkeeping: bool) -> aiosqlite.Connection:
        """The writer connection, unless the store was opened read-only or found damaged."""
        if self._writer is None:
            raise StoreError(f"{self.path} was opened read-only", code="store_read_only", path=self.path)
        if self.damage is not None and not bookkeeping:
            raise StoreDamaged(self.damage, path=self.path)
        return self._writer

    async def _undo(self, db: aiosqlite.Connection, e: BaseException) -> None:
        """Roll back what is left of a failed transaction; a full disk or a read-only file is raised
        as ``StoreUnwritable`` (the same write may succeed later)."""
        # no transaction left: a cancel that arrived after the COMMIT went through (a task stopped by
        # a reload), or a COMMIT refused for a full disk (SQLite rolled it back)
        if db.in_transaction:
            try:
                await db.execute("ROLLBACK")
            except sqlite3.Error as e2:
                log.warning("rollback failed (%s); the transaction had already ended", e2)
        if isinstance(e, sqlite3.Error) and cannot_write(e):
            raise StoreUnwritable(f"{self.path} cannot be written: {e}", code="store_unwritable",
                                  path=self.path) from e

    async def _committed(self, writes: SQLiteWrites, stamp: int) -> None:
        """After a COMMIT: the postings cache and the listeners follow it; the log is truncated if it
        erased anything."""
        if self.copier is not None:
            self.copier.committed()
        # before any listener; nothing else runs on this loop in between
        self._postings.committed(stamp, writes.keyword_inserts, writes.keyword_deletes)
        for change in writes.changes:
            for listener in self._listeners:
                listener(change)
        if writes.erased:  # no copy of hard-forgotten text may stay in the write-ahead log
            await self.checkpoint()

    async def vacuum(self) -> tuple[int, int]:
        """Rewrite the file with ``auto_vacuum=INCREMENTAL`` (once, for a file made before it: from then
        on an erase gives its pages back by itself); the file's size before and after. It takes as
        long as copying the file and as much free disk again, and writes wait meanwhile: the command
        line's ``vacuum``, with the bot stopped (docs/durability.md)."""
        if self._writer is None:
            raise StoreError(f"{self.path} was opened read-only", code="store_read_only", path=self.path)
        before = self.path.stat().st_size
        async with self._lock:
            await self._writer.execute_fetchall("PRAGMA auto_vacuum=INCREMENTAL")
            await self._writer.execute("VACUUM")
        await self.checkpoint()
        return before, self.path.stat().st_size

    async def checkpoint(self) -> bool:
        """Copy the write-ahead log into the file and truncate it (erased text must not linger there);
        False if readers kept it from finishing after a few tries (the next open finishes it).

        On a connection of its own: SQLiteStore's readers may be in the middle of a read, and SQLite
        refuses a checkpoint on a connection with a statement open."""
        if self._writer is None:
            raise StoreError(f"{self.path} was opened read-only", code="store_read_only", path=self.path)
        if self.damage is not None:
            raise StoreDamaged(self.damage, path=self.path)
        async with self._lock:
            if self.copier is not None:
                await self.copier.idle()  # a copy under way holds the checkpoint lock
            for attempt in range(5):
                if await asyncio.to_thread(_checkpoint, self.path):
                    return True
                await asyncio.sleep(0.1 * (attempt + 1))
        log.warning("the write-ahead log of %s could not be truncated yet (at the next open)", self.path)
        return False


async def _begin(db: aiosqlite.Connection, then: str) -> None:
    """BEGIN IMMEDIATE and the statement ``then``, in one trip to the writer's thread (nothing is
    left open if ``then`` fails). Another process writing the file for longer than the busy timeout
    (the command line forgetting a big place) is waited for up to ``BUSY_WAIT`` seconds, then a clear
    error: a batch of messages must not be dropped because a writer took six seconds."""
    start = time.monotonic()
    while True:
        try:
            await db.executescript(f"BEGIN IMMEDIATE; {then}")
            return
        except sqlite3.OperationalError as e:
            if db.in_transaction:
                await db.execute("ROLLBACK")
            if not _busy(e):
                raise
            waited = time.monotonic() - start
            if waited >= BUSY_WAIT:
                raise StoreError(f"the memory file stayed locked by another writer for {waited:.0f} s "
                                 "(another process writing it?); nothing was written",
                                 code="store_locked", seconds=round(waited)) from e
            log.warning("the memory file is locked by another writer (%.0f s so far); waiting", waited)
        except BaseException:
            if db.in_transaction:
                await db.execute("ROLLBACK")
            raise


def _busy(e: sqlite3.OperationalError) -> bool:
    """Whether ``e`` is SQLite's "another connection holds the lock" (SQLITE_BUSY)."""
    return getattr(e, "sqlite_errorcode", None) == 5 or "database is locked" in str(e)


async def _commit(db: aiosqlite.Connection, deferred: Deferred) -> int:
    """The deferred statements, a read of the postings count and COMMIT, in one trip to the writer's
    thread (each trip costs ~100 µs of two threads' time); returns the count this transaction set
    (``postings_cache.STAMP``).

    One trip through aiosqlite's private ``_execute`` (0.20-0.22: a function run in the connection's
    thread); an aiosqlite without it gets the same statements one trip each."""
    trip = _one_trip(db)
    if trip is not None:
        execute, conn = trip
        return int(await execute(_finish, conn, deferred))
    for sql, rows in deferred:
        await db.executemany(sql, rows)
    stamp = (await fetch_rows(db, _STAMP_READ, (STAMP,)))[0][0]
    await db.execute("COMMIT")
    return int(stamp)


def _one_trip(db: aiosqlite.Connection) -> tuple[Any, sqlite3.Connection] | None:
    """aiosqlite's way to run a function in the connection's thread and its ``sqlite3`` connection,
    if this aiosqlite has them where 0.20-0.22 keep them."""
    execute, conn = getattr(db, "_execute", None), getattr(db, "_connection", None)
    return (execute, conn) if execute is not None and isinstance(conn, sqlite3.Connection) else None


_STAMP_READ = "SELECT value FROM cursors WHERE name = ?"


def _open(conn: sqlite3.Connection, guessed: int) -> None:
    """BEGIN, counted for the postings cache, in the writer's thread; rolled back (``_Guessed``) unless
    the next episode id is ``guessed``."""
    conn.execute("BEGIN IMMEDIATE")
    conn.execute(STAMP_SQL)
    if conn.execute(NEXT_ID.format("episodes")).fetchone()[0] != guessed:
        conn.execute("ROLLBACK")
        raise _Guessed


class _Guessed(Exception):
    """The ids ``append_episodes`` gave out were not the file's next: another process wrote."""


def _finish(conn: sqlite3.Connection, deferred: Deferred, guessed: int | None = None) -> int:
    """``_commit`` in the writer's thread; with ``guessed`` (``append_episodes``), the transaction
    begins here too (``_open``)."""
    if guessed is not None:
        _open(conn, guessed)
    for sql, rows in deferred:
        insert_rows(conn, sql, rows)
    stamp = conn.execute(_STAMP_READ, (STAMP,)).fetchone()[0]
    conn.execute("COMMIT")
    return int(stamp)


NO_CHECKPOINT_ON_CLOSE = 1006  # SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE (sqlite3's constant from Python 3.12)


async def keep_log(db: aiosqlite.Connection) -> None:
    """Leave the write-ahead log as it is when ``db`` closes (SQLite copies it into the file when its
    last connection closes): for a file found damaged, which must not be written again."""
    trip = _one_trip(db)
    if trip is not None and hasattr(trip[1], "setconfig"):  # Python 3.12+
        execute, conn = trip
        await execute(conn.setconfig, NO_CHECKPOINT_ON_CLOSE, True)


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


UNWRITABLE = {8: "readonly", 10: "I/O error", 13: "full", 14: "cannot open"}  # SQLite's primary codes


def cannot_write(e: sqlite3.Error) -> bool:
    """Whether ``e`` says the file cannot be written now (full disk, read-only, I/O error), so the
    same write may succeed later (not a lock, a constraint or a bug)."""
    code = getattr(e, "sqlite_errorcode", None)  # Python 3.11+
    if code is not None:
        return code & 0xFF in UNWRITABLE
    said = str(e)
    return any(w in said for w in ("disk is full", "readonly database", "disk I/O error", "unable to open"))
