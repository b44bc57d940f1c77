"""Recording episodes: group commit, ids returned only after COMMIT.

Concurrent ``record()`` calls share one transaction (group commit); each episode's index words are
worked out when it is queued, so they overlap the previous batch's commit instead of holding the
writer. An id is handed back only once the transaction holding its episode has committed to the
write-ahead log, so an acknowledged episode survives the process being killed. Secrets in an episode's
text are redacted before it is queued (``text/redaction.py``); the store counts them (``REDACTED``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Sequence

from ..errors import StoreError, StoreUnwritable
from ..model import Episode
from ..store import Store, Writes
from ..text.redaction import DEFAULT, META_KEY, Redactor
from ..text.words import prepare_episode
from ..validate import checked_episode

log = logging.getLogger("engram")

MAX_BATCH = 1000  # episodes per group commit
REDACTED = "secrets_redacted"  # the cursor counting the secrets taken out of recorded episodes


class Recorder:
    """Queues episodes and writes them in batches; ``written`` is called after each commit."""

    def __init__(self, store: Store, written: Callable[[], None], redactor: Redactor = DEFAULT):
        self.store = store
        self._written = written
        self.redactor = redactor
        self._queue: list[tuple[Episode, tuple[str, int], asyncio.Future[int]]] = []
        self._flusher: asyncio.Task[None] | None = None

    async def record(self, episode: Episode) -> int:
        """Append an episode; returns its id once it is durably committed."""
        ep = self._checked(episode)
        fut: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        # No shield: a cancelled caller's future is done, so the flusher skips it; its episode is
        # written all the same and no other caller is touched.
        self._queue.append((ep, prepare_episode(ep), fut))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush_queue())
        return await fut

    async def record_many(self, episodes: Iterable[Episode]) -> list[int]:
        """Append many episodes in one transaction; returns their ids in order."""
        eps = [self._checked(e) for e in episodes]
        ids = await self._write(eps, [prepare_episode(e) for e in eps])
        self._written()
        return ids

    async def _write(self, eps: Sequence[Episode], prepared: Sequence[tuple[str, int]]) -> list[int]:
        """``eps`` in one transaction with the count of their secrets: the store's shortcut when it
        takes them (none had a secret to count), else a transaction."""
        if not any(e.meta.get(META_KEY) for e in eps):
            ids = await self.store.append_episodes(eps, prepared)
            if ids is not None:
                return ids
        async with self.store.transaction() as tx:
            ids = await tx.add_episodes(eps, prepared)
            await _count_redacted(tx, eps)
        return ids

    async def record_kept(self, records: Sequence[Episode | None], cursor: str) -> list[int]:
        """Write a journal's kept messages (``kept.py``; numbered from 1, None: one that could not be
        read) in one transaction that also moves the journal's ``cursor`` to the last number; those
        the cursor says the store holds already (a kill after that commit, before the journal was
        cleared) are skipped."""
        async with self.store.transaction() as tx:
            done = await tx.cursor(cursor)
            eps = [self._checked(e) for e in records[done:] if e is not None]
            ids = await tx.add_episodes(eps, [prepare_episode(e) for e in eps]) if eps else []
            await _count_redacted(tx, eps)
            await tx.set_cursor(cursor, max(done, len(records)))
        if ids:
            self._written()
        return ids

    def _checked(self, episode: Episode) -> Episode:
        return self.redactor.episode(checked_episode(episode))

    async def flush(self) -> None:
        """Wait until every queued episode is committed."""
        while self._flusher is not None and not self._flusher.done():
            await asyncio.shield(self._flusher)

    async def _flush_queue(self) -> None:
        while self._queue:
            batch, self._queue = self._queue[:MAX_BATCH], self._queue[MAX_BATCH:]
            try:
                ids = await self._write([e for e, _, _ in batch], [w for _, w, _ in batch])
            except Exception as e:
                if isinstance(e, StoreUnwritable):  # what waits behind this batch fails with it: a
                    batch, self._queue = batch + self._queue, []  # later one that fits in the room
                    # left would be stored before it (the caller keeps them all and writes them in order)
                if isinstance(e, StoreError):  # unwritable or found damaged: each caller hears of it
                    # (the plugin logs it once)
                    log.debug("recording %d episodes failed: %s", len(batch), e)
                else:
                    log.exception("recording %d episodes failed", len(batch))
                for _, _, fut in batch:
                    if not fut.done():
                        fut.set_exception(e)
                continue
            for (_, _, fut), i in zip(batch, ids):
                if not fut.done():
                    fut.set_result(i)
            self._written()


async def _count_redacted(tx: Writes, episodes: Sequence[Episode]) -> None:
    """Add the secrets taken out of ``episodes`` (each one's meta says how many) to the store's count,
    in the transaction that writes them."""
    n = sum(int(e.meta.get(META_KEY, 0) or 0) for e in episodes)
    if n:
        await tx.set_cursor(REDACTED, await tx.cursor(REDACTED) + n)
