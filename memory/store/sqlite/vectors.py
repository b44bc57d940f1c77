"""The vectors table: what the background indexer reads, what the index loads at open, and the
memories' vectors merging compares."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

import aiosqlite
import numpy as np

from .. import CodesPage, EmbedRow
from .codec import chunks, compact_vectors, fetch_rows, in_list, quick_rows, vectors_of


class Vectors:
    """The stored vectors of each model (written by ``SQLiteWrites.save_vectors``)."""

    def __init__(self, reader: aiosqlite.Connection, latest: aiosqlite.Connection, quick: sqlite3.Connection):
        self._reader = reader
        self._latest = latest  # the writer when there is one (the indexer reads what it just wrote)
        self._quick = quick  # a recall's few rows (``query_vectors``), on the event loop's thread
        self._utf8: bool | None = None  # the file's text encoding is UTF-8 (``_episode_codes_page``)

    async def items_to_embed(self, kind: str, after: int, limit: int) -> list[EmbedRow]:
        """(id, group, status, text to embed) of episodes ('e') or memories ('m') past ``after``."""
        if kind == "e":
            sql = ("SELECT id, space, 'active', CASE WHEN actor_name != '' THEN actor_name || ': ' "
                   "ELSE '' END || content FROM episodes WHERE id > ? ORDER BY id LIMIT ?")
        else:
            sql = "SELECT id, scope, status, text FROM memories WHERE id > ? ORDER BY id LIMIT ?"
        async with self._latest.execute(sql, (after, limit)) as cur:
            return [EmbedRow(*r) for r in await cur.fetchall()]

    async def vector_counts(self, model: str) -> list[tuple[str, str, int]]:
        """(kind, group, count) of the stored vectors of ``model``: lets the index size its blocks."""
        return await fetch_rows(self._reader,
            "SELECT 'e', s.name, c.n FROM (SELECT place, count(*) AS n FROM vector_codes"
            " WHERE model = ? AND kind = 'e' GROUP BY place) c JOIN spaces s ON s.id = c.place"
            " UNION ALL SELECT 'm', m.scope, count(*) FROM vector_codes v JOIN memories m ON m.id = v.item"
            " WHERE v.model = ? AND v.kind = 'm' GROUP BY m.scope", (model, model))

    async def vector_scale(self, model: str) -> float | None:
        """The factor of ``model``'s int8 codes (None: none saved yet)."""
        rows = await fetch_rows(self._reader, "SELECT factor FROM vector_scales WHERE model = ?", (model,))
        return float(rows[0][0]) if rows else None

    async def vector_codes_page(self, model: str, kind: str, after: int, limit: int) -> CodesPage:
        """Up to ``limit`` stored int8 codes of ``model`` of items of ``kind`` past ``after``, with each
        item's group and status (what the index loads at open: a quarter of the float32 bytes, and
        episodes' places by key, without a join with the episodes)."""
        if kind == "e":
            return await self._episode_codes_page(model, after, limit)
        # memories (a tenth of the episodes): each one's scope and status as they are now
        rows = await fetch_rows(self._reader, "SELECT v.item, m.scope, m.status, v.codes"
                                " FROM vector_codes v JOIN memories m ON m.id = v.item WHERE v.model = ?"
                                " AND v.kind = 'm' AND v.item > ? ORDER BY v.item LIMIT ?",
                                (model, after, limit))
        if not rows:
            return _NO_CODES
        ids, scopes, states, blobs = zip(*rows)
        if len(set(map(len, blobs))) > 1:  # a damaged row: the index's load says so, recall keeps keywords
            raise ValueError(f"the stored codes of {model} differ in length")
        groups, group_at = _numbered(scopes)
        statuses, status_at = _numbered(states)
        codes = np.frombuffer(b"".join(blobs), np.int8).reshape(len(blobs), -1)
        return CodesPage(np.array(ids, np.int64), codes, groups, group_at, statuses, status_at)

    async def _episode_codes_page(self, model: str, after: int, limit: int) -> CodesPage:
        """Episodes' codes, a page in one row: ids and place keys as text, the codes joined as one
        blob (byte for byte: a UTF-8 file's text is its bytes), parsed by numpy. One step of SQLite
        for the page, which runs without Python's lock: the other loads at open go on meanwhile,
        where a row at a time would hand the lock back and forth (~0.6 µs a row more, besides)."""
        if self._utf8 is None:
            self._utf8 = (await fetch_rows(self._reader, "PRAGMA encoding"))[0][0] == "UTF-8"
        if not self._utf8:  # SQLite's default, and Engram makes no other: a file made elsewhere
            raise ValueError("the file's text is not UTF-8: its codes cannot be read a page at a time")
        ids, keys, joined, n, shortest, longest = (await fetch_rows(self._reader, _EPISODE_CODES,
                                                                    (model, after, limit)))[0]
        if not n:
            return _NO_CODES
        if shortest != longest or len(joined) != n * longest:  # a damaged row: as above
            raise ValueError(f"the stored codes of {model} differ in length")
        at, inverse = np.unique(np.fromstring(keys, np.int64, sep=","), return_inverse=True)  # type: ignore[call-overload]
        # the names of this page's places only (a page of a big store spans most of its places)
        names = dict(await fetch_rows(self._reader, "SELECT id, name FROM spaces WHERE id IN"
                                      " (SELECT value FROM json_each(?))", (json.dumps(at.tolist()),)))
        return CodesPage(np.fromstring(ids, np.int64, sep=","),  # type: ignore[call-overload]
                         np.frombuffer(joined, np.int8).reshape(n, longest),
                         [names.get(int(k), "") for k in at.tolist()], inverse.astype(np.int64),
                         ["active"], np.zeros(n, np.int64))

    async def vectors_page(self, model: str, kind: str, after: int, limit: int
                           ) -> tuple[list[EmbedRow], np.ndarray]:
        """Up to ``limit`` items of ``kind`` past ``after`` that have a vector of ``model`` (their text
        left empty), and those vectors."""
        if kind == "e":
            sql = ("SELECT e.id, e.space, 'active', v.vec FROM vectors v JOIN episodes e ON e.id = v.item"
                   " WHERE v.model = ? AND v.kind = 'e' AND v.item > ? ORDER BY v.item LIMIT ?")
        else:
            sql = ("SELECT m.id, m.scope, m.status, v.vec FROM vectors v JOIN memories m ON m.id = v.item"
                   " WHERE v.model = ? AND v.kind = 'm' AND v.item > ? ORDER BY v.item LIMIT ?")
        rows = await fetch_rows(self._reader, sql, (model, after, limit))
        return ([EmbedRow(i, group, status, "") for i, group, status, _ in rows],
                vectors_of([r[3] for r in rows]))

    async def memory_vectors(self, model: str, ids: Sequence[int]) -> dict[int, bytes]:
        """The stored vector of ``model`` of each of the memories ``ids`` that has one, as bytes."""
        out: dict[int, bytes] = {}
        for chunk in chunks(list(ids)):
            sql, vals = in_list(chunk)
            out.update(await fetch_rows(self._reader, "SELECT item, vec FROM vectors WHERE model = ?"
                                        f" AND kind = 'm' AND item IN {sql}", [model, *vals]))
        return out

    async def query_vectors_page(self, model: str, kind: str, after: int, limit: int
                                 ) -> tuple[list[int], np.ndarray]:
        """Up to ``limit`` second vectors (``save_query_vectors``) of ``model`` of items of ``kind``
        past ``after``: their ids and the vectors, as float32 rows (loaded into memory at open)."""
        rows = await fetch_rows(self._reader, "SELECT item, vec FROM vectors WHERE model = ? AND kind = ?"
                                " AND item > ? ORDER BY item LIMIT ?", (model, kind, after, limit))
        return [i for i, _ in rows], compact_vectors([b for _, b in rows])

    async def query_vectors(self, model: str, kind: str, ids: Sequence[int]) -> tuple[list[int], np.ndarray]:
        """The second vectors of ``model`` of the items ``ids`` of ``kind`` that have one (a recall's
        candidates, when a big store keeps them on file: ``index.second_vectors``), as float32 rows.
        A quick indexed read on the event loop's thread (the table's key is model, kind, item)."""
        rows: list[tuple[int, bytes]] = []
        for chunk in chunks(list(ids)):
            sql, vals = in_list(chunk)
            rows += quick_rows(self._quick, "SELECT item, vec FROM vectors WHERE model = ? AND kind = ?"
                               f" AND item IN {sql}", [model, kind, *vals])
        return [i for i, _ in rows], compact_vectors([b for _, b in rows])


# a page of episodes' codes in one row (``_episode_codes_page``); a vector without a place: key -1
_EPISODE_CODES = ("SELECT group_concat(item), group_concat(coalesce(place, -1)),"
                  " CAST(group_concat(codes, '') AS BLOB), count(*), min(length(codes)), max(length(codes))"
                  " FROM (SELECT item, place, codes FROM vector_codes WHERE model = ? AND kind = 'e'"
                  " AND item > ? ORDER BY item LIMIT ?)")
_NO_CODES = CodesPage(np.zeros(0, np.int64), np.zeros((0, 0), np.int8), [], np.zeros(0, np.int64), [],
                      np.zeros(0, np.int64))


def _numbered(values: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """The distinct values in order of first appearance, and each value's number among them."""
    number: dict[str, int] = {}
    at = np.fromiter((number.setdefault(v, len(number)) for v in values), np.int64, len(values))
    return list(number), at
