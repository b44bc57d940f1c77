"""Copying the write-ahead log into the store file in the background, off the writer's path.

SQLite's own automatic checkpoint runs inside the COMMIT that crosses its threshold: that writer
then waits for two fsyncs and the copy (10-40 ms on this project's machines, a third of the wall
time of 64 chats recording at once). Here the writer's threshold is raised to a safety net
(``SAFETY_NET`` pages) and a PASSIVE checkpoint runs on a connection of its own in a worker thread,
at most one every ``GAP`` seconds while commits come: it copies what is committed without waiting
for or blocking any writer or reader, and nothing it does changes what a commit guarantees (a
committed transaction is in the log, and the log is the file's truth until it is copied).
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from pathlib import Path

log = logging.getLogger("engram.store")

# The writer's own automatic checkpoint, in pages (~40 MB at 4 KB): only when the copies in the
# background fall behind (a burst that never pauses between commits keeps the log from starting
# over until then; that writer then copies only what the last background copy had not).
SAFETY_NET = 10_000
GAP = 0.25  # seconds from the start of one copy to the next


class LogCopier:
    """PASSIVE checkpoints in a worker thread after commits, at most one every ``GAP`` seconds."""

    def __init__(self, path: Path):
        self._path = path
        self._db: sqlite3.Connection | None = None  # opened in the worker thread, used by one at a time
        self._task: asyncio.Task[None] | None = None  # waits for the gap, then copies
        self._copying: asyncio.Future[None] | None = None  # the copy under way in the thread
        self._dirty = False  # a commit since the last copy started
        self._last = float("-inf")  # when the last copy started (the loop's clock)
        self._closed = False

    def committed(self) -> None:
        """A transaction committed: copy it, now or once the gap since the last copy has passed."""
        self._dirty = True
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
        while self._dirty and not self._closed:
            wait = self._last + GAP - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            self._dirty = False
            self._last = loop.time()
            self._copying = asyncio.ensure_future(asyncio.to_thread(self._checkpoint))
            try:
                await asyncio.shield(self._copying)
            except sqlite3.Error as e:  # the next commit tries again; the writer's safety net stays
                log.debug("background checkpoint of %s: %s", self._path, e)

    def _checkpoint(self) -> None:
        if self._db is None:
            self._db = sqlite3.connect(self._path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
