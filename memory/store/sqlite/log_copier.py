"""Copying the write-ahead log into the store file in the background, off the writer's path.

SQLite's own automatic checkpoint runs inside the COMMIT that crosses its threshold: that writer
then waits for two fsyncs and the copy (10-40 ms on this project's machines, a third of the wall
time of 64 chats recording at once). Here the writer's threshold is raised to a safety net
(``SAFETY_NET`` pages) and a PASSIVE checkpoint runs on a connection of its own in a worker thread,
at most one every ``GAP`` seconds while commits come: it copies what is committed without waiting
for or blocking any writer or reader, and nothing it does changes what a commit guarantees (a
committed transaction is in the log, and the log is the file's truth until it is copied).

Once commits have paused for ``IDLE`` seconds, a log file grown past ``LOG_LIMIT`` by a burst is cut
back (a TRUNCATE checkpoint that waits for no one: with a reader or writer in the way it is left for
the next pause). SQLite's ``journal_size_limit`` would cut it at every restart of the log, in the
middle of the burst too, and cost a sixth of the recording rate (bench/RESULTS.md).
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger("engram.store")

# The writer's own automatic checkpoint, in pages (~40 MB at 4 KB): only when the copies in the
# background fall behind (a burst that never pauses between commits keeps the log from starting
# over until then; that writer then copies only what the last background copy had not).
SAFETY_NET = 10_000
GAP = 0.25  # seconds from the start of one copy to the next
IDLE = 1.0  # seconds without a commit after which a grown log is cut back
LOG_LIMIT = 4 << 20  # bytes of log file kept after a burst (a few seconds of a busy bot's commits)


class LogCopier:
    """PASSIVE checkpoints in a worker thread after commits, at most one every ``GAP`` seconds."""

    def __init__(self, path: Path):
        self._path = path
        self._db: sqlite3.Connection | None = None  # opened in the worker thread, used by one at a time
        self._task: asyncio.Task[None] | None = None  # waits for the gap, then copies
        self._copying: asyncio.Future[None] | None = None  # the copy under way in the thread
        self._dirty = False  # a commit since the last copy started
        self._commit = asyncio.Event()  # set by each commit: wakes the wait for a pause
        self._last = float("-inf")  # when the last copy started (the loop's clock)
        self._closed = False

    def committed(self) -> None:
        """A transaction committed: copy it, now or once the gap since the last copy has passed."""
        self._dirty = True
        self._commit.set()
        if not self._closed and (self._task is None or self._task.done()):
            self._task = asyncio.create_task(self._run(), name="engram-log-copy")

    async def idle(self) -> None:
        """Wait for the copy under way in the thread (if any) to end."""
        if self._copying is not None:
            await asyncio.gather(asyncio.shield(self._copying), return_exceptions=True)

    async def close(self) -> None:
        """Stop copying (a copy under way ends first), then close the connection."""
        self._closed = True
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        await self.idle()
        if self._db is not None:
            self._db.close()
            self._db = None

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while not self._closed:
            if not self._dirty:  # copied up to here: once commits pause, cut a grown log back
                self._commit.clear()
                try:
                    await asyncio.wait_for(self._commit.wait(), IDLE)
                    continue
                except asyncio.TimeoutError:
                    await self._in_thread(self._trim)
                    return
            wait = self._last + GAP - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            self._dirty = False
            self._last = loop.time()
            await self._in_thread(self._checkpoint)

    async def _in_thread(self, work: Callable[[], None]) -> None:
        self._copying = asyncio.ensure_future(asyncio.to_thread(work))
        try:
            await asyncio.shield(self._copying)
        except sqlite3.Error as e:  # the next commit tries again; the writer's safety net stays
            log.debug("background checkpoint of %s: %s", self._path, e)

    def _connection(self) -> sqlite3.Connection:
        if self._db is None:  # timeout 0: a checkpoint never waits for (nor holds up) anyone
            self._db = sqlite3.connect(self._path, timeout=0, isolation_level=None, check_same_thread=False)
        return self._db

    def _checkpoint(self) -> None:
        self._connection().execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()

    def _trim(self) -> None:
        """Cut the log file back to nothing when a burst left it larger than ``LOG_LIMIT``."""
        try:
            if Path(f"{self._path}-wal").stat().st_size <= LOG_LIMIT:
                return
        except FileNotFoundError:
            return
        self._connection().execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
