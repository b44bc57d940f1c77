"""What recall, the in-memory indexes and the indexer read: episodes and memories by id, the
columns and keyword rows loaded at open, each word's postings, and the stored vectors."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np

from ...model import Episode, Memory, timestamp
from .. import (
    DOCLIST_CAP,
    CodesPage,
    EmbedRow,
    EpisodeColumnRow,
    KeywordPage,
    KeywordRow,
    MemoryRankRow,
    Postings,
)
from .codec import (
    EPISODE_COLUMNS,
    MEMORY_COLUMNS,
    compact_vectors,
    dt,
    episode_row,
    id_array,
    memory_row,
    meta_names_image,
    text_array,
    vectors_of,
)
from .connection import Link, rows
from .postings_cache import PostingsCache

KEYED_PLACES = 16  # audiences seeing more chats than this read each word in any chat, then filter
_NONE = np.zeros(0, np.int64)
_RANK_COLUMNS = "id, text, scope, status, importance, strength, created_at, valid_from, last_recalled"
_COLUMN_ROWS = ("SELECT id, time, tz, space, seq, section, shape, actor_name, kind,"
                " CASE WHEN meta != '{}' AND strpos(meta, '\"image\"') > 0 THEN meta END"
                " FROM episodes WHERE id > %s ORDER BY id LIMIT %s")
_MEMORIES_WITH_SOURCES = (f"SELECT {MEMORY_COLUMNS}, ARRAY(SELECT episode_id FROM sources s"
                          " WHERE s.memory_id = m.id ORDER BY episode_id)"
                          " FROM memories m WHERE id = ANY(%s::bigint[])")
_LENGTH = "length(words) - length(replace(words, ' ', '')) + (words != '')::int"
# each word's newest rows (one statement for all the words of a query), with the log's number
_STAMP = "SELECT coalesce(max(n), 0) FROM change_log"  # moves with every commit that changes postings
_POSTINGS = ("SELECT (" + _STAMP + "), w.n, ARRAY(SELECT id FROM {table} p WHERE p.word = w.word {where}"
             f" ORDER BY id DESC LIMIT {DOCLIST_CAP + 1})"
             " FROM unnest(%s::text[]) WITH ORDINALITY AS w(word, n)")


class RecallReads:
    """``RecallReads`` (and the reads the indexer and the sense of time share with it)."""

    def __init__(self, reader: Link):
        self._db = reader
        self.postings = PostingsCache()

    # ---- items ---------------------------------------------------------------------------
    async def get_episodes(self, ids: Sequence[int]) -> dict[int, Episode]:
        found = await rows(self._db, f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE id = ANY(%s::bigint[])",
                           (id_array(ids),))
        return {r[0]: episode_row(r) for r in found}

    async def get_memories(self, ids: Sequence[int]) -> dict[int, Memory]:
        found = await rows(self._db, _MEMORIES_WITH_SOURCES, (id_array(ids),))  # one trip for both
        return {r[0]: memory_row(r[:-1], list(r[-1])) for r in found}

    async def episode_index_words(self, ids: Sequence[int]) -> dict[int, list[str]]:
        found = await rows(self._db, "SELECT id, words FROM episodes_kw WHERE id = ANY(%s::bigint[])",
                           (id_array(ids),))
        return {i: words.split(" ") for i, words in found if words}

    async def memory_rank_rows(self, ids: Sequence[int]) -> list[MemoryRankRow]:
        if not ids:
            return []
        found = await rows(self._db, f"SELECT {_RANK_COLUMNS} FROM memories WHERE id = ANY(%s::bigint[])",
                           (id_array(ids),))
        return [MemoryRankRow(*r) for r in found]

    async def episode_columns(self, after: int, limit: int) -> list[EpisodeColumnRow]:
        return [EpisodeColumnRow(i, t, tz, place, seq, section, shape, name,
                                 kind == "image" or (meta is not None and meta_names_image(meta)),
                                 kind == "message_out")
                for i, t, tz, place, seq, section, shape, name, kind, meta in await rows(
                    self._db, _COLUMN_ROWS, (after, limit))]

    async def columns_of(self, ids: Sequence[int]) -> list[EpisodeColumnRow]:
        """``episode_columns`` of the episodes ``ids`` that exist, in id order (``following``)."""
        sql = _COLUMN_ROWS.replace("id > %s ORDER BY id LIMIT %s", "id = ANY(%s::bigint[]) ORDER BY id")
        return [EpisodeColumnRow(i, t, tz, place, seq, section, shape, name,
                                 kind == "image" or (meta is not None and meta_names_image(meta)),
                                 kind == "message_out")
                for i, t, tz, place, seq, section, shape, name, kind, meta in await rows(
                    self._db, sql, (id_array(ids),))]

    async def last_episode_id(self) -> int:
        return int((await rows(self._db, "SELECT coalesce(max(id), 0) FROM episodes"))[0][0])

    async def keyed_places(self) -> dict[int, str]:
        return dict(await rows(self._db, "SELECT id, name FROM spaces"))

    async def place_key(self, place: str) -> int | None:
        found = await rows(self._db, "SELECT id FROM spaces WHERE name = %s", (place,))
        return int(found[0][0]) if found else None

    async def last_episode_time(self, place: str, before: datetime | None = None) -> datetime | None:
        sql, args = "SELECT time, tz FROM episodes WHERE space = %s", [place]
        if before is not None:
            sql += " AND time < %s"
            args.append(timestamp(before))  # type: ignore[arg-type]
        found = await rows(self._db, sql + " ORDER BY time DESC LIMIT 1", args)
        return dt(found[0][0], found[0][1]) if found else None

    async def last_heard(self) -> datetime | None:
        found = await rows(self._db, "SELECT time, tz FROM episodes WHERE kind = 'message_in'"
                           " ORDER BY time DESC LIMIT 1")
        return dt(found[0][0], found[0][1]) if found else None

    # ---- keywords --------------------------------------------------------------------------
    async def episode_postings(self, words: list[str], place_keys: list[int] | None) -> Postings:
        """Each word's episodes: only in the places ``place_keys`` when they are few, else in any (in
        one place through the cache of recent doclists, ``postings``)."""
        if place_keys is not None and len(place_keys) == 1:  # one place: the index's order, read backwards
            found = await self._cached("episode_words", place_keys[0], words, "AND p.key = %s",
                                       [place_keys[0]])
            return Postings(found, True)
        if place_keys is not None and len(place_keys) <= KEYED_PLACES:
            return Postings(await self._uncached("episode_words", words, "AND p.key = ANY(%s::int[])",
                                                 [id_array(place_keys)]), True)
        return Postings(await self._uncached("episode_words", words, "", []), place_keys is None)

    async def memory_postings(self, words: list[str]) -> list[np.ndarray]:
        return await self._cached("memory_words", 0, words, "", [])

    async def _cached(self, table: str, place: int, words: list[str], where: str, args: list[Any]
                      ) -> list[np.ndarray]:
        """``_postings`` of the words not in the cache, with the change log's number in the same read:
        if it moved since the cache was filled, the words found there are read again too."""
        if not words:
            return []
        cache = self.postings
        held = cache.stamp  # what the words found here are exact at (a commit may move it meanwhile)
        out = [cache.get((table, place, w)) for w in words]
        todo = [n for n, got in enumerate(out) if got is None]
        stamp, found = await self._postings(table, [words[n] for n in todo], where, args)
        if (not cache.at(stamp) or held != stamp) and len(todo) < len(words):  # a commit since: all afresh
            todo = list(range(len(words)))
            stamp, found = await self._postings(table, words, where, args)
            cache.at(stamp)
        for n, ids in zip(todo, found):
            out[n] = ids
            cache.keep((table, place, words[n]), ids)
        return out  # type: ignore[return-value]

    async def _uncached(self, table: str, words: list[str], where: str, args: list[Any]) -> list[np.ndarray]:
        return (await self._postings(table, words, where, args))[1] if words else []

    async def _postings(self, table: str, words: list[str], where: str, args: list[Any]
                        ) -> tuple[int, list[np.ndarray]]:
        """The change log's newest number and each word's newest postings, ascending, in one read."""
        if not words:
            return int((await rows(self._db, _STAMP))[0][0]), []
        # in binary: each word's ids arrive as a numpy array (``connection.IdArrayLoader``)
        found = await rows(self._db, _POSTINGS.format(table=table, where=where), [*args, text_array(words)],
                           binary=True)
        lists = {n: ids for _, n, ids in found}
        return int(found[0][0]), [np.ascontiguousarray(lists[n][::-1]) if len(lists[n]) else _NONE
                                  for n in range(1, len(words) + 1)]

    async def episode_keyword_rows(self, after: int, limit: int, ids: Sequence[int] | None = None
                                   ) -> list[KeywordRow]:
        if ids is None:
            found = await rows(self._db, f"SELECT id, key, {_LENGTH} FROM episodes_kw WHERE id > %s"
                               " ORDER BY id LIMIT %s", (after, limit))
        else:
            found = await rows(self._db, f"SELECT id, key, {_LENGTH} FROM episodes_kw"
                               " WHERE id = ANY(%s::bigint[]) ORDER BY id", (id_array(ids),))
        return [KeywordRow(i, key, n) for i, key, n in found]

    async def episode_keyword_page(self, after: int, limit: int) -> KeywordPage:
        """As ``SQLiteStore.episode_keyword_page``: a page of episodes' keyword rows as columns."""
        found = await rows(self._db, f"SELECT id, key, {_LENGTH} FROM episodes_kw WHERE id > %s"
                           " ORDER BY id LIMIT %s", (after, limit))
        cols = [np.array(c, np.int64) for c in zip(*found)] if found else [_NONE, _NONE, _NONE]
        return KeywordPage(*cols)

    async def memory_keyword_rows(self, after: int, limit: int, ids: Sequence[int] | None = None
                                  ) -> list[KeywordRow]:
        sql = (f"SELECT m.id, m.scope, m.status, {_LENGTH} FROM memories m JOIN memories_kw k ON k.id = m.id"
               " WHERE m.id {} ORDER BY m.id")
        if ids is None:
            found = await rows(self._db, sql.format("> %s") + " LIMIT %s", (after, limit))
        else:
            found = await rows(self._db, sql.format("= ANY(%s::bigint[])"), (id_array(ids),))
        return [KeywordRow(i, (scope, status), n) for i, scope, status, n in found]

    # ---- vectors ---------------------------------------------------------------------------
    async def items_to_embed(self, kind: str, after: int, limit: int) -> list[EmbedRow]:
        if kind == "e":
            sql = ("SELECT id, space, 'active', CASE WHEN actor_name != '' THEN actor_name || ': ' "
                   "ELSE '' END || content FROM episodes WHERE id > %s ORDER BY id LIMIT %s")
        else:
            sql = "SELECT id, scope, status, text FROM memories WHERE id > %s ORDER BY id LIMIT %s"
        return [EmbedRow(*r) for r in await rows(self._db, sql, (after, limit))]

    async def vector_counts(self, model: str) -> list[tuple[str, str, int]]:
        return await rows(self._db,
            "SELECT 'e', e.space, count(*) FROM vectors v JOIN episodes e ON e.id = v.item"
            " WHERE v.model = %s AND v.kind = 'e' GROUP BY e.space"
            " UNION ALL SELECT 'm', m.scope, count(*) FROM vectors v JOIN memories m ON m.id = v.item"
            " WHERE v.model = %s AND v.kind = 'm' GROUP BY m.scope", (model, model))

    async def vector_scale(self, model: str) -> float | None:
        found = await rows(self._db, "SELECT factor FROM vector_scales WHERE model = %s", (model,))
        return float(found[0][0]) if found else None

    async def vector_codes_page(self, model: str, kind: str, after: int, limit: int) -> CodesPage:
        """As ``SQLiteStore.vector_codes_page``: the stored int8 codes, each item's group and status."""
        if kind == "e":
            found = await rows(self._db, "SELECT v.item, s.name, 'active', v.codes FROM vector_codes v"
                               " LEFT JOIN spaces s ON s.id = v.place WHERE v.model = %s AND v.kind = 'e'"
                               " AND v.item > %s ORDER BY v.item LIMIT %s", (model, after, limit))
        else:
            found = await rows(self._db, "SELECT v.item, m.scope, m.status, v.codes FROM vector_codes v"
                               " JOIN memories m ON m.id = v.item WHERE v.model = %s AND v.kind = 'm'"
                               " AND v.item > %s ORDER BY v.item LIMIT %s", (model, after, limit))
        if not found:
            return CodesPage(_NONE, np.zeros((0, 0), np.int8), [], _NONE, [], _NONE)
        blobs = [bytes(r[3]) for r in found]
        if len(set(map(len, blobs))) > 1:  # a damaged row: the index's load says so, recall keeps keywords
            raise ValueError(f"the stored codes of {model} differ in length")
        groups, group_at = _numbered([r[1] or "" for r in found])
        statuses, status_at = _numbered([r[2] for r in found])
        return CodesPage(np.fromiter((r[0] for r in found), np.int64, len(found)),
                         np.frombuffer(b"".join(blobs), np.int8).reshape(len(blobs), -1),
                         groups, group_at, statuses, status_at)

    async def vectors_page(self, model: str, kind: str, after: int, limit: int
                           ) -> tuple[list[EmbedRow], np.ndarray]:
        if kind == "e":
            sql = ("SELECT e.id, e.space, 'active', v.vec FROM vectors v JOIN episodes e ON e.id = v.item"
                   " WHERE v.model = %s AND v.kind = 'e' AND v.item > %s ORDER BY v.item LIMIT %s")
        else:
            sql = ("SELECT m.id, m.scope, m.status, v.vec FROM vectors v JOIN memories m ON m.id = v.item"
                   " WHERE v.model = %s AND v.kind = 'm' AND v.item > %s ORDER BY v.item LIMIT %s")
        found = await rows(self._db, sql, (model, after, limit))
        return ([EmbedRow(i, group, status, "") for i, group, status, _ in found],
                vectors_of([bytes(r[3]) for r in found]))

    async def vectors_of(self, model: str, kind: str, ids: Sequence[int]
                         ) -> tuple[list[EmbedRow], np.ndarray]:
        """``vectors_page`` for the items ``ids`` (another instance saved them: ``following``)."""
        table, group, status = (("episodes", "space", "'active'") if kind == "e"
                                else ("memories", "scope", "x.status"))
        found = await rows(self._db, f"SELECT x.id, x.{group}, {status}, v.vec FROM vectors v JOIN {table} x"
                           " ON x.id = v.item WHERE v.model = %s AND v.kind = %s"
                           " AND v.item = ANY(%s::bigint[])"
                           " ORDER BY v.item", (model, kind, id_array(ids)))
        return ([EmbedRow(i, g, s, "") for i, g, s, _ in found], vectors_of([bytes(r[3]) for r in found]))

    async def query_vectors_page(self, model: str, kind: str, after: int, limit: int
                                 ) -> tuple[list[int], np.ndarray]:
        found = await rows(self._db, "SELECT item, vec FROM vectors WHERE model = %s AND kind = %s"
                           " AND item > %s ORDER BY item LIMIT %s", (model, kind, after, limit))
        return [i for i, _ in found], compact_vectors([bytes(b) for _, b in found])

    async def query_vectors(self, model: str, kind: str, ids: Sequence[int]) -> tuple[list[int], np.ndarray]:
        found = await rows(self._db, "SELECT item, vec FROM vectors WHERE model = %s AND kind = %s"
                           " AND item = ANY(%s::bigint[])", (model, kind, id_array(ids)))
        return [i for i, _ in found], compact_vectors([bytes(b) for _, b in found])

    async def memory_vectors(self, model: str, ids: Sequence[int]) -> dict[int, bytes]:
        found = await rows(self._db, "SELECT item, vec FROM vectors WHERE model = %s AND kind = 'm'"
                           " AND item = ANY(%s::bigint[])", (model, id_array(ids)))
        return {i: bytes(v) for i, v in found}


def _numbered(values: list[str]) -> tuple[list[str], np.ndarray]:
    """The distinct ``values`` and, for each value, its index among them."""
    names: dict[str, int] = {}
    at = np.fromiter((names.setdefault(v, len(names)) for v in values), np.int64, len(values))
    return list(names), at
