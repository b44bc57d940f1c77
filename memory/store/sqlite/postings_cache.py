"""Recent keyword doclists kept in memory, exact after every write of any process.

A recall asks ~45 words of the plugin's query (the latest message and the turns before it), each a
MATCH of its own: ~30-70 µs a word at 100k episodes (the FTS5 lookup in every index segment, and
the rowids' trip through text), about 5 ms of a recall. Consecutive recalls in a chat share most of
their words (the turns before the latest message), and common words recur across chats, so the
rowids of recently asked token groups are kept here (int32, least recently used dropped past a
byte budget) and only the others are read.

Exactness. Every transaction that writes a keyword table bumps one counter in the file (``STAMP``,
a row of ``cursors``), whichever process writes. A read first looks at the counter inside the same
read transaction as the rows it fetches: if the counter moved past the one the cache is at, the
cache is emptied (another process wrote). After this store's own commit the cache follows it
instead of starting over: it was at the counter before the transaction (else it is emptied), so
each inserted row joins the groups holding one of its tokens and each deleted row leaves every
group. Only tokens whose FTS5 tokenization is known to be the token itself are cached or followed
(ASCII letters and digits, CJK ideographs, the space mark); a row with any other token empties the
table's cache, and a group with one is read each time.
"""

from __future__ import annotations

import re
import sqlite3
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np

STAMP = "keywordstamp"  # no ':' in it: an erased place's cursors (``name LIKE '%:<place>'``) never match
BUDGET = 2 << 20  # bytes of rowids held (and ~150 bytes a group); RSS at 100k items stays under 400 MB
_ENTRY = 150  # what a group costs beside its rowids: the key, the array object, the dict's slot
_BULK = 2000  # a transaction writing more rows than this empties the table's cache (cheaper than following)
_SAFE = re.compile("[0-9a-z\u3400-\u4dbf\u4e00-\u9fff]+(?:\ue000[0-9]*)?")

Key = tuple[str, tuple[str, ...], bool]  # (table, tokens OR'ed, prefix match)
Fetch = Callable[[sqlite3.Connection, str, list[list[str]], bool], list[np.ndarray]]  # ``keywords.postings``


def safe(token: str) -> bool:
    """Whether FTS5's unicode61 tokenizer reads ``token`` as exactly this one token."""
    return _SAFE.fullmatch(token) is not None


class PostingsCache:
    """Rowids of recently read token groups of the FTS tables, at one ``STAMP`` of the file."""

    def __init__(self, budget: int = BUDGET):
        self.budget = budget
        self.stamp: int | None = None  # the file's counter the entries are exact at (None: unknown)
        self._entries: OrderedDict[Key, np.ndarray] = OrderedDict()
        self._by_token: dict[tuple[str, str, bool], set[Key]] = {}  # (table, token, prefix) -> groups
        self._prefixed = 0  # how many groups are prefix matches
        self.bytes = 0
        self.hits = self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)

    # ---- reading -------------------------------------------------------------------------
    def read(self, db: sqlite3.Connection, table: str, groups: list[list[str]], prefix: bool,
             fetch: Fetch) -> list[np.ndarray]:
        """Each group's rowids (ascending int64), from the cache or read by ``fetch(db, table,
        groups, prefix)`` in one read transaction with the check of the counter."""
        in_tx = db.in_transaction
        if not in_tx:
            db.execute("BEGIN")
        try:
            row = db.execute("SELECT value FROM cursors WHERE name = ?", (STAMP,)).fetchone()
            stamp = row[0] if row else 0
            if stamp != self.stamp:
                self.clear()
                self.stamp = stamp
            out: list[np.ndarray | None] = []
            todo: list[int] = []
            for n, tokens in enumerate(groups):
                key = (table, tuple(tokens), prefix)
                got = self._entries.get(key)
                if got is None:
                    todo.append(n)
                    out.append(None)
                else:
                    self._entries.move_to_end(key)
                    out.append(got.astype(np.int64))
            self.hits += len(groups) - len(todo)
            self.misses += len(todo)
            if todo:
                read = fetch(db, table, [groups[n] for n in todo], prefix)
                for n, rows in zip(todo, read):
                    out[n] = rows
                    self._keep((table, tuple(groups[n]), prefix), rows)
        finally:
            if not in_tx:
                db.execute("COMMIT")
        return out  # type: ignore[return-value]

    def _keep(self, key: Key, rows: np.ndarray) -> None:
        if not all(safe(t) for t in key[1]) or (len(rows) and rows[-1] >= 2**31):
            return
        size = 4 * len(rows) + _ENTRY
        if size > self.budget // 8:  # one group never takes more than an eighth
            return
        arr = rows.astype(np.int32)
        arr.flags.writeable = False
        self._entries[key] = arr
        for name in self._names(key):
            self._by_token.setdefault(name, set()).add(key)
        self._prefixed += key[2]
        self.bytes += size
        while self.bytes > self.budget:
            self._drop(next(iter(self._entries)))

    @staticmethod
    def _names(key: Key) -> list[tuple[str, str, bool]]:
        """What a group is filed under: (table, token, prefix) for each of its tokens."""
        return [(key[0], t, key[2]) for t in key[1]]

    def _drop(self, key: Key) -> None:
        arr = self._entries.pop(key)
        self.bytes -= 4 * len(arr) + _ENTRY
        self._prefixed -= key[2]
        for name in self._names(key):
            keys = self._by_token.get(name)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del self._by_token[name]

    def clear(self, table: str | None = None) -> None:
        """Forget every group (of ``table`` only, when given)."""
        if table is None:
            self._entries.clear()
            self._by_token.clear()
            self.bytes = self._prefixed = 0
            return
        for key in [k for k in self._entries if k[0] == table]:
            self._drop(key)

    # ---- following this store's own commits ----------------------------------------------
    def committed(self, before: int, after: int, inserted: Sequence[tuple[str, int, str]],
                  deleted: Sequence[tuple[str, Sequence[int]]]) -> None:
        """Follow a committed transaction that moved the counter from ``before`` to ``after``:
        ``inserted`` (table, rowid, the row's words as written) and ``deleted`` (table, rowids)."""
        if self.stamp == after:  # a read after the commit already saw it
            return
        if self.stamp != before:  # the cache was not at the file's state before this transaction
            self.clear()
            self.stamp = None
            return
        for table, ids in deleted:
            gone = np.asarray(list(ids), np.int64)
            for key in [k for k in self._entries if k[0] == table]:
                arr = self._entries[key]
                keep = ~np.isin(arr, gone)
                if not keep.all():
                    self._replace(key, arr[keep])
        per_table: dict[str, int] = {}
        for table, _, _ in inserted:
            per_table[table] = per_table.get(table, 0) + 1
        for table, count in per_table.items():
            if count > _BULK:
                self.clear(table)
        for table, rowid, words in inserted:
            if table not in per_table or per_table[table] > _BULK:
                continue
            tokens = words.split()
            if not all(safe(t) for t in tokens):  # FTS5 may read it otherwise: start this table over
                self.clear(table)
                per_table.pop(table)
                continue
            for key in self._groups_matching(table, tokens):
                arr = self._entries[key]
                at = int(np.searchsorted(arr, rowid))
                if at == len(arr) or arr[at] != rowid:
                    self._replace(key, np.insert(arr, at, rowid))
        self.stamp = after

    def _groups_matching(self, table: str, tokens: list[str]) -> set[Key]:
        """The groups a row holding ``tokens`` belongs to: those asking one of its tokens, or a
        prefix of one."""
        found: set[Key] = set()
        for t in set(tokens):
            found.update(self._by_token.get((table, t, False), ()))
            if self._prefixed:
                for n in range(1, len(t) + 1):
                    found.update(self._by_token.get((table, t[:n], True), ()))
        return found

    def _replace(self, key: Key, arr: np.ndarray) -> None:
        old = self._entries[key]
        self.bytes += 4 * (len(arr) - len(old))
        arr = arr.astype(np.int32)
        arr.flags.writeable = False
        self._entries[key] = arr
