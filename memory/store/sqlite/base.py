"""What every part of the SQLite store shares: its three connections and the quick read.

``SQLiteStore`` (``store.py``) opens the connections and is composed of the parts that use them,
one module a concern: ``transactions.py`` (writing), ``items.py`` (episodes and memories by id),
``keywords.py``, ``vectors.py``, ``progress.py`` (background work), ``days.py``, ``names.py``,
``browse.py`` (the dashboard), ``metabolism.py`` and ``forgetting.py``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import aiosqlite

from .postings_cache import PostingsCache


class Connections:
    """The store's file and connections, as each part of the store reads them."""

    path: Path
    _writer: aiosqlite.Connection | None  # None when the store was opened read-only
    _reader: aiosqlite.Connection  # mode=ro, on aiosqlite's thread
    # mode=ro, on the event loop's own thread: recall's small indexed reads run right there, since each
    # trip to aiosqlite's thread costs a GIL hand-off (up to 5 ms on a busy machine), more than the read
    _quick: sqlite3.Connection
    _postings: PostingsCache  # keyword doclists read lately, exact at the file's keyword stamp

    @property
    def _writer_or_reader(self) -> aiosqlite.Connection:
        """The writer when there is one, else the reader."""
        return self._writer or self._reader

    def _read(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        """Rows of a quick indexed read, run on the event loop's own thread (``_quick``)."""
        return self._quick.execute(sql, args).fetchall()
