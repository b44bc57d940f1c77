"""Recent keyword doclists kept in memory, exact at a number of the change log.

The plugin's query asks ~45-90 words (the latest message and the turns before it); consecutive
recalls in a chat share most of them. Read from the server each time, their postings were most of
a recall's server CPU at 100k episodes (tens of thousands of ids a recall), so each word's newest
ids in one place (or among the memories) are kept here, as the SQLite store keeps its doclists
(``sqlite/postings_cache``), least recently used dropped past a byte budget.

Exactness. Every commit that changes the postings appends to ``change_log`` (``following``), so the
log's newest number says whether anything changed: each read of the missing words reads it in the
same statement (one snapshot), and a read that finds every word here reads it alone. When it moved
from the number the cache is at, the cache is emptied and every word read again. After this
instance's own commit the cache follows it instead when the commit's entries come right after the
cache's number: each new posting (the newest id: appended, the oldest past the cap dropped) joins the
words held; a deleted posting, or a row written with an old id (a restore), empties that table's words.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable

import numpy as np

from .. import DOCLIST_CAP

BUDGET = 4 << 20  # bytes of ids held (int64), with ``ENTRY`` for each word's bookkeeping
ENTRY = 200
KEEP = DOCLIST_CAP + 1  # ids a word's list holds at most: what the read returns
Key = tuple[str, int, str]  # table, place key (0: the memories), word


class PostingsCache:
    """Each recently read word's newest postings, exact at the change log's number ``stamp``."""

    def __init__(self, budget: int = BUDGET):
        self.budget = budget
        self.stamp: int | None = None  # None: unknown (nothing held)
        self._entries: OrderedDict[Key, np.ndarray] = OrderedDict()
        self.bytes = 0
        self.hits = self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Key) -> np.ndarray | None:
        found = self._entries.get(key)
        if found is None:
            self.misses += 1
            return None
        self.hits += 1
        self._entries.move_to_end(key)
        return found.copy()  # the caller's own: what it does to it leaves the cache alone

    def at(self, stamp: int) -> bool:
        """Whether the entries are exact at the log's number ``stamp`` (if not, they are dropped)."""
        if stamp == self.stamp:
            return True
        self.clear()
        self.stamp = stamp
        return False

    def keep(self, key: Key, ids: np.ndarray) -> None:
        if 8 * len(ids) + ENTRY > self.budget // 8:  # one word never takes more than an eighth
            return
        self._put(key, ids.copy())
        while self.bytes > self.budget:
            self._drop(next(iter(self._entries)))

    def _put(self, key: Key, ids: np.ndarray) -> None:
        old = self._entries.get(key)
        self.bytes += 8 * len(ids) - (8 * len(old) if old is not None else -ENTRY)
        self._entries[key] = ids

    def _drop(self, key: Key) -> None:
        self.bytes -= ENTRY + 8 * len(self._entries.pop(key))

    def clear(self, table: str | None = None) -> None:
        """Forget every word (of ``table`` only, when given)."""
        if table is None:
            self._entries.clear()
            self.bytes = 0
            return
        for key in [k for k in self._entries if k[0] == table]:
            self._drop(key)

    def committed(self, first: int, last: int, added: Iterable[tuple[str, int, str, int]],
                  cleared: Iterable[str]) -> None:
        """Follow this instance's commit, whose log entries are ``first`` to ``last``: ``added``
        (table, place key, word, id: each id newer than every one before), ``cleared`` (tables
        whose postings it deleted or wrote out of order)."""
        if self.stamp == last:  # a read after the commit already saw it
            return
        if self.stamp != first - 1:  # another instance committed in between: start over
            self.clear()
            self.stamp = None
            return
        gone = set(cleared)
        for table in gone:
            self.clear(table)
        for table, place, word, i in added:
            if table in gone:
                continue
            had = self._entries.get((table, place, word))
            if had is not None:
                self._put((table, place, word), np.append(had, np.int64(i))[-KEEP:])
        while self.bytes > self.budget:
            self._drop(next(iter(self._entries)))
        self.stamp = last
