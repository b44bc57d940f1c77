"""The writes of one SQLite transaction (the rows, their vectors, cursors and job runs); what each changed
is handed to listeners after COMMIT."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import aiosqlite
import numpy as np

from ...errors import StoreError, UnknownIdError
from ...model import Episode, Memory, aware, timestamp, zone_minutes
from ...text.words import memory_words, prepare_episode
from .. import (
    Change,
    EmbedRow,
    EpisodeColumnRow,
    EpisodesAdded,
    EpisodesDeleted,
    MemoriesArchived,
    MemoriesDeleted,
    MemoryAdded,
    MemoryChanged,
    PlacesDeleted,
    VectorsSaved,
    int8_codes,
    int8_factor,
    normalise,
    out_of_place_order,
)
from .codec import (
    EPISODE_COLUMNS,
    MEMORY_COLUMNS,
    chunks,
    compact_vector_blob,
    fetch_rows,
    in_list,
    vector_blob,
)
from .keywords import keyed_words, word_count
from .migrations.base import APPEND_ONLY
from .names import (
    UPSERT_TITLES,
    drop_from_meta,
    drop_place_names,
    drop_unspoken_names,
    speakers_of,
    titles_of,
)
from .summaries import BATCH_COUNTS, BATCH_OFF, BATCH_ON, FOLD, folds

# the id the next row of a table ({0}) gets: past every row there is and every one erased
NEXT_ID = ("SELECT max((SELECT coalesce(max(id), 0) FROM {0}),"
           " coalesce((SELECT value FROM cursors WHERE name = 'erased:{0}'), 0)) + 1")
SETTABLE = frozenset({"status", "strength", "last_recalled", "scope", "importance", "created_at"})
# statements run with the COMMIT, in its trip to the writer's thread: (sql, each row's parameters)
Deferred = list[tuple[str, list[tuple[Any, ...]]]]


@dataclass
class PlaceCursor:
    """Where the writer is in one space: its key, the last sequence number and section, the last time."""

    key: int  # the space's number (``keywords.keyed_words``)
    seq: int
    section: int
    last_time: float


@dataclass
class WriterView:
    """What the writer keeps between transactions: each space's place, and the newest episode id
    that view includes (None: unknown), so a batch can tell when another process wrote."""

    places: dict[str, PlaceCursor] = field(default_factory=dict)
    last_episode: int | None = None

    def forget(self) -> None:
        """Drop everything: the next batch reads each place from the file again."""
        self.places.clear()
        self.last_episode = None


class SQLiteWrites:
    """Writes inside one open transaction on the store's writer connection (``SQLiteStore.transaction``)."""

    def __init__(self, db: aiosqlite.Connection, view: WriterView, section_gap: float):
        self._writer = db
        self._view = view  # the writer's view of each space, kept by the store across transactions
        self._places = view.places
        self._section_gap = section_gap
        self.changes: list[Change] = []
        self.erased = False  # something was hard-forgotten: checkpoint and truncate the log after COMMIT
        # what this transaction wrote to the keyword tables (the postings cache follows it after COMMIT):
        # (table, rowid, words) inserted and (table, rowids) deleted
        self.keyword_inserts: list[tuple[str, int, str]] = []
        self.keyword_deletes: list[tuple[str, list[int]]] = []
        # writes whose result nothing in the transaction reads: run with the COMMIT (``later``)
        self.deferred: Deferred = []
        self.guessed: int | None = None  # the next id ``guess_episodes`` assumed (checked after BEGIN)

    def later(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        """``executemany(sql, rows)`` with the COMMIT, in its trip; only for what nothing here reads after."""
        if rows:
            self.deferred.append((sql, rows))

    # ---- episodes ------------------------------------------------------------------------
    async def add_episodes(self, episodes: Sequence[Episode],
                           prepared: Sequence[tuple[str, int]] | None = None) -> list[int]:
        """Insert ``episodes``; returns their ids (final once the transaction commits).

        ``prepared``: each episode's ``text.prepare_episode``, when the caller worked them out
        beforehand (outside the writer lock they overlap the previous batch's commit).
        """
        if prepared is not None and len(prepared) != len(episodes):
            raise ValueError("one (words, shape) per episode")
        next_id = await self._next_id("episodes")  # past every row there is and every one erased
        if next_id - 1 != self._view.last_episode:  # another process wrote (a CLI beside a bot), or none yet
            await self._forget_places_written_since(next_id - 1)
        for ep in episodes:
            if ep.place not in self._places:
                self._places[ep.place] = await self._read_place(ep.place, aware(ep.time).timestamp())
        self._view.last_episode = next_id - 1
        return self._episode_rows(episodes, prepared, next_id)

    def guess_episodes(self, episodes: Sequence[Episode], prepared: Sequence[tuple[str, int]]
                       ) -> list[int] | None:
        """``add_episodes`` without reading the file, for a transaction that has not begun
        (``Transactions.append_episodes``): ids from the view's last episode on, each place's numbers
        from its cursor; None, with nothing changed, when the view does not know the last episode or
        one of the places. The ids are right only if no other process wrote since this one did: the
        commit checks that first (``guessed``, the next id) and writes nothing if not."""
        last = self._view.last_episode
        if (last is None or len(prepared) != len(episodes)
                or any(ep.place not in self._places for ep in episodes)):
            return None
        self.guessed = last + 1
        return self._episode_rows(episodes, prepared, last + 1)

    def _episode_rows(self, episodes: Sequence[Episode], prepared: Sequence[tuple[str, int]] | None,
                      next_id: int) -> list[int]:
        """The rows of ``episodes`` from the id ``next_id`` on, every place's cursor known: deferred to
        the COMMIT (one trip for the batch: nothing in this transaction reads them back)."""
        rows, fts, aliases, names, columns, keys, lengths = [], [], [], [], [], [], []
        for n, ep in enumerate(episodes):
            t = aware(ep.time)
            stamp, meta = t.timestamp(), json.dumps(ep.meta, ensure_ascii=False) if ep.meta else "{}"
            key, seq, section = self._step(self._places[ep.place], stamp, bool(ep.meta.get("section_break")))
            ws, shape = prepare_episode(ep) if prepared is None else prepared[n]
            row = (next_id, stamp, zone_minutes(t), ep.place, seq, section, ep.source, ep.actor,
                   ep.actor_name, ep.kind, ep.content, meta, shape)
            rows.append(row)
            columns.append(EpisodeColumnRow(*row[:6], shape, ep.actor_name,  # type: ignore[call-arg]
                                            ep.kind == "image" or bool(ep.meta.get("image")),
                                            ep.kind == "message_out"))
            fts.append((next_id, keyed_words(ws, key)))
            keys.append(key)
            lengths.append(word_count(ws))
            if ep.actor and ep.actor_name:
                aliases.append((ep.actor, ep.actor_name, stamp, stamp))
                names.append((ep.place, ep.actor, ep.actor_name, stamp))
            next_id += 1
        if rows:  # counted as one batch, not row by row (``summaries.BATCH_COUNTS``)
            self.later(BATCH_ON, [()])
            self.later(f"INSERT INTO episodes({EPISODE_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
            for sql in BATCH_COUNTS:
                self.later(sql, [(rows[0][0], rows[-1][0])])
            self.later(BATCH_OFF, [()])
            if folds(rows[0][0], rows[-1][0]):  # the counts appended beside the totals
                for sql in FOLD:
                    self.later(sql, [()])
        self.later("INSERT INTO episodes_fts(rowid, words) VALUES (?,?)", fts)
        self.keyword_inserts += [("episodes_fts", i, w) for i, w in fts]
        self.later("INSERT INTO aliases VALUES (?,?,?,?) ON CONFLICT(person, alias) DO UPDATE SET"
                   " last_seen = max(last_seen, excluded.last_seen)", aliases)
        self.later("INSERT INTO place_names VALUES (?,?,?,?) ON CONFLICT(space, person) DO UPDATE SET"
                   " name = excluded.name, last_seen = excluded.last_seen"
                   " WHERE excluded.last_seen >= place_names.last_seen", names)
        self.later(UPSERT_TITLES, titles_of(episodes))
        if columns:
            self._view.last_episode = columns[-1].id
            self.changes.append(EpisodesAdded(columns, keys, lengths))
        return [c.id for c in columns]

    async def _forget_places_written_since(self, last: int) -> None:
        """Drop the cached places of the spaces that got episodes after the newest one this view
        includes (all of them when that is unknown or the file went back), so their sequence numbers
        are read again from the file."""
        known = self._view.last_episode
        if known is None or last < known:
            self._places.clear()
            return
        for (place,) in await fetch_rows(self._writer, "SELECT DISTINCT space FROM episodes WHERE id > ?",
                                         (known,)):
            self._places.pop(place, None)

    async def _read_place(self, place: str, stamp: float) -> PlaceCursor:
        """The place's cursor from the file: its key (given now if it has none) and its last episode's
        sequence number, section and time (``stamp`` for a place with none yet)."""
        db = self._writer
        rows = await fetch_rows(db, "SELECT id FROM spaces WHERE name = ?", (place,))
        if rows:
            key = rows[0][0]
        else:
            key = (await db.execute("INSERT INTO spaces(name) VALUES (?)", (place,))).lastrowid
        rows = await fetch_rows(
            db, "SELECT seq, section, time FROM episodes WHERE space = ? ORDER BY seq DESC LIMIT 1", (place,))
        return PlaceCursor(key, *rows[0]) if rows else PlaceCursor(key, 0, 0, stamp)  # type: ignore[arg-type]

    def _step(self, cursor: PlaceCursor, stamp: float, section_break: bool) -> tuple[int, int, int]:
        """The place's key, the next sequence number in it and its section (new after a silence)."""
        if section_break or stamp - cursor.last_time > self._section_gap:
            cursor.section += 1
        cursor.seq += 1
        cursor.last_time = max(cursor.last_time, stamp)
        return cursor.key, cursor.seq, cursor.section

    async def delete_episodes(self, ids: Sequence[int]) -> list[int]:
        """Hard-delete episodes with their keyword rows and vectors; returns the ids deleted (``erase``)."""
        return (await self.erase(ids, []))[0]

    # ---- memories ------------------------------------------------------------------------
    async def add_memory(self, m: Memory, *, supersedes: int | None = None) -> int:
        """Insert a memory (or a new version superseding ``supersedes``) with its sources.

        A new version takes the scope its memory has now, read under the write lock, not the one in
        ``m`` (read before, maybe seconds before: a model's answer): a scope change committed
        meanwhile (``/mem scope``) is never undone (``Engram.update(scope=...)`` changes one)."""
        db = self._writer
        root = None
        if supersedes is not None:
            async with db.execute("SELECT root, status, scope FROM memories WHERE id = ?",
                                  (supersedes,)) as cur:
                row = await cur.fetchone()
            if row is None:
                raise UnknownIdError(f"no memory with id {supersedes}", code="no_memory", id=supersedes)
            if row[1] == "superseded":
                raise UnknownIdError(f"memory {supersedes} was already superseded", code="memory_superseded",
                                     id=supersedes)
            root = row[0]
            m = replace(m, scope=row[2])
            # valid_to: when we learned otherwise (the new version's valid_from, else its creation)
            await db.execute(
                "UPDATE memories SET status = 'superseded', valid_to = coalesce(valid_to, ?) WHERE id = ?",
                (timestamp(m.valid_from) or timestamp(aware(m.created_at)), supersedes))
            await db.execute("DELETE FROM memories_fts WHERE rowid = ?", (supersedes,))
            self.keyword_deletes.append(("memories_fts", [supersedes]))
        mid = await self._next_id("memories")
        await db.execute(
            "INSERT INTO memories (id, root, kind, text, scope, subjects, importance, strength,"
            " last_recalled, created_at, valid_from, valid_to, status, supersedes)"
            " VALUES (?,0,?,?,?,?,?,?,?,?,?,?,?,?)",
            (mid, m.kind, m.text, m.scope, json.dumps(list(m.subjects), ensure_ascii=False),
             m.importance, m.strength, timestamp(m.last_recalled), timestamp(aware(m.created_at)),
             timestamp(m.valid_from), timestamp(m.valid_to), m.status, supersedes))
        await db.execute("UPDATE memories SET root = ? WHERE id = ?", (root or mid, mid))
        words = memory_words(m)
        await db.execute("INSERT INTO memories_fts(rowid, words) VALUES (?, ?)", (mid, words))
        self.keyword_inserts.append(("memories_fts", mid, words))
        await db.executemany("INSERT OR IGNORE INTO sources VALUES (?, ?)", [(mid, e) for e in m.sources])
        self.changes.append(MemoryAdded(mid, m.scope, m.status, word_count(words), supersedes))
        return mid

    async def drop_sources(self, memory_ids: Sequence[int]) -> None:
        """Unlink ``memory_ids`` from the episodes they were drawn from; their text stays (a superseded
        self-image's: the current version keeps the why, and a forget of a diary takes them all)."""
        for chunk in chunks(list(map(int, memory_ids))):
            sql, vals = in_list(chunk)
            await self._writer.execute(f"DELETE FROM sources WHERE memory_id IN {sql}", vals)

    async def set_memory_fields(self, memory_id: int, **fields: Any) -> None:
        """Change bookkeeping fields (status, strength, last_recalled, scope, importance) in place;
        ``created_at`` only to redate what a wrong clock dated (``metabolism.fade``)."""
        if not fields or set(fields) - SETTABLE:
            raise ValueError(f"only {sorted(SETTABLE)} can be set in place")
        vals = [timestamp(v) if isinstance(v, datetime) else v for v in fields.values()]
        sets = ", ".join(f"{k} = ?" for k in fields)
        await self._writer.execute(f"UPDATE memories SET {sets} WHERE id = ?", [*vals, memory_id])
        if "scope" in fields or "status" in fields:  # who may find it changed: read back only then
            row = await fetch_rows(self._writer, "SELECT scope, status FROM memories WHERE id = ?",
                                   (memory_id,))
            if row:
                self.changes.append(MemoryChanged(memory_id, row[0][0], row[0][1], frozenset(fields)))

    async def delete_memories(self, root_ids: Sequence[int]) -> list[int]:
        """Hard-delete every version of the given memories; returns the deleted row ids (``erase``)."""
        return (await self.erase([], await self.all_versions(root_ids)))[1]

    async def all_versions(self, ids: Sequence[int]) -> list[int]:
        """Every version of the memories ``ids`` (those that exist), merged ones' originals included."""
        out: list[int] = []
        for chunk in chunks(list(map(int, ids))):
            sql, vals = in_list(chunk)
            out += [r[0] for r in await fetch_rows(
                self._writer, "SELECT id FROM memories WHERE root IN"
                f" (SELECT root FROM memories WHERE id IN {sql})", vals)]
        return sorted(set(out))

    # ---- hard forgetting (issue 14) --------------------------------------------------------
    async def erase(self, episode_ids: Sequence[int], memory_ids: Sequence[int], *,
                    people: Sequence[str] = (), places: Sequence[str] = ()) -> tuple[list[int], list[int]]:
        """Hard-delete episodes and memories (the ids given, and every memory drawn from one of those
        episodes, all its versions: a memory never outlives a line it came from) with everything that
        holds their text: keyword-index rows, vectors, source links, kept-apart pairs; also ``people``'s
        names (every place's too, and their ids and names in the meta of the lines left:
        ``drop_from_meta``), ``spaces``' names, cursors and the names people went by there, and any name a
        speaker of the erased lines went by in those lines alone. Returns the (episode, memory) ids deleted.

        THE one exception to episodes being append-only (hard forgetting): every delete of an
        episode goes through here. Inside the transaction: a crash leaves all of it or none. The
        keyword indexes are rewritten inside it (FTS5 ``optimize``: a plain delete leaves the words in
        older index segments) and ``secure_delete`` zeroes every freed page; after the commit the
        store checkpoints and truncates the write-ahead log (``erased`` tells it to).
        """
        db = self._writer
        eps = await self.existing("episodes", episode_ids)
        # every memory drawn from an erased line goes with it, with all its versions, read here under the
        # write lock: one that consolidation committed after the forget's plan was read (the model was
        # answering meanwhile) would otherwise keep the forgotten text with its source link cut
        drawn: list[int] = []
        for chunk in chunks(eps):
            q, v = in_list(chunk)
            drawn += [r[0] for r in await fetch_rows(
                db, f"SELECT DISTINCT memory_id FROM sources WHERE episode_id IN {q}", v)]
        mems = await self.existing("memories", [*memory_ids, *await self.all_versions(drawn)])
        for table, ids in (("episodes", eps), ("memories", mems)):
            if ids:  # ids are never given out again (a later line must not inherit a cursor)
                await self.set_cursor(f"erased:{table}", max([*ids, await self._erased(table)]))
        speakers = await speakers_of(db, eps)
        for chunk in chunks(eps):
            q, v = in_list(chunk)
            await db.execute(f"DELETE FROM sources WHERE episode_id IN {q}", v)
        if eps:  # m011's delete triggers count down the totals: the rows appended beside them first
            for sql in FOLD:
                await db.execute(sql)
        await self._delete("episodes", "e", eps)
        await drop_unspoken_names(db, sorted(speakers - set(people)))
        for chunk in chunks(mems):
            q, v = in_list(chunk)
            await db.execute(f"DELETE FROM kept_apart WHERE a IN {q} OR b IN {q}", v + v)
        await self._delete("memories", "m", mems)
        for person in people:
            await db.execute("DELETE FROM aliases WHERE person = ?", (person,))
            await db.execute("DELETE FROM place_names WHERE person = ?", (person,))
            await drop_from_meta(db, person, APPEND_ONLY)
        for place in places:
            await db.execute("DELETE FROM spaces WHERE name = ?", (place,))
            await db.execute("DELETE FROM recall_feedback WHERE space = ?", (place,))
            await drop_place_names(db, place)
            await db.execute("DELETE FROM cursors WHERE substr(name, -?) = ?", (len(place) + 1, ":" + place))
            self._places.pop(place, None)
        for table, ids in (("episodes_fts", eps), ("memories_fts", mems)):
            if ids:
                await db.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
        # the freed pages leave the file (a store made with auto_vacuum=INCREMENTAL; else a no-op)
        await db.execute_fetchall("PRAGMA incremental_vacuum")
        if eps:
            self.changes.append(EpisodesDeleted(eps))
        if mems:
            self.changes.append(MemoriesDeleted(mems))
        if places:
            self.changes.append(PlacesDeleted(list(places)))
        self.erased = self.erased or bool(eps or mems or places)
        return eps, mems

    async def existing(self, table: str, ids: Sequence[int]) -> list[int]:
        """Those of ``ids`` that are rows of ``table`` ('episodes' or 'memories') in this transaction."""
        if table not in ("episodes", "memories"):
            raise ValueError(table)
        out: list[int] = []
        for chunk in chunks(sorted(set(map(int, ids)))):
            sql, vals = in_list(chunk)
            out += [r[0] for r in await fetch_rows(self._writer, f"SELECT id FROM {table} WHERE id IN {sql}",
                                                   vals)]
        return out

    async def _erased(self, table: str) -> int:
        """The highest id ever erased from ``table`` (0: none)."""
        rows = await fetch_rows(self._writer, "SELECT value FROM cursors WHERE name = ?",
                                (f"erased:{table}",))
        return int(rows[0][0]) if rows else 0

    async def _next_id(self, table: str) -> int:
        """The id the next row of ``table`` gets: past every row there is and every one erased (one read)."""
        return int((await fetch_rows(self._writer, NEXT_ID.format(table)))[0][0])

    # ---- metabolism (issue 14): strength, archiving, merging ---------------------------------
    async def set_strengths(self, rows: Sequence[tuple[int, float, float, str]]) -> None:
        """(id, strength, last recalled, status) of many memories (superseded ones are left alone)."""
        for i, strength, recalled, status in rows:
            cur = await self._writer.execute(
                "UPDATE memories SET strength = ?, last_recalled = ?, status = ? WHERE id = ?"
                " AND status != 'superseded' RETURNING scope", (strength, recalled, status, i))
            for (scope,) in await cur.fetchall():
                self.changes.append(MemoryChanged(i, scope, status,
                                                  frozenset({"strength", "last_recalled", "status"})))

    async def archive(self, ids: Sequence[int]) -> list[tuple[int, str]]:
        """Mark active memories archived; returns (id, scope) of those that were."""
        out: list[tuple[int, str]] = []
        for chunk in chunks(list(ids)):
            sql, vals = in_list(chunk)
            cur = await self._writer.execute(f"UPDATE memories SET status = 'archived' WHERE id IN {sql}"
                                             " AND status = 'active' RETURNING id, scope", vals)
            out += [(r[0], r[1]) for r in await cur.fetchall()]
        if out:
            self.changes.append(MemoriesArchived([i for i, _ in out], [scope for _, scope in out]))
        return out

    async def keep_apart(self, ids: Sequence[int]) -> None:
        """Remember that the memories ``ids`` record different things (merging asks them once)."""
        pairs = [(a, b) for a in ids for b in ids if a < b]
        await self._writer.executemany("INSERT OR IGNORE INTO kept_apart VALUES (?, ?)", pairs)

    async def merge_memories(self, merged: Memory, originals: Sequence[int]) -> int | None:
        """One memory in place of ``originals`` (all still active and still of the merged memory's
        scope, else nothing happens: None; one moved meanwhile must not come back in its old scope);
        they are kept, superseded, as versions of it (one root), and it cites all their sources."""
        db = self._writer
        sql, vals = in_list(originals)
        rows = await fetch_rows(db, f"SELECT id, root, scope FROM memories WHERE id IN {sql}"
                                " AND status = 'active' AND scope = ?", [*vals, merged.scope])
        if len(rows) != len(set(originals)):
            return None
        root = min(r[1] for r in rows)
        mid = await self.add_memory(merged)
        for _, old_root, _ in rows:
            await db.execute("UPDATE memories SET root = ? WHERE root = ?", (root, old_root))
        await db.execute("UPDATE memories SET status = 'superseded', valid_to = coalesce(valid_to, ?)"
                         f" WHERE id IN {sql}", [timestamp(aware(merged.created_at)), *vals])
        await db.execute(f"DELETE FROM memories_fts WHERE rowid IN {sql}", vals)
        self.keyword_deletes.append(("memories_fts", list(vals)))
        await db.execute("UPDATE memories SET root = ?, supersedes = ? WHERE id = ?",
                         (root, min(originals), mid))
        for i, _, scope in rows:
            self.changes.append(MemoryChanged(i, scope, "superseded", frozenset({"status"})))
        return mid

    # ---- the soul bundle's import (``memory/bundle``): rows as they were ------------------------
    async def restore_episodes(self, episodes: Sequence[Episode],
                               prepared: Sequence[tuple[str, int]] | None = None) -> None:
        """Insert episodes exactly as a bundle holds them: their ids, places, sequence numbers and
        sections (``add_episodes`` gives new ones); index words and shape as the live code works them
        out (``prepared``: each one's ``text.prepare_episode``, worked out beforehand). The names they
        went by are not touched (``restore_names`` writes those as they were)."""
        if not episodes:
            return
        if prepared is not None and len(prepared) != len(episodes):
            raise ValueError("one (words, shape) per episode")
        await self._no_place_taken(episodes)
        rows, fts, columns, keys, lengths = [], [], [], [], []
        place_keys: dict[str, int] = {}
        for n, ep in enumerate(episodes):
            assert ep.id is not None and ep.seq is not None and ep.section is not None
            t = aware(ep.time)
            key = place_keys.get(ep.place)
            if key is None:
                key = place_keys[ep.place] = await self._place_key(ep.place)
            ws, shape = prepare_episode(ep) if prepared is None else prepared[n]
            row = (ep.id, t.timestamp(), zone_minutes(t), ep.place, ep.seq, ep.section, ep.source, ep.actor,
                   ep.actor_name, ep.kind, ep.content,
                   json.dumps(ep.meta, ensure_ascii=False) if ep.meta else "{}", shape)
            rows.append(row)
            columns.append(EpisodeColumnRow(*row[:6], shape, ep.actor_name,  # type: ignore[call-arg]
                                            ep.kind == "image" or bool(ep.meta.get("image")),
                                            ep.kind == "message_out"))
            fts.append((ep.id, keyed_words(ws, key)))
            keys.append(key)
            lengths.append(word_count(ws))
        self.later(f"INSERT INTO episodes({EPISODE_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
        self.later("INSERT INTO episodes_fts(rowid, words) VALUES (?,?)", fts)
        self.keyword_inserts += [("episodes_fts", i, w) for i, w in fts]
        self._view.forget()  # each place's next sequence number is read from the file again
        self.changes.append(EpisodesAdded(columns, keys, lengths))

    async def _no_place_taken(self, episodes: Sequence[Episode]) -> None:
        """Refuse (``StoreError`` ``restore_conflict``, naming the place and number) to restore an
        episode at a place's sequence number another episode of the store has, or out of its place's
        order (``restore_out_of_order``, ``store.out_of_place_order``: the place's reads past a cursor,
        ``progress.PAST``, rely on it)."""
        by_place: dict[str, list[tuple[int, int]]] = {}  # (sequence number, id) of each place's
        for ep in episodes:
            by_place.setdefault(ep.place, []).append((int(ep.seq or 0), int(ep.id or 0)))
        for place, pairs in by_place.items():
            await self._in_place_order(place, sorted(pairs))
            for chunk in chunks([seq for seq, _ in pairs]):
                sql, vals = in_list(chunk)
                taken = await fetch_rows(
                    self._writer, f"SELECT seq FROM episodes WHERE space = ? AND seq IN {sql} LIMIT 1",
                    [place, *vals])
                if taken:
                    raise StoreError(f"another episode of {place!r} has the sequence number {taken[0][0]}",
                                     code="restore_conflict", place=place, seq=taken[0][0])

    async def _in_place_order(self, place: str, pairs: list[tuple[int, int]]) -> None:
        """Refuse restoring the (sequence number, id) ``pairs`` (sorted) in ``place`` out of its order
        (``store.out_of_place_order``): each one's neighbours among the place's stored lines, one
        statement a chunk on the (space, seq) index."""
        found = None
        for chunk in chunks(pairs, 400):  # 802 variables: under the 999 of older SQLite builds
            values = ", ".join("(?, ?)" for _ in chunk)
            rows = await fetch_rows(
                self._writer, f"WITH r(s, i) AS (VALUES {values}) SELECT s, i FROM r WHERE"
                " (SELECT id FROM episodes WHERE space = ? AND seq < r.s ORDER BY seq DESC LIMIT 1) > r.i"
                " OR (SELECT id FROM episodes WHERE space = ? AND seq > r.s ORDER BY seq LIMIT 1) < r.i"
                " LIMIT 1", [v for pair in chunk for v in pair] + [place, place])
            if rows:
                found = (int(rows[0][0]), int(rows[0][1]))
                break
        error = out_of_place_order(place, pairs, found)
        if error is not None:
            raise error

    async def _place_key(self, place: str) -> int:
        """The place's key (``keywords.keyed_words``), given it now if it has none."""
        cursor = self._places.get(place)
        if cursor is not None:
            return cursor.key
        rows = await fetch_rows(self._writer, "SELECT id FROM spaces WHERE name = ?", (place,))
        if rows:
            return int(rows[0][0])
        return int((await self._writer.execute("INSERT INTO spaces(name) VALUES (?)", (place,))).lastrowid
                   or 0)

    async def restore_memories(self, memories: Sequence[tuple[Memory, int]]) -> None:
        """Insert memory rows exactly as a bundle holds them, each ``(memory, root)``: their ids, status,
        history (root and ``supersedes``), strengths and times, and their sources; a superseded version
        is kept out of the keyword index, as ``add_memory`` leaves it."""
        rows, fts, sources = [], [], []
        for m, root in memories:
            assert m.id is not None
            subjects = json.dumps(list(m.subjects), ensure_ascii=False)
            rows.append((m.id, root, m.kind, m.text, m.scope, subjects, m.importance, m.strength,
                         timestamp(m.last_recalled), timestamp(aware(m.created_at)), timestamp(m.valid_from),
                         timestamp(m.valid_to), m.status, m.supersedes))
            sources += [(m.id, e) for e in m.sources]
            words = memory_words(m)
            if m.status != "superseded":
                fts.append((m.id, words))
            self.changes.append(MemoryAdded(m.id, m.scope, m.status, word_count(words), m.supersedes))
        await self._writer.executemany(
            f"INSERT INTO memories ({MEMORY_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
        await self._writer.executemany("INSERT INTO memories_fts(rowid, words) VALUES (?, ?)", fts)
        self.keyword_inserts += [("memories_fts", i, w) for i, w in fts]
        await self._writer.executemany("INSERT OR IGNORE INTO sources VALUES (?, ?)", sources)

    async def restore_superseded(self, rows: Sequence[tuple[int, int, datetime | None]]) -> None:
        """Mark memories superseded as a bundle holds them ((id, root, valid to)): a merged bundle holds a
        newer version of a memory the store has active (or merged it with others: the root moved)."""
        for mid, root, valid_to in rows:
            cur = await self._writer.execute(
                "UPDATE memories SET status = 'superseded', root = ?, valid_to = ? WHERE id = ?"
                " AND status != 'superseded' RETURNING scope", (root, timestamp(valid_to), mid))
            for (scope,) in await cur.fetchall():
                await self._writer.execute("DELETE FROM memories_fts WHERE rowid = ?", (mid,))
                self.keyword_deletes.append(("memories_fts", [mid]))
                self.changes.append(MemoryChanged(mid, scope, "superseded", frozenset({"status"})))

    async def restore_names(self, aliases: Sequence[tuple[str, str, float, float]],
                            place_names: Sequence[tuple[str, str, str, float]],
                            titles: Sequence[tuple[str, str, float]]) -> None:
        """The names people went by ((person, alias, first seen, last seen)), the name each place knows
        them by ((place, person, name, last seen)) and places' titles ((place, title, seen)), as a bundle
        holds them; where the store has one already, the earlier first sighting and the later last one
        are kept (a merge)."""
        await self._writer.executemany(
            "INSERT INTO aliases VALUES (?,?,?,?) ON CONFLICT(person, alias) DO UPDATE SET"
            " first_seen = min(first_seen, excluded.first_seen),"
            " last_seen = max(last_seen, excluded.last_seen)", aliases)
        await self._writer.executemany(
            "INSERT INTO place_names VALUES (?,?,?,?) ON CONFLICT(space, person) DO UPDATE SET"
            " name = excluded.name, last_seen = excluded.last_seen"
            " WHERE excluded.last_seen > place_names.last_seen", place_names)
        await self._writer.executemany(
            "INSERT INTO place_titles VALUES (?,?,?) ON CONFLICT(space) DO UPDATE SET"
            " title = excluded.title, seen = excluded.seen WHERE excluded.seen > place_titles.seen", titles)

    async def _delete(self, table: str, kind: str, ids: list[int]) -> None:
        """Delete rows of ``table`` (episodes 'e' or memories 'm') with their keyword rows and vectors."""
        for chunk in chunks(ids):
            q, v = in_list(chunk)
            await self._writer.execute(f"DELETE FROM {table}_fts WHERE rowid IN {q}", v)
            self.keyword_deletes.append((f"{table}_fts", list(v)))
            await self._writer.execute(f"DELETE FROM vectors WHERE kind = ? AND item IN {q}", [kind, *v])
            await self._writer.execute(f"DELETE FROM vector_codes WHERE kind = ? AND item IN {q}", [kind, *v])
            await self._writer.execute(f"DELETE FROM {table} WHERE id IN {q}", v)

    # ---- beside the rows: vectors, cursors and job runs --------------------------------------
    async def save_vectors(self, model: str, kind: str, rows: Sequence[EmbedRow],
                           vectors: np.ndarray) -> None:
        """Store each row's vector for ``model`` (replacing one it had), and its int8 codes under the
        model's factor (``vector_scales``: fixed by the first vectors saved); a row erased since it was
        read is skipped (the indexer embeds outside the transaction: a forget may commit meanwhile)."""
        rows, vectors = await self._still_there(kind, rows, vectors)
        await self._writer.executemany(
            "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)",
            [(model, kind, r.id, vector_blob(v)) for r, v in zip(rows, vectors)])
        if not len(rows):
            self.changes.append(VectorsSaved(model, kind, list(rows), vectors))
            return
        unit = normalise(vectors)
        got = await fetch_rows(self._writer, "SELECT factor FROM vector_scales WHERE model = ?", (model,))
        factor = float(got[0][0]) if got else int8_factor(unit)
        if not got:
            await self._writer.execute("INSERT INTO vector_scales VALUES (?, ?)", (model, factor))
        codes = int8_codes(unit, factor)
        places = await self._place_keys([r.id for r in rows]) if kind == "e" else {}
        await self._writer.executemany(
            "INSERT OR REPLACE INTO vector_codes VALUES (?, ?, ?, ?, ?)",
            [(model, kind, r.id, places.get(r.id), c.tobytes()) for r, c in zip(rows, codes)])
        self.changes.append(VectorsSaved(model, kind, list(rows), vectors, codes, factor))

    async def keep_vector_scale(self, model: str, factor: float) -> None:
        """``model``'s int8 factor as another store fixed it (a copy between stores: the same codes,
        so recall scores the same), before its vectors."""
        await self._writer.execute("INSERT OR IGNORE INTO vector_scales VALUES (?, ?)", (model, factor))

    async def _place_keys(self, ids: list[int]) -> dict[int, int]:
        """Each episode's place key (``spaces.id``)."""
        out: dict[int, int] = {}
        for chunk in chunks(ids):
            sql, vals = in_list(chunk)
            out.update(await fetch_rows(self._writer, "SELECT e.id, s.id FROM episodes e JOIN spaces s"
                                        f" ON s.name = e.space WHERE e.id IN {sql}", vals))
        return out

    async def save_query_vectors(self, model: str, kind: str, rows: Sequence[EmbedRow],
                                 vectors: np.ndarray) -> None:
        """Store each row's second vector (the item embedded as a query) for ``model``, compact
        (``codec.compact_vector_blob``); heard as ``VectorsSaved`` of ``model``. Rows erased since they
        were read are skipped, as in ``save_vectors``."""
        rows, vectors = await self._still_there(kind, rows, vectors)
        await self._writer.executemany(
            "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)",
            [(model, kind, r.id, compact_vector_blob(v)) for r, v in zip(rows, vectors)])
        self.changes.append(VectorsSaved(model, kind, list(rows), vectors))

    async def _still_there(self, kind: str, rows: Sequence[EmbedRow], vectors: np.ndarray
                           ) -> tuple[Sequence[EmbedRow], np.ndarray]:
        """The rows (and their vectors) not erased since they were read: a vector of a forgotten line
        would stay in the file and in the index (found by the kill harness: a forget committed while
        the indexer was embedding the batch that held its lines)."""
        there = set(await self.existing("episodes" if kind == "e" else "memories", [r.id for r in rows]))
        if len(there) == len(rows):
            return rows, vectors
        keep = [i for i, r in enumerate(rows) if r.id in there]
        return [rows[i] for i in keep], vectors[keep] if len(keep) else vectors[:0]

    async def drop_vectors(self, model: str) -> None:
        for table in ("vectors", "vector_codes", "vector_scales"):  # a new model's codes get a new factor
            await self._writer.execute(f"DELETE FROM {table} WHERE model = ?", (model,))

    async def cursor(self, name: str) -> int:
        """The cursor ``name`` as this transaction sees it (0 when unset)."""
        rows = await fetch_rows(self._writer, "SELECT value FROM cursors WHERE name = ?", (name,))
        return int(rows[0][0]) if rows else 0

    async def set_cursor(self, name: str, value: int) -> None:
        await self._writer.execute(
            "INSERT INTO cursors VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value",
            (name, value))

    async def save_ranking(self, name: str, state: dict[str, Any] | None,
                           recalls: Sequence[tuple[int, str, dict[str, Any]]] = (),
                           dropped: Sequence[int] = ()) -> None:
        """The learned ranking's state under ``name`` (None: deleted), the recalls (id, place, record)
        added or changed since, and the ids of those dropped (pushed out of their place's last N)."""
        db = self._writer
        if state is None:
            await db.execute("DELETE FROM ranking WHERE name = ?", (name,))
        else:
            await db.execute("INSERT INTO ranking VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET state = "
                             "excluded.state", (name, json.dumps(state)))
        await db.executemany("INSERT INTO recall_feedback VALUES (?, ?, ?) ON CONFLICT(id) DO UPDATE SET "
                             "space = excluded.space, record = excluded.record",
                             [(i, place, json.dumps(r)) for i, place, r in recalls])
        await db.executemany("DELETE FROM recall_feedback WHERE id = ?", [(i,) for i in dropped])

    async def save_job_run(self, job: str, record: dict[str, Any]) -> None:
        await self._writer.execute(
            "INSERT INTO job_runs VALUES (?, ?) ON CONFLICT(job) DO UPDATE SET record = excluded.record",
            (job, json.dumps(record, ensure_ascii=False)))
