"""The FTS5 keyword tables: which rows hold a word (doclist reads, no scoring) and each row's length.

Episodes' tokens carry their space's key (``keyed_words``), so a MATCH for one chat reads only that
chat's doclists; BM25 is scored above the store (``index/keywords.py``) with statistics kept in
memory.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from functools import partial

import aiosqlite
import numpy as np

from .. import DOCLIST_CAP, KeywordPage, KeywordRow, Postings
from .codec import fetch_rows, quick_rows
from .postings_cache import PostingsCache

# A private-use character: a token character for FTS5's unicode61 tokenizer (category Co) that no
# index word contains (words are runs of letters and digits), so "word<KEY_MARK><space key>" is one
# token and tells word and space apart unambiguously.
KEY_MARK = "\ue000"
_KEYED = re.compile(KEY_MARK + r"\d+")
KEYED_SPACES = 16  # audiences seeing more chats than this search the whole index, then filter
_NONE = np.zeros(0, np.int64)


def place_mark(key: int) -> str:
    """What each of a space's index tokens ends with: ``KEY_MARK`` and the space's key."""
    return f"{KEY_MARK}{key}"


def keyed_words(words: str, key: int) -> str:
    """An episode's index words with each word tied to its space: the episode table's tokens."""
    mark = place_mark(key)
    return words.replace(" ", mark + " ") + mark if words else ""


def unkeyed(words: str) -> str:
    """The plain words back from the index's tokens."""
    return _KEYED.sub("", words)


def word_count(words: str) -> int:
    """How many words an index row holds (its words are joined by single spaces)."""
    return words.count(" ") + 1 if words else 0


def fts_query(terms: list[str], prefix: bool = False) -> str:
    """An FTS5 MATCH expression: any of the terms, each quoted (``prefix``: any token starting so)."""
    star = " *" if prefix else ""
    return " OR ".join('"' + t.replace('"', '""') + '"' + star for t in terms)


def postings(db: sqlite3.Connection, table: str, terms: list[list[str]], prefix: bool = False
             ) -> list[np.ndarray]:
    """For each group of tokens, the rowids holding any of them, ascending: the newest
    ``DOCLIST_CAP`` + 1 at most (one statement for all groups)."""
    if not terms:
        return []
    one = (f"SELECT ?, (SELECT group_concat(rowid) FROM (SELECT rowid FROM {table} WHERE {table} MATCH ?"
           f" ORDER BY rowid DESC LIMIT {DOCLIST_CAP + 1}))")
    args = [v for n, tokens in enumerate(terms) for v in (n, fts_query(tokens, prefix))]
    found = dict(db.execute(" UNION ALL ".join([one] * len(terms)), args).fetchall())
    # rowids as text parsed by numpy: ~3x cheaper than a Python int per row (newest first: turned)
    return [np.fromstring(found[n], np.int64, sep=",")[::-1].copy() if found.get(n) else _NONE
            for n in range(len(terms))]


_LENGTH = "length({0}) - length(replace({0}, ' ', '')) + ({0} != '')"  # words are space-separated
# an episode's space key, read off its first token ("word" KEY_MARK key): ~2x faster than two joins
_MARK = f"instr(c0, char({ord(KEY_MARK)}))"
_KEY = f"CAST(substr(c0, {_MARK} + 1, instr(c0 || ' ', ' ') - {_MARK} - 1) AS INT)"
_EPISODE_ROWS = (f"SELECT id, {_KEY}, {_LENGTH.format('c0')} FROM episodes_fts_content"
                 " WHERE id {} ORDER BY id LIMIT ?")
# a page of episodes' rows in one row: ids and keys as text, the index words joined by newlines (a
# row's words never hold one) as bytes, their count; the words are counted by numpy (``_word_counts``)
_EPISODE_PAGE = (f"SELECT group_concat(id), group_concat({_KEY}), CAST(group_concat(c0, char(10)) AS BLOB),"
                 " count(*) FROM (SELECT id, coalesce(c0, '') AS c0 FROM episodes_fts_content"
                 " WHERE id > ? ORDER BY id LIMIT ?)")
_MEMORY_ROWS = (f"SELECT m.id, m.scope, m.status, {_LENGTH.format('f.c0')} FROM memories m"
                " JOIN memories_fts_content f ON f.id = m.id WHERE m.id {} ORDER BY m.id LIMIT ?")


_KEYWORD_ROW = partial(tuple.__new__, KeywordRow)


class Keywords:
    """The keyword tables' doclists and row lengths, read on the event loop's thread (``_quick``)."""

    def __init__(self, reader: aiosqlite.Connection, quick: sqlite3.Connection, cache: PostingsCache):
        self._reader = reader  # pages of rows (``_keyword_rows``): on its own thread, beside the loop's
        self._quick = quick
        self._postings = cache  # recent doclists, exact at the file's keyword stamp

    async def episode_postings(self, words: list[str], place_keys: list[int] | None) -> Postings:
        """Each word's episodes: only in the spaces ``space_keys`` when they are few, else in any space."""
        if place_keys is not None and len(place_keys) <= KEYED_SPACES:
            # Each word asked in each visible chat: only those chats' doclists are read.
            marks = [place_mark(k) for k in place_keys]
            return Postings(self._cached("episodes_fts", [[w + m for m in marks] for w in words]), True)
        # many or all chats (the owner's console): each word in any chat, filtered by chat above
        return Postings(self._cached("episodes_fts", [[w + KEY_MARK] for w in words], prefix=True),
                        place_keys is None)

    async def memory_postings(self, words: list[str]) -> list[np.ndarray]:
        return self._cached("memories_fts", [[w] for w in words])

    def _cached(self, table: str, groups: list[list[str]], prefix: bool = False) -> list[np.ndarray]:
        """``postings`` through the store's cache of recent doclists (``postings_cache``)."""
        return self._postings.read(self._quick, table, groups, prefix, postings)

    async def episode_keyword_page(self, after: int, limit: int) -> KeywordPage:
        """Up to ``limit`` episodes' keyword rows past ``after`` as columns (what the index loads at
        open): SQLite's own word count cost ~0.8 µs a row, a tuple each ~0.5 more."""
        ids, keys, words, n = (await fetch_rows(self._reader, _EPISODE_PAGE, (after, limit)))[0]
        if not n:
            return KeywordPage(_NONE, _NONE, _NONE)
        lengths = _word_counts(words or b"", n)
        if lengths is None:  # a row's words held a newline after all: SQLite counts them
            return _as_page(await self.episode_keyword_rows(after, limit))
        return KeywordPage(_numbers(ids), _numbers(keys), lengths)

    async def episode_keyword_rows(self, after: int, limit: int, ids: Sequence[int] | None = None
                                   ) -> list[KeywordRow]:
        return await self._keyword_rows("episodes", after, limit, ids)

    async def memory_keyword_rows(self, after: int, limit: int, ids: Sequence[int] | None = None
                                  ) -> list[KeywordRow]:
        return await self._keyword_rows("memories", after, limit, ids)

    async def _keyword_rows(self, table: str, after: int, limit: int, ids: Sequence[int] | None
                            ) -> list[KeywordRow]:
        """Indexed rows of ``table`` ('episodes' or 'memories') past ``after`` (a page: on the
        reader's thread, as ``Items.episode_columns``), or the rows ``ids`` (a recall's few)."""
        sql = _EPISODE_ROWS if table == "episodes" else _MEMORY_ROWS
        if ids is None:
            rows = await fetch_rows(self._reader, sql.format("> ?"), (after, limit))
        else:
            rows = quick_rows(self._quick, sql.format(f"IN ({','.join('?' * len(ids))})"), [*ids, len(ids)])
        if table == "episodes":
            return list(map(_KEYWORD_ROW, rows))  # as they come: no Python call per row
        return [KeywordRow(i, (scope, status), n) for i, scope, status, n in rows]


def _numbers(text: str) -> np.ndarray:
    """Comma-separated integers, parsed by numpy."""
    return np.fromstring(text, np.int64, sep=",")  # type: ignore[call-overload]


def _word_counts(words: bytes, rows: int) -> np.ndarray | None:
    """The number of words (space-separated) of each of ``rows`` rows joined by newlines, as
    ``_LENGTH`` counts them; None when the rows held more newlines than their joins."""
    b = np.frombuffer(words, np.uint8)
    ends = np.append(np.flatnonzero(b == 10), len(b))  # each row's end (exclusive)
    if len(ends) != rows:
        return None
    starts = np.concatenate([[0], ends[:-1] + 1])
    spaces = np.diff(np.searchsorted(np.flatnonzero(b == 32), ends), prepend=0)
    return (spaces + (ends > starts)).astype(np.int64)


def _as_page(rows: list[KeywordRow]) -> KeywordPage:
    if not rows:
        return KeywordPage(_NONE, _NONE, _NONE)
    ids, keys, lengths = zip(*rows)
    return KeywordPage(np.array(ids, np.int64), np.array(keys, np.int64), np.array(lengths, np.int64))
