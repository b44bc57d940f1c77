"""Several instances, one memory: each commit's changes go into ``change_log`` (kinds and ids, in
commit order: one transaction writes at a time), and every instance follows the entries of the
others into its in-memory indexes, as if it had made them.

How soon: by polling the log's counter every ``FOLLOW_EVERY`` seconds (one indexed read of the
newest number), and at once at the start of each of its own transactions (so its own changes
always follow the others' in order). Polling rather than LISTEN/NOTIFY: a notification is lost
while a connection is down or busy, the counter is not; a second's delay is the bound.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import psycopg

from .. import (
    Change,
    EmbedRow,
    EpisodesAdded,
    EpisodesDeleted,
    Listener,
    MemoriesArchived,
    MemoriesDeleted,
    MemoryAdded,
    MemoryChanged,
    PlacesDeleted,
    VectorsSaved,
)
from .connection import Link, rows
from .recall_reads import RecallReads
from .writes import LogEntry

log = logging.getLogger("engram.store")
_WRITE_LOG = ("WITH e AS (SELECT * FROM unnest(%s::float8[], %s::text[], %s::text[], %s::text[], %s::text[])"
              " WITH ORDINALITY AS e(at, kind, ids, model, fields, k)),"
              " w AS (INSERT INTO change_log SELECT coalesce((SELECT max(n) FROM change_log), 0) + e.k, e.at,"
              " e.kind, e.ids::bigint[], e.model, e.fields FROM e RETURNING n) SELECT max(n) FROM w")
_UNREAD = "SELECT n, kind, ids, model, fields FROM change_log WHERE n > %s ORDER BY n"
FOLLOW_EVERY = 1.0  # seconds between two looks at the change log
KEEP_LOG = 3600.0  # seconds an entry stays: an instance stalled longer reloads (``Engram.open``)


class Following:
    """This instance's place in the change log, and the listeners it hands the others' changes to."""

    def __init__(self, reader: Link, reads: RecallReads, listeners: list[Listener]):
        self._db = reader
        self._reads = reads
        self._listeners = listeners
        self.seen = 0  # the last entry this instance's listeners have heard (its own or another's)
        self.places: dict[int, str] = {}  # each place's key: a forgotten place is logged by its key
        self._task: asyncio.Task[None] | None = None
        self._commits = 0
        self.others = 0  # how many entries of the other instances' this one has followed

    async def start(self) -> None:
        """Begin after what is committed now (what an opening loads from the tables)."""
        self.seen = int((await rows(self._db, "SELECT coalesce(max(n), 0) FROM change_log"))[0][0])
        self.places = dict((await self._reads.keyed_places()).items())

    def run(self, lock: asyncio.Lock) -> None:
        """Look for others' changes every ``FOLLOW_EVERY`` seconds, under the store's write lock."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._loop(lock), name="engram-follow")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None

    async def _loop(self, lock: asyncio.Lock) -> None:
        while True:
            await asyncio.sleep(FOLLOW_EVERY)
            try:
                async with lock:
                    await self.catch_up()
            except asyncio.CancelledError:
                raise
            except Exception as e:  # a database away for a while: tried again at the next look
                log.warning("Engram: could not read the other instances' changes (%s); trying again", e)

    def heard(self, change: Change) -> None:
        """Every change this instance's listeners hear: the keys of the places it knows."""
        if isinstance(change, EpisodesAdded):
            for key, r in zip(change.place_keys, change.rows):
                self.places[key] = r.place

    def unread(self) -> tuple[str, tuple[int]]:
        """The read of every entry past ``seen`` (a transaction sends it with its BEGIN: one trip)."""
        return _UNREAD, (self.seen,)

    async def catch_up(self, entries: list[Any] | None = None) -> int:
        """Hand the listeners every entry past ``seen`` (others', committed: ``entries`` when they were
        read already under the write lock); how many there were."""
        if entries is None:
            entries = await rows(self._db, *self.unread())
        self.others += len(entries)
        if entries and entries[0][0] > self.seen + 1 and self.seen:
            log.warning("Engram: change log entries %d-%d were pruned before this instance read them; "
                        "reopen it to reload its indexes", self.seen + 1, entries[0][0] - 1)
        for n, kind, ids, model, fields in entries:
            change = await self._change_of(kind, list(ids), model, fields)
            if change is not None:
                self.heard(change)
                for listener in self._listeners:
                    listener(change)
            self.seen = n
        return len(entries)

    async def write(self, db: psycopg.AsyncConnection, entries: list[LogEntry]
                    ) -> psycopg.AsyncCursor[Any] | None:
        """This transaction's entries, numbered after the last (the write lock is held: no race):
        sent, not waited for (the COMMIT goes in the same trip); the cursor whose row is the last
        number, for ``committed``."""
        if not entries:
            return None
        now = time.time()
        kinds, ids, models, fields = zip(*entries)
        # numbered after the last in the same statement; ids as text: arrays of arrays do not unnest
        # into rows
        texts = ["{" + ",".join(map(str, i)) + "}" for i in ids]
        cur = await db.execute(_WRITE_LOG, ([now] * len(entries), list(kinds), texts, list(models),
                                            list(fields)))
        self._commits += 1
        if self._commits % 200 == 1:
            await db.execute("DELETE FROM change_log WHERE at < %s", (now - KEEP_LOG,))
        return cur

    async def committed(self, written: psycopg.AsyncCursor[Any] | None) -> int | None:
        """This instance's own entries (``written``) were committed: its listeners hear them from the
        writes. The last entry's number (None: the transaction wrote none)."""
        if written is None:
            return None
        last = int((await written.fetchall())[0][0])
        self.seen = max(self.seen, last)
        return last

    async def _change_of(self, kind: str, ids: list[int], model: str, fields: str) -> Change | None:
        """The change an entry stands for, read back from the tables (rows erased since: left out)."""
        reads = self._reads
        if kind == "e+":
            columns = await reads.columns_of(ids)
            kws = {r.id: r for r in await reads.episode_keyword_rows(0, 0, [r.id for r in columns])}
            columns = [c for c in columns if c.id in kws]
            return EpisodesAdded(columns, [kws[c.id].group for c in columns],
                                 [kws[c.id].length for c in columns]) \
                if columns else None
        if kind == "e-":
            return EpisodesDeleted(ids)
        if kind == "m-":
            return MemoriesDeleted(ids)
        if kind == "p-":
            names = [self.places.pop(k) for k in ids if k in self.places]
            return PlacesDeleted(names) if names else None
        if kind in ("v", "q"):
            return await self._vectors(kind, model, fields, ids)
        found = {r.id: r for r in await reads.memory_keyword_rows(0, 0, ids)}
        status = dict(await rows(self._db, "SELECT id, status FROM memories WHERE id = ANY(%s)", (ids,)))
        scope = dict(await rows(self._db, "SELECT id, scope FROM memories WHERE id = ANY(%s)", (ids,)))
        if kind == "m+":
            if ids[0] not in scope:
                return None
            length = found[ids[0]].length if ids[0] in found else 0
            return MemoryAdded(ids[0], scope[ids[0]], status[ids[0]], length,
                               ids[1] if len(ids) > 1 else None)
        if kind == "m~":
            if ids[0] not in scope:
                return None
            return MemoryChanged(ids[0], scope[ids[0]], status[ids[0]], frozenset(fields.split(",")))
        if kind == "ma":
            kept = [i for i in ids if i in scope]
            return MemoriesArchived(kept, [scope[i] for i in kept]) if kept else None
        log.warning("Engram: a change log entry of an unknown kind %r (a newer Engram?) was skipped", kind)
        return None

    async def _vectors(self, kind: str, model: str, item_kind: str, ids: list[int]) -> Change | None:
        if kind == "v":
            got, vecs = await self._reads.vectors_of(model, item_kind, ids)
            return VectorsSaved(model, item_kind, got, vecs) if got else None
        found, qvecs = await self._reads.query_vectors(model, item_kind, ids)
        if not found:
            return None
        order = np.argsort(found)
        return VectorsSaved(model, item_kind, [EmbedRow(found[i], "", "", "") for i in order.tolist()],
                            qvecs[order])


Follower = Callable[[Change], None]
