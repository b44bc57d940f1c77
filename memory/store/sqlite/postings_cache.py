"""Recent keyword doclists kept in memory, exact after every write of any process.

A recall asks ~45 words of the plugin's query (the latest message and the turns before it), each a
MATCH of its own: ~30-70 µs a word at 100k episodes (the FTS5 lookup in every index segment, and
the rowids' trip through text), about 5 ms of a recall. Consecutive recalls in a chat share most of
their words (the turns before the latest message), and common words recur across chats, so the
rowids of recently asked token groups are kept here (int32, least recently used dropped past a
byte budget) and only the others are read.

Only a group of one token without a prefix is kept: a word in one chat (what the plugin asks), or
in the memories; a wider audience's groups are read each time.

Exactness. Every write transaction, whichever process writes, counts itself in the file (``STAMP``,
a row of ``cursors``), in its first trip to the writer (with BEGIN: no trip of its own). A read
first looks at the count inside the same read transaction as the rows it fetches: if it moved from
the one the cache is at, the cache is emptied (another process wrote). After this store's own
commit the cache follows it instead of starting over when the count the transaction set (read
inside it, in the COMMIT's trip) is exactly one past the cache's (no one else wrote before it; a
write since moves the count again, and the next read starts over): each inserted row joins the
tokens it holds and each deleted row leaves every token. Only tokens whose FTS5 tokenization is
known to be the token itself are cached or followed (ASCII letters and digits, CJK ideographs, the
space mark and its number): a row with any other token empties the table's cache, and such a token
is read each time.
"""

from __future__ import annotations

import re
import sqlite3
import sys
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np

STAMP = "keywordstamp"  # no ':' in it: an erased place's cursors (``name LIKE '%:<place>'``) never match
# what each write transaction runs first (``Transactions.transaction``): one more
STAMP_SQL = f"INSERT INTO cursors VALUES ('{STAMP}', 1) ON CONFLICT(name) DO UPDATE SET value = value + 1"
# bytes held, rowids and bookkeeping (``ENTRY``) together. A chat's consecutive recalls share most
# words; with a few chats taking turns in a store of a million (a word's newest 2,049 rows: ~8 KB)
# 2 MB held 69 % of the words asked again, 8 MB all that recur (92 %; bench/RESULTS.md, session 16)
BUDGET = 8 << 20
ENTRY = 200  # what a token costs beside its rowids: its key, the bytes object, the dict's slot (measured)
_BULK = 2000  # a transaction writing more rows than this empties the table's cache (cheaper than following)
_WORD = "[0-9a-z\u3400-\u4dbf\u4e00-\u9fff]+(?:\ue000[0-9]+)?"
_SAFE = re.compile(_WORD)
_SAFE_ROW = re.compile(f"(?:{_WORD}(?: (?=.)|$))*")  # a row's words: safe tokens, one space apart

Fetch = Callable[[sqlite3.Connection, str, list[list[str]], bool], list[np.ndarray]]  # ``keywords.postings``


def safe(token: str) -> bool:
    """Whether FTS5's unicode61 tokenizer reads ``token`` as exactly this one token."""
    return _SAFE.fullmatch(token) is not None


class PostingsCache:
    """Rowids of recently read tokens of the FTS tables, exact at one ``STAMP`` of the file."""

    def __init__(self, budget: int = BUDGET):
        self.budget = budget
        self.stamp: int | None = None  # the file's count the entries are exact at (None: unknown)
        self._entries: OrderedDict[str, bytes] = OrderedDict()  # table NUL token -> int32 rowids, ascending
        self._tables: dict[str, int] = {}  # how many tokens of each table are held
        self.bytes = 0
        self.hits = self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)

    # ---- reading -------------------------------------------------------------------------
    def read(self, db: sqlite3.Connection, table: str, groups: list[list[str]], prefix: bool,
             fetch: Fetch) -> list[np.ndarray]:
        """Each group's rowids (ascending int64) as ``fetch(db, table, groups, prefix)`` reads them:
        from the cache, or read in one read transaction with the check of the counter."""
        in_tx = db.in_transaction
        if not in_tx:
            db.execute("BEGIN")
        try:
            row = db.execute("SELECT value FROM cursors WHERE name = ?", (STAMP,)).fetchone()
            stamp = row[0] if row else 0
            if stamp != self.stamp:
                self.clear()
                self.stamp = stamp
            out: list[np.ndarray] = []
            todo: list[int] = []
            entries = self._entries
            for n, tokens in enumerate(groups):
                got = entries.get(table + "\0" + tokens[0]) if len(tokens) == 1 and not prefix else None
                if got is None:
                    todo.append(n)
                    out.append(_NONE)
                else:
                    entries.move_to_end(table + "\0" + tokens[0])
                    out.append(np.frombuffer(got, np.int32).astype(np.int64))
            self.hits += len(groups) - len(todo)
            self.misses += len(todo)
            if todo:
                for n, rows in zip(todo, fetch(db, table, [groups[n] for n in todo], prefix)):
                    out[n] = rows
                    if len(groups[n]) == 1 and not prefix:
                        self._keep(table + "\0" + groups[n][0], rows)
        finally:
            if not in_tx:
                db.execute("COMMIT")
        return out

    def _keep(self, key: str, rows: np.ndarray) -> None:
        if not safe(key[key.index("\0") + 1:]) or (len(rows) and rows[-1] >= 2**31):
            return
        if 4 * len(rows) + ENTRY > self.budget // 8:  # one token never takes more than an eighth
            return
        self._set(key, rows.astype(np.int32).tobytes())
        while self.bytes > self.budget:
            self._drop(next(iter(self._entries)))

    def _set(self, key: str, data: bytes) -> None:
        old = self._entries.get(key)
        if old is None:
            table = key[: key.index("\0")]
            self._tables[table] = self._tables.get(table, 0) + 1
        self.bytes += len(data) - (ENTRY + len(old) if old is not None else 0) + ENTRY
        self._entries[key] = data

    def _drop(self, key: str) -> None:
        self.bytes -= ENTRY + len(self._entries.pop(key))
        table = key[: key.index("\0")]
        self._tables[table] -= 1

    def clear(self, table: str | None = None) -> None:
        """Forget every token (of ``table`` only, when given)."""
        if table is None:
            self._entries.clear()
            self._tables.clear()
            self.bytes = 0
            return
        for key in [k for k in self._entries if k.startswith(table + "\0")]:
            self._drop(key)

    # ---- following this store's own commits ----------------------------------------------
    def committed(self, after: int, inserted: Sequence[tuple[str, int, str]],
                  deleted: Sequence[tuple[str, Sequence[int]]]) -> None:
        """Follow this store's transaction just committed (``STAMP_SQL`` first): ``after``, the count
        it set (read inside it), ``inserted`` (table, rowid, the row's words as written) and
        ``deleted`` (table, rowids)."""
        if self.stamp == after:  # a read after the commit already saw it
            return
        if self.stamp != after - 1:  # another store wrote before or after this transaction
            self.clear()
            self.stamp = None
            return
        for table, ids in deleted:
            gone = np.asarray(list(ids), np.int64)
            for key in [k for k in self._entries if k.startswith(table + "\0")]:
                arr = np.frombuffer(self._entries[key], np.int32)
                keep = ~np.isin(arr, gone)
                if not keep.all():
                    self._set(key, arr[keep].tobytes())
        count: dict[str, int] = {}
        for table, _, _ in inserted:
            count[table] = count.get(table, 0) + 1
        for table, n in count.items():
            if n > _BULK:
                self.clear(table)
        for table, rowid, words in inserted:
            if count.get(table, 0) > _BULK or not self._tables.get(table):  # nothing held to follow
                continue
            if not _SAFE_ROW.fullmatch(words):  # FTS5 may read it otherwise: start this table over
                self.clear(table)
                continue
            entries = self._entries
            for t in set(words.split()):
                key = table + "\0" + t
                data = entries.get(key)
                if data is not None:
                    new = _with(data, rowid)
                    self.bytes += len(new) - len(data)
                    entries[key] = new
        while self.bytes > self.budget:  # appends grew what is held
            self._drop(next(iter(self._entries)))
        self.stamp = after


def _with(data: bytes, rowid: int) -> bytes:
    """Ascending int32 rowids with ``rowid`` among them (a new row's id is the highest: appended)."""
    if not data or rowid > int.from_bytes(data[-4:], _ORDER, signed=True):
        return data + rowid.to_bytes(4, _ORDER, signed=True)
    arr = np.frombuffer(data, np.int32)
    at = int(np.searchsorted(arr, rowid))
    return data if arr[at] == rowid else np.insert(arr, at, rowid).tobytes()


_NONE = np.zeros(0, np.int64)
_ORDER = sys.byteorder  # numpy's int32 bytes are the machine's
