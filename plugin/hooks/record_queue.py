"""The plugin's recording queue: what the hooks hand over is written in order, off the reply's path.

Recording never delays a message: the hook queues the message and returns; one writer task keeps
the order of the queue (an image waiting for its caption holds back later lines of the same run)
and hands episodes to ``Engram.record``, which commits them in groups. ``stop()`` writes what is
queued and waits for every write, so a reload loses and duplicates nothing.

When the store cannot be written (a full disk, a read-only folder: ``StoreUnwritable``; a store the
weekly check found damaged, or one that cannot be opened: ``StoreError``), the messages are kept, in
order, in the journal beside it (``memory/kept.py``: a reserve written in place on a full disk), so a
kill or a stop loses none; those the journal cannot take are kept in memory (at most ``MAX_HELD``).
They are written before any newer one as soon as the store takes them: with the next message, or
every ``RETRY`` seconds, or at the next start (a damaged store: once it is repaired or replaced).
The log says so once, and again when they are written.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

from ...memory import Engram, Episode, StoreDamaged, StoreError, StoreUnwritable
from ...memory.backups import newest_backup_line
from ...memory.outage import Outage
from ...memory.recording.journal import SUFFIX as KEPT_SUFFIX
from ...memory.recording.journal import KeptJournal

log = logging.getLogger("engram.plugin")

MAX_HELD = 10_000  # messages kept in memory (not in the journal) while the store cannot be written
RETRY = 10.0  # seconds between tries to write them when no new message comes

# what the queue holds: episodes, episodes still being made (an image's caption), or the stop sign
Item = list[Episode] | asyncio.Task[list[Episode]] | None


class RecordingQueue:
    """One writer task over a queue of episodes; ``listeners`` are told each place an episode was
    committed in (the K-new-messages trigger)."""

    def __init__(self, memory: Callable[[], Awaitable[Engram]], listeners: list[Callable[[str], object]],
                 journal: Path, redact: Callable[[Episode], Episode] = lambda ep: ep):
        self._memory = memory
        self._redact = redact  # secrets out before a line reaches the journal or the store
        self._listeners = listeners
        self.journal = KeptJournal(journal)  # what the store could not take, on disk (read once, here)
        self.store_path = journal.with_name(journal.name.removesuffix(KEPT_SUFFIX))
        self._queue: asyncio.Queue[Item] | None = None
        self._writer: asyncio.Task[None] | None = None
        self._writes: set[asyncio.Task[Any]] = set()
        kept = f"they are kept in {journal}"
        self._outage = Outage(log, f"Engram: messages are not being recorded: %s; {kept} and written once "
                                   "the store opens", "Engram: messages are recorded again",
                              level=logging.ERROR, trace=True)
        self._failing = Outage(log, "Engram: messages are not being recorded: %s",  # anything else
                               "Engram: messages are recorded again", level=logging.ERROR, trace=True)
        self.held: list[Episode] = []  # not written and not in the journal (oldest first; after its)
        self._dropped = 0  # held ones given up for newer ones (over ``MAX_HELD``)
        self._unwritable = Outage(
            log, f"Engram: messages are not being recorded: %s; {kept} (or in memory, up to {MAX_HELD:,}) "
                 "and written as soon as the store can be written again",
            "Engram: messages are recorded again", level=logging.ERROR)
        self._damaged = Outage(log, f"Engram: messages are not being recorded: %s; {kept} and written "
                                    "into the store at the first start after it is repaired or replaced",
                               "", level=logging.ERROR)
        self.refused = False  # damaged, or cannot open: no timed retries (a new message still tries)
        self._retry: asyncio.Task[None] | None = None
        self._writing_kept = False

    @property
    def pending(self) -> int:
        """Messages said that the store does not hold yet (in the journal or in memory)."""
        return self.journal.count + len(self.held)

    def opened(self) -> None:
        """The store opened: keep the journal's reserve ready; messages a previous run kept in it are
        written (by the writer, before any newer one)."""
        self.journal.reserve()
        if self.journal.count:
            self.put([])

    @property
    def running(self) -> bool:
        """Whether the writer task is there (from the first message until ``stop()``)."""
        return self._writer is not None

    def put(self, item: Item) -> None:
        if self._queue is None:
            self._queue = asyncio.Queue()
            self._writer = asyncio.create_task(self._write_loop(self._queue), name="engram-recorder")
        self._queue.put_nowait(item)

    async def _write_loop(self, queue: asyncio.Queue[Item]) -> None:
        while True:
            item = await queue.get()
            episodes: list[Episode] = []
            try:
                if item is None:
                    return
                episodes = [self._redact(e) for e in (await item if isinstance(item, asyncio.Task) else item)]
                mem = await self._memory()
                if self.pending:  # older ones first; while they cannot be written, these wait behind them
                    await self._write_held(mem)
                    if self.pending:
                        self._hold(episodes)
                        continue
                for ep in episodes:  # created in order, so Engram queues them in order
                    task = asyncio.create_task(mem.record(ep))
                    self._writes.add(task)
                    task.add_done_callback(partial(self._write_done, episode=ep))
                    task.add_done_callback(partial(self._recorded, place=ep.place))
                self._outage.recovered()
                self._failing.recovered()
            except StoreUnwritable as e:  # cannot be opened for writing now: kept until it can be
                self._unwritable.failed(e)
                self._hold(episodes)
            except StoreError as e:  # a store that cannot open (damaged, not SQLite): kept until it can
                first = not self._outage.active
                self._outage.failed(e)  # said once, in full, with the newest backup (never put in by itself)
                if first:
                    log.error("Engram: %s", newest_backup_line(self.store_path))
                self.refused = True  # tried again with the next message, not every few seconds (an
                self._hold(episodes)  # open may check the whole file)
            except Exception as e:  # one bad message must not stop the recorder (it is not kept)
                self._failing.failed(e)
            finally:
                queue.task_done()

    def _write_done(self, task: asyncio.Task[Any], episode: Episode | None = None) -> None:
        # Keeps the set small on a bot that never flushes; a wait never depends on it having run (it
        # runs one loop turn after the task finished): ``_settle`` prunes finished tasks itself.
        self._writes.discard(task)
        if task.cancelled() or (error := task.exception()) is None:
            return
        if isinstance(error, StoreUnwritable) and episode is not None:
            self._unwritable.failed(error)
            self._hold([episode])
        elif isinstance(error, StoreDamaged) and episode is not None:  # found damaged while running:
            self.refused = True  # nothing more is written until a restart (which refuses the file)
            self._damaged.failed(error)  # said once
            self._hold([episode])
        elif isinstance(error, StoreError) and episode is not None:  # locked by another writer too long
            self._outage.failed(error)
            self._hold([episode])
        else:
            log.error("Engram: an episode was not recorded: %s", error)

    def _hold(self, episodes: list[Episode]) -> None:
        """Keep ``episodes`` until the store can be written: in the journal while it takes them and
        none waits in memory (the order), else in memory (the oldest go past ``MAX_HELD``)."""
        if not self.held and not self._writing_kept:
            episodes = episodes[self.journal.append(episodes):]
        self.held.extend(episodes)
        if len(self.held) > MAX_HELD:
            over = len(self.held) - MAX_HELD
            if not self._dropped:
                log.error("Engram: more than %d messages are waiting for the store to be written; the "
                          "oldest are given up from now on (counted until it can be written)", MAX_HELD)
            del self.held[:over]
            self._dropped += over
        if self.pending and not self.refused and (self._retry is None or self._retry.done()) \
                and self._queue is not None:
            self._retry = asyncio.create_task(self._retry_later(self._queue), name="engram-record-retry")

    async def _retry_later(self, queue: asyncio.Queue[Item]) -> None:
        """While messages are held and nothing new comes: a turn of the writer every ``RETRY`` s."""
        while self.pending and not self.refused:
            await asyncio.sleep(RETRY)
            if self.pending and queue.empty():
                queue.put_nowait([])

    async def _write_held(self, mem: Engram) -> None:
        """Write the kept messages: the journal's (one transaction, which clears it), then those in
        memory (one more); they stay kept if the store still cannot take them."""
        written: list[Episode] = []
        try:
            if self.journal.count:
                kept = [e for e in self.journal.records if e is not None]
                self._writing_kept = True  # what fails meanwhile waits in memory, behind these
                try:
                    await mem.record_kept(self.journal)
                finally:
                    self._writing_kept = False
                written += kept
            if self.held:
                batch = list(self.held)
                await mem.record_many(batch)
                del self.held[:len(batch)]
                written += batch
        except StoreUnwritable as e:
            self._unwritable.failed(e)
        except StoreDamaged as e:  # still damaged (or found so now)
            self.refused = True
            self._damaged.failed(e)
        except StoreError as e:  # a store that cannot open, or stayed locked by another writer
            self._outage.failed(e)
        if not written:
            return
        self.refused = False
        self._unwritable.recovered()
        log.info("Engram: %d kept messages written%s", len(written),
                 f" ({self._dropped} older ones were given up)" if self._dropped else "")
        self._dropped = 0
        for ep in written:
            for listener in self._listeners:
                try:
                    listener(ep.place)
                except Exception:
                    log.exception("Engram: an episode listener failed")

    def _recorded(self, task: asyncio.Task[Any], *, place: str) -> None:
        """Tell the listeners (the K-new-messages trigger) about an episode once it is committed."""
        if task.cancelled() or task.exception() is not None:
            return
        for listener in self._listeners:
            try:
                listener(place)
            except Exception:
                log.exception("Engram: an episode listener failed")

    async def _settle(self, deadline: float) -> int:
        """Wait for the episode writes until ``deadline``; returns how many are still unwritten.

        Every round yields to the event loop (``asyncio.wait`` on unfinished tasks): a loop over
        ``gather`` of tasks that are already finished would never yield, and spin.
        """
        loop = asyncio.get_running_loop()
        while True:
            self._writes = {t for t in self._writes if not t.done()}
            left = deadline - loop.time()
            if not self._writes or left <= 0:
                return len(self._writes)
            await asyncio.wait(self._writes, timeout=left)

    async def flush(self, timeout: float, deadline: float) -> bool:
        """Wait until everything queued so far is handed to the core and its writes are done, for at
        most ``timeout`` seconds (ending at ``deadline``, the loop's time); False (logged) if not.
        Kept messages are tried once more (a forget waits for them to be written)."""
        if self._queue is not None:
            if self.pending and self._queue.empty():
                self._queue.put_nowait([])
            try:
                await asyncio.wait_for(self._queue.join(), timeout)
            except asyncio.TimeoutError:
                log.error("Engram: flush gave up after %.0f s; %d queued messages are not written yet",
                          timeout, self._queue.qsize())
                return False
        left = await self._settle(deadline)
        await asyncio.sleep(0)  # the done-callbacks of writes that just finished (listeners) run first
        if left:
            log.error("Engram: flush gave up after %.0f s; %d episodes are not written yet", timeout, left)
        if self.pending:  # a warning unless the outage was said already
            said = self._unwritable.active or self._damaged.active or self._outage.active
            log.log(logging.DEBUG if said else logging.WARNING,
                    "Engram: %d messages are kept, not written yet (the store cannot be written)",
                    self.pending)
        return not left and not self.pending

    async def stop(self, timeout: float, deadline: float) -> None:
        """Write what is queued and stop the writer task, then wait for the writes, for at most
        ``timeout`` seconds (ending at ``deadline``); the log says what was not written."""
        if self._writer is not None and self._queue is not None:
            if self.pending:
                self._queue.put_nowait([])  # a last try for the kept messages
            self._queue.put_nowait(None)
            await asyncio.wait({self._writer}, timeout=timeout)
            if not self._writer.done():
                self._writer.cancel()
                # the queue holds the stop sign instead of the message the writer was stuck on
                log.error("Engram: closing after %.0f s without recording %d queued messages (the "
                          "recorder was stuck)", timeout, self._queue.qsize())
                await asyncio.wait({self._writer}, timeout=1)
            self._writer = None
        left = await self._settle(deadline)
        if self._retry is not None:
            self._retry.cancel()
        if self.journal.count:
            log.warning("Engram: closing with %d messages kept in %s (the store could not take them); "
                        "they are written at the next start that can write the store",
                        self.journal.count, self.journal.path)
        if self.held:
            log.error("Engram: closing with %d messages that could not be written nor kept on disk (the "
                      "store cannot be written, nor %s); they are lost", len(self.held), self.journal.path)
        if left:
            log.error("Engram: closing after %.0f s; %d episodes may not be written", timeout, left)
            for t in self._writes:
                t.cancel()  # the core still writes what it had queued; nobody waits for the ids
