"""Merging the episodes' keyword segments in the background, off the writer's path.

FTS5 writes each transaction's words as a new segment and merges a level's segments into one once it
holds a few of them; left to itself it does that merging inside the writes that follow, a little in
each. Recording into a million episodes, 64 chats at a time, that merging was a third of the
writer's time while a merge ran (the keyword rows 24-28 µs an episode against 8-13 without, and the
merged pages in each COMMIT), and the two threads that take turns in recording (the event loop's and
the writer's) leave the second core idle. So migration m015 turns FTS5's own merging in a write off
(``automerge`` 0) and has the merges start at eight segments a level (``usermerge`` 8), and here,
after each commit that added keyword rows, one step of merging (``'merge'``, ``STEP_PAGES`` pages or
more for a big batch) runs on a connection of its own in a worker thread. It never waits for the
writer (timeout 0: a step that finds the file's lock taken is left for the next commit) and holds the
lock for a few milliseconds, while the event loop prepares the next batch. A merge changes no
result: the same rows hold the same words. If steps ever fall behind (a host too busy to run them),
FTS5's own safety net (``crisismerge``: a level of 16 segments is merged in the write) still holds.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from pathlib import Path

log = logging.getLogger("engram.store")

STEP_PAGES = 32  # pages a step writes at least: a batch of 64 episodes needs ~20 (~4 flushed x 5 levels)
ROWS_A_PAGE = 4  # a bigger batch's step: a page more per this many keyword rows it added
MERGE = "INSERT INTO episodes_fts(episodes_fts, rank) VALUES ('merge', ?)"


class KeywordMerger:
    """One step of FTS5 merging in a worker thread after each commit that added keyword rows (one
    step at a time: a commit while one runs adds none)."""

    def __init__(self, path: Path):
        self._path = path
        self._db: sqlite3.Connection | None = None  # opened in the worker thread, used by one at a time
        self._step: asyncio.Future[None] | None = None  # the step under way in the thread
        self._closed = False

    def committed(self, keyword_rows: int) -> None:
        """A transaction that added ``keyword_rows`` keyword rows committed: merge a step's worth."""
        if keyword_rows > 0 and not self._closed and (self._step is None or self._step.done()):
            pages = max(STEP_PAGES, keyword_rows // ROWS_A_PAGE)
            self._step = asyncio.ensure_future(asyncio.to_thread(self._merge, pages))

    async def idle(self) -> None:
        """Wait for the step under way (if any) to end."""
        if self._step is not None:
            await asyncio.gather(asyncio.shield(self._step), return_exceptions=True)

    async def close(self) -> None:
        """Stop merging (a step under way ends first), then close the connection."""
        self._closed = True
        await self.idle()
        if self._db is not None:
            self._db.close()
            self._db = None

    def _merge(self, pages: int) -> None:
        if self._db is None:  # timeout 0: a step never waits for the writer
            self._db = sqlite3.connect(self._path, timeout=0, isolation_level=None, check_same_thread=False)
        try:
            self._db.execute(MERGE, (pages,))
        except sqlite3.Error as e:  # the file's lock taken (or worse: the writer hears of that)
            log.debug("keyword merge step on %s: %s", self._path, e)
