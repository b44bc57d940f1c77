"""The writes of one PostgreSQL transaction, and what each changed: handed to this instance's
listeners after COMMIT, and written to the change log (by reference: kinds and ids, never text) for
the other instances on the database to follow (``following``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import numpy as np
import psycopg

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
from ..erase_records import erase_record, new_salt, parse_records, salt_record
from .codec import (
    EPISODE_COLUMNS,
    MEMORY_COLUMNS,
    compact_vector_blob,
    distinct_words,
    float_array,
    id_array,
    text_array,
    vector_blob,
    word_count,
)
from .connection import rows as fetch
from .connection import value as fetch_value

# what a restore replaces: every table of the store but ``_migrations`` and ``erase_list``
RESTORED_TABLES = ("episodes", "episodes_kw", "episode_words", "memories", "memories_kw", "memory_words",
                   "sources", "vectors", "vector_codes", "vector_scales", "cursors", "aliases", "spaces",
                   "place_names", "place_titles", "job_runs", "kept_apart", "episode_days", "place_counts",
                   "speaker_counts", "talk_pairs", "change_log", "ranking", "recall_feedback")

SETTABLE = frozenset({"status", "strength", "last_recalled", "scope", "importance", "created_at"})
TITLE_CHARS = 200
UPSERT_TITLES = ("INSERT INTO place_titles VALUES (%s,%s,%s) ON CONFLICT (space) DO UPDATE SET"
                 " title = excluded.title, seen = excluded.seen"
                 " WHERE excluded.seen >= place_titles.seen AND excluded.title != place_titles.title")
LogEntry = tuple[str, list[int], str, str]  # kind, ids, model, fields (``following``)
_INSERT_EPISODES = (f"INSERT INTO episodes ({EPISODE_COLUMNS}) SELECT * FROM unnest(%s::bigint[],"
                    " %s::float8[], %s::int[], %s::text[], %s::int[], %s::int[], %s::text[], %s::text[],"
                    " %s::text[], %s::text[], %s::text[], %s::text[], %s::int[])")


_EPISODE_TYPES = "ifitiitttttti"  # each column of EPISODE_COLUMNS: an int, a float or a text


def _arrays(rows: Sequence[Sequence[Any]], types: str) -> list[str]:
    """The columns of ``rows``, each as an array literal of its type (``codec.id_array``)."""
    write = {"i": id_array, "f": float_array, "t": text_array}
    return [write[t](column) for t, column in zip(types, zip(*rows))]  # type: ignore[operator]


# a batch's names in one statement each (an upsert may touch a row once: ``_aliases_once``,
# ``_names_once``)
_UPSERT_ALIASES = ("INSERT INTO aliases SELECT * FROM"
                   " unnest(%s::text[], %s::text[], %s::float8[], %s::float8[])"
                   " ON CONFLICT (person, alias) DO UPDATE SET"
                   " last_seen = greatest(aliases.last_seen, excluded.last_seen)")
_UPSERT_NAMES = ("INSERT INTO place_names SELECT * FROM"
                 " unnest(%s::text[], %s::text[], %s::text[], %s::float8[])"
                 " ON CONFLICT (space, person) DO UPDATE SET name = excluded.name,"
                 " last_seen = excluded.last_seen"
                 " WHERE excluded.last_seen >= place_names.last_seen")


def _aliases_once(rows: list[tuple[str, str, float, float]]) -> list[tuple[str, str, float, float]]:
    """One row per (person, alias), as the rows upserted one by one would leave it: the first one's
    first sighting, the latest last sighting."""
    out: dict[tuple[str, str], tuple[str, str, float, float]] = {}
    for person, alias, first, last in rows:
        had = out.get((person, alias))
        out[(person, alias)] = (person, alias, first, last) if had is None else (*had[:3], max(had[3], last))
    return list(out.values())


def _names_once(rows: list[tuple[str, str, str, float]]) -> list[tuple[str, str, str, float]]:
    """One row per (place, person), as the rows upserted one by one would leave it: the last of those
    seen latest (each replaced the name when it was seen no earlier than the one before)."""
    out: dict[tuple[str, str], tuple[str, str, str, float]] = {}
    for row in rows:
        had = out.get(row[:2])
        if had is None or row[3] >= had[3]:
            out[row[:2]] = row
    return list(out.values())


@dataclass
class PlaceCursor:
    key: int
    seq: int
    section: int
    last_time: float


class WriterView:
    """What this instance's writer knows of the database between its transactions: each place's key,
    last sequence number, section and time, and the newest episode id. Valid only while no other
    instance has committed since (``Transactions`` forgets it when the change log shows one did), and
    forgotten after a transaction that failed, an erase or a restore."""

    def __init__(self) -> None:
        self.places: dict[str, PlaceCursor] = {}
        self.last_episode: int | None = None  # None: read it from the database
        self.others = 0  # the other instances' change log entries followed when it was last valid

    def forget(self) -> None:
        self.places.clear()
        self.last_episode = None


def titles_of(episodes: Sequence[Episode]) -> list[tuple[str, str, float]]:
    """(place, title, time) of the latest titled episode of each place in a batch."""
    latest: dict[str, tuple[str, str, float]] = {}
    for ep in episodes:
        if not ep.place_title:
            continue
        t = aware(ep.time).timestamp()
        if ep.place_title.strip() and t >= latest.get(ep.place, ("", "", t))[2]:
            latest[ep.place] = (ep.place, ep.place_title.strip()[:TITLE_CHARS], t)
    return list(latest.values())


class PostgresWrites:
    """Writes inside one open transaction that holds the database's write lock (``transactions``):
    ids and each place's sequence numbers come from the writer's ``view``, read from the database
    whenever another instance may have written since this one last did."""

    def __init__(self, db: psycopg.AsyncConnection, section_gap: float, view: WriterView | None = None):
        self._db = db
        self._section_gap = section_gap
        self._view = view if view is not None else WriterView()
        self._places = self._view.places
        self.changes: list[Change] = []
        self.log: list[LogEntry] = []
        # what this transaction did to the postings (the recall reads' cache follows it after COMMIT):
        # (table, place key or 0, word, id) added, each id the newest; tables deleted from or written
        # out of order
        self.postings_added: list[tuple[str, int, str, int]] = []
        self.postings_cleared: set[str] = set()
        self.erased = False

    def _changed(self, change: Change, kind: str, ids: Sequence[int], model: str = "",
                 fields: str = "") -> None:
        self.changes.append(change)
        self.log.append((kind, [int(i) for i in ids], model, fields))

    async def _copy(self, sql: str, data: Sequence[Sequence[Any]]) -> None:
        if not data:
            return
        async with self._db.cursor() as cur, cur.copy(sql) as copy:  # type: ignore[arg-type]
            for row in data:
                await copy.write_row(row)

    # ---- episodes ------------------------------------------------------------------------
    async def add_episodes(self, episodes: Sequence[Episode],
                           prepared: Sequence[tuple[str, int]] | None = None) -> list[int]:
        if prepared is not None and len(prepared) != len(episodes):
            raise ValueError("one (words, shape) per episode")
        if not episodes:
            return []
        view = self._view
        next_id = view.last_episode + 1 if view.last_episode is not None else await self._next_id("episodes")
        await self._read_places([ep.place for ep in episodes])
        data, kw, postings, aliases, names, columns, keys, lengths = [], [], [], [], [], [], [], []
        for n, ep in enumerate(episodes):
            t = aware(ep.time)
            stamp, meta = t.timestamp(), json.dumps(ep.meta, ensure_ascii=False) if ep.meta else "{}"
            key, seq, section = self._next_in(ep.place, stamp, bool(ep.meta.get("section_break")))
            ws, shape = prepare_episode(ep) if prepared is None else prepared[n]
            row = (next_id, stamp, zone_minutes(t), ep.place, seq, section, ep.source, ep.actor,
                   ep.actor_name, ep.kind, ep.content, meta, shape)
            data.append(row)
            columns.append(EpisodeColumnRow(*row[:6], shape, ep.actor_name,  # type: ignore[call-arg]
                                            ep.kind == "image" or bool(ep.meta.get("image")),
                                            ep.kind == "message_out"))
            kw.append((next_id, key, ws))
            postings += [(w, key, next_id) for w in distinct_words(ws)]
            keys.append(key)
            lengths.append(word_count(ws))
            if ep.actor and ep.actor_name:
                aliases.append((ep.actor, ep.actor_name, stamp, stamp))
                names.append((ep.place, ep.actor, ep.actor_name, stamp))
            next_id += 1
        async with self._db.pipeline(), self._db.cursor() as cur:  # one trip to the server for all of it
            await self._insert_episodes(cur, data, kw, postings)
            if aliases:
                await cur.execute(_UPSERT_ALIASES, _arrays(_aliases_once(aliases), "ttff"))
            if names:
                await cur.execute(_UPSERT_NAMES, _arrays(_names_once(names), "tttf"))
            titles = titles_of(episodes)
            if titles:
                await cur.executemany(UPSERT_TITLES, titles)
        view.last_episode = next_id - 1
        self.postings_added += [("episode_words", key, w, i) for w, key, i in postings]
        self._changed(EpisodesAdded(columns, keys, lengths), "e+", [c.id for c in columns])
        return [c.id for c in columns]

    @staticmethod
    async def _insert_episodes(cur: psycopg.AsyncCursor[Any], data: list[tuple[Any, ...]],
                               kw: list[tuple[int, int, str]], postings: list[tuple[str, int, int]]) -> None:
        """Episodes, their words and postings, each table in one statement (a column an array): the
        rows in order, so each one's counting trigger sees the lines before it."""
        await cur.execute(_INSERT_EPISODES, _arrays(data, _EPISODE_TYPES))
        await cur.execute("INSERT INTO episodes_kw (id, key, words) SELECT * FROM"
                          " unnest(%s::bigint[], %s::int[], %s::text[])", _arrays(kw, "iit"))
        if postings:
            await cur.execute("INSERT INTO episode_words (word, key, id)"
                              " SELECT * FROM unnest(%s::text[], %s::int[], %s::bigint[])",
                              _arrays(postings, "tii"))

    async def _read_places(self, places: Sequence[str]) -> None:
        """Each new place's key (given now if it has none), last sequence number, section and time."""
        new = sorted(set(places) - set(self._places))
        if not new:
            return
        await self._db.execute("INSERT INTO spaces(name) SELECT u.n FROM unnest(%s::text[]) AS u(n)"
                               " WHERE NOT EXISTS (SELECT 1 FROM spaces s WHERE s.name = u.n)", (new,))
        for name, key, seq, section, t in await fetch(
                self._db, "SELECT s.name, s.id, l.seq, l.section, l.time FROM spaces s LEFT JOIN LATERAL"
                " (SELECT seq, section, time FROM episodes e WHERE e.space = s.name ORDER BY seq DESC LIMIT "
                "1) l"
                " ON true WHERE s.name = ANY(%s)", (new,)):
            self._places[name] = PlaceCursor(key, seq or 0, section or 0, t if t is not None else -1.0)

    def _next_in(self, place: str, stamp: float, section_break: bool) -> tuple[int, int, int]:
        c = self._places[place]
        if c.last_time < 0:  # the place's first line
            c.last_time = stamp
        if section_break or stamp - c.last_time > self._section_gap:
            c.section += 1
        c.seq += 1
        c.last_time = max(c.last_time, stamp)
        return c.key, c.seq, c.section

    async def delete_episodes(self, ids: Sequence[int]) -> list[int]:
        return (await self.erase(ids, []))[0]

    # ---- memories ------------------------------------------------------------------------
    async def add_memory(self, m: Memory, *, supersedes: int | None = None) -> int:
        db = self._db
        root = None
        if supersedes is not None:
            found = await fetch(db, "SELECT root, status, scope FROM memories WHERE id = %s FOR UPDATE",
                               (supersedes,))
            if not found:
                raise UnknownIdError(f"no memory with id {supersedes}", code="no_memory", id=supersedes)
            if found[0][1] == "superseded":
                raise UnknownIdError(f"memory {supersedes} was already superseded", code="memory_superseded",
                                     id=supersedes)
            root = found[0][0]
            m = replace(m, scope=found[0][2])
            await db.execute(
                "UPDATE memories SET status = 'superseded', valid_to = coalesce(valid_to, %s) WHERE id = %s",
                (timestamp(m.valid_from) or timestamp(aware(m.created_at)), supersedes))
            await self._unindex_memories([supersedes])
        mid = await self._next_id("memories")
        await db.execute(
            f"INSERT INTO memories ({MEMORY_COLUMNS}) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
            (mid, root or mid, m.kind, m.text, m.scope, json.dumps(list(m.subjects), ensure_ascii=False),
             m.importance, m.strength, timestamp(m.last_recalled), timestamp(aware(m.created_at)),
             timestamp(m.valid_from), timestamp(m.valid_to), m.status, supersedes))
        words = memory_words(m)
        await self._index_memories([(mid, words)])
        await self._add_sources([(mid, e) for e in m.sources])
        self._changed(MemoryAdded(mid, m.scope, m.status, word_count(words), supersedes), "m+",
                      [mid] if supersedes is None else [mid, supersedes])
        return mid

    async def _index_memories(self, items: Sequence[tuple[int, str]], newest: bool = True) -> None:
        """``items``' words and postings (``newest``: each id past every memory's before it)."""
        postings = [(w, i) for i, words in items for w in distinct_words(words)]
        await self._copy("COPY memories_kw (id, words) FROM STDIN", items)
        await self._copy("COPY memory_words (word, id) FROM STDIN", postings)
        if newest:
            self.postings_added += [("memory_words", 0, w, i) for w, i in postings]
        elif postings:
            self.postings_cleared.add("memory_words")

    async def _unindex_memories(self, ids: Sequence[int]) -> None:
        self.postings_cleared.add("memory_words")
        await self._db.execute(
            "DELETE FROM memory_words p USING (SELECT k.id, unnest(string_to_array(k.words, ' ')) AS word"
            " FROM memories_kw k WHERE k.id = ANY(%s) AND k.words != '') d WHERE p.word = d.word AND p.id = "
            "d.id",
            (list(ids),))
        await self._db.execute("DELETE FROM memories_kw WHERE id = ANY(%s)", (list(ids),))

    async def _add_sources(self, pairs: Sequence[tuple[int, int]]) -> None:
        if pairs:
            async with self._db.cursor() as cur:
                await cur.executemany("INSERT INTO sources VALUES (%s, %s) ON CONFLICT DO NOTHING", pairs)

    async def drop_sources(self, memory_ids: Sequence[int]) -> None:
        await self._db.execute("DELETE FROM sources WHERE memory_id = ANY(%s)", (list(map(int, memory_ids)),))

    async def set_memory_fields(self, memory_id: int, **fields: Any) -> None:
        if not fields or set(fields) - SETTABLE:
            raise ValueError(f"only {sorted(SETTABLE)} can be set in place")
        vals = [timestamp(v) if isinstance(v, datetime) else v for v in fields.values()]
        sets = ", ".join(f"{k} = %s" for k in fields)
        found = await fetch(self._db, f"UPDATE memories SET {sets} WHERE id = %s RETURNING scope, status",
                           [*vals, memory_id])
        if found and ("scope" in fields or "status" in fields):
            self._changed(MemoryChanged(memory_id, found[0][0], found[0][1], frozenset(fields)), "m~",
                          [memory_id], fields=",".join(sorted(fields)))

    async def delete_memories(self, root_ids: Sequence[int]) -> list[int]:
        return (await self.erase([], await self.all_versions(root_ids)))[1]

    async def all_versions(self, ids: Sequence[int]) -> list[int]:
        return sorted({r[0] for r in await fetch(
            self._db, "SELECT id FROM memories WHERE root IN (SELECT root FROM memories WHERE id = ANY(%s))",
            (list(map(int, ids)),))})

    # ---- hard forgetting -----------------------------------------------------------------
    async def erase(self, episode_ids: Sequence[int], memory_ids: Sequence[int], *,
                    people: Sequence[str] = (), places: Sequence[str] = ()) -> tuple[list[int], list[int]]:
        """Hard-delete episodes and memories with everything that holds their text (postings, words,
        vectors, sources, kept-apart pairs), ``people``'s names (and their ids and names in the meta
        of the lines left), ``places``' keys, names, titles and cursors, and the names a speaker of
        the erased lines went by in those lines alone: as ``SQLiteWrites.erase``. What PostgreSQL
        itself keeps of deleted rows until VACUUM is in docs/postgres.md; the store vacuums the
        tables it touched after the commit (``erased``)."""
        db = self._db
        eps = await self.existing("episodes", episode_ids)
        # every memory drawn from an erased line goes with it, all its versions, read under the write
        # lock (one committed after the forget's plan was read would keep the text with no source)
        drawn = [r[0] for r in await fetch(self._db, "SELECT DISTINCT memory_id FROM sources"
                                           " WHERE episode_id = ANY(%s)", (eps,))]
        mems = await self.existing("memories", [*memory_ids, *await self.all_versions(drawn)])
        for table, ids in (("episodes", eps), ("memories", mems)):
            if ids:
                await self.set_cursor(f"erased:{table}", max([*ids, await self._erased(table)]))
        speakers = {r[0] for r in await fetch(db, "SELECT DISTINCT actor FROM episodes WHERE id = ANY(%s)"
                                             " AND actor != ''", (eps,))}
        if eps:
            await db.execute("DELETE FROM sources WHERE episode_id = ANY(%s)", (eps,))
            self.postings_cleared.add("episode_words")
            await db.execute(
                "DELETE FROM episode_words p USING (SELECT k.id, k.key, unnest(string_to_array(k.words, ' "
                "')) AS word"
                " FROM episodes_kw k WHERE k.id = ANY(%s) AND k.words != '') d"
                " WHERE p.word = d.word AND p.key = d.key AND p.id = d.id", (eps,))
            await db.execute("DELETE FROM episodes_kw WHERE id = ANY(%s)", (eps,))
            await db.execute("DELETE FROM vectors WHERE kind = 'e' AND item = ANY(%s)", (eps,))
            await db.execute("DELETE FROM vector_codes WHERE kind = 'e' AND item = ANY(%s)", (eps,))
            await db.execute("DELETE FROM episodes WHERE id = ANY(%s)", (eps,))
        for person in sorted(speakers - set(people)):
            await self._drop_unspoken_names(person)
        if mems:
            await db.execute("DELETE FROM kept_apart WHERE a = ANY(%s) OR b = ANY(%s)", (mems, mems))
            await self._unindex_memories(mems)
            await db.execute("DELETE FROM vectors WHERE kind = 'm' AND item = ANY(%s)", (mems,))
            await db.execute("DELETE FROM vector_codes WHERE kind = 'm' AND item = ANY(%s)", (mems,))
            await db.execute("DELETE FROM memories WHERE id = ANY(%s)", (mems,))
        for person in people:
            await db.execute("DELETE FROM aliases WHERE person = %s", (person,))
            await db.execute("DELETE FROM place_names WHERE person = %s", (person,))
            await self._drop_from_meta(person)
        keys = []
        for place in places:
            keys += [r[0] for r in await fetch(db, "DELETE FROM spaces WHERE name = %s RETURNING id",
                                               (place,))]
            await db.execute("DELETE FROM place_names WHERE space = %s", (place,))
            await db.execute("DELETE FROM place_titles WHERE space = %s", (place,))
            await db.execute("DELETE FROM recall_feedback WHERE space = %s", (place,))
            await db.execute("DELETE FROM cursors WHERE right(name, %s) = %s", (len(place) + 1, ":" + place))
            self._places.pop(place, None)
        if eps:
            self._changed(EpisodesDeleted(eps), "e-", eps)
        if mems:
            self._changed(MemoriesDeleted(mems), "m-", mems)
        if places:
            self._changed(PlacesDeleted(list(places)), "p-", keys)
        if eps or places:  # each place's last line and key are read again (as before any cache)
            self._view.forget()
        self.erased = self.erased or bool(eps or mems or places)
        if eps or mems or people or places:
            await self._note_erased(eps, mems, people, places)
        return eps, mems

    async def empty_for_restore(self) -> tuple[int, int]:
        """Every Engram table emptied for a restore (``postgres/backups``), all but the erase list and
        the migrations; the highest episode and memory ids given out so far (never given out again).
        TRUNCATE, in this transaction: a failure leaves every row as it was."""
        high = (await self._next_id("episodes") - 1, await self._next_id("memories") - 1)
        await self._db.execute("TRUNCATE " + ", ".join(RESTORED_TABLES)  # type: ignore[arg-type]
                               + " RESTART IDENTITY")
        self._places.clear()
        return high

    async def keep_ids_past(self, episodes: int, memories: int) -> None:
        """No episode id up to ``episodes`` nor memory id up to ``memories`` given out again (a restored
        backup older than ids the store gave out since)."""
        for table, high in (("episodes", episodes), ("memories", memories)):
            await self.set_cursor(f"erased:{table}", max(high, await self._erased(table)))

    async def _note_erased(self, eps: Sequence[int], mems: Sequence[int], people: Sequence[str],
                           places: Sequence[str]) -> None:
        """The forget on the database's erase list, in its own transaction (``erase_records``): a
        restore run from any instance's host erases it again. Its salt is the list's first record."""
        first = await fetch_value(self._db, "SELECT record FROM erase_list ORDER BY n LIMIT 1")
        salt = parse_records([first]).salt if first is not None else ""
        if not salt:
            salt = new_salt()
            await self._db.execute("INSERT INTO erase_list (record) VALUES (%s)", (salt_record(salt),))
        await self._db.execute("INSERT INTO erase_list (record) VALUES (%s)",
                               (erase_record(salt, eps, mems, people, places),))

    async def _drop_unspoken_names(self, person: str) -> None:
        await self._db.execute("DELETE FROM aliases WHERE person = %s AND NOT EXISTS (SELECT 1 FROM episodes"
                               " WHERE actor = aliases.person AND actor_name = aliases.alias)", (person,))
        await self._db.execute("DELETE FROM place_names WHERE person = %s AND NOT EXISTS (SELECT 1 FROM "
                               "episodes"
                               " WHERE actor = place_names.person AND space = place_names.space)", (person,))

    async def _drop_from_meta(self, person: str) -> None:
        """A forgotten person out of the meta of the lines left (``sqlite.names.drop_from_meta``); the
        append-only guard lets this transaction through (``engram.rewriting``, for it alone)."""
        needle = json.dumps(person, ensure_ascii=False)
        changed = []
        for eid, raw in await fetch(self._db, "SELECT id, meta FROM episodes WHERE strpos(meta, %s) > 0",
                                    (needle,)):
            meta = json.loads(raw)
            if not isinstance(meta, dict):
                continue
            new = dict(meta)
            mentions = meta.get("mentions")
            if isinstance(mentions, list):
                kept = [m for m in mentions if not (isinstance(m, dict) and m.get("id") == person)]
                if kept:
                    new["mentions"] = kept
                else:
                    new.pop("mentions")
            reply = meta.get("reply_to")
            if isinstance(reply, dict) and reply.get("actor") == person:
                new["reply_to"] = {k: v for k, v in reply.items() if k != "actor"}
            if new != meta:
                changed.append((json.dumps(new, ensure_ascii=False) if new else "{}", eid))
        if changed:
            await self._db.execute("SELECT set_config('engram.rewriting', 'on', true)")
            async with self._db.cursor() as cur:
                await cur.executemany("UPDATE episodes SET meta = %s WHERE id = %s", changed)
            await self._db.execute("SELECT set_config('engram.rewriting', 'off', true)")

    async def existing(self, table: str, ids: Sequence[int]) -> list[int]:
        if table not in ("episodes", "memories"):
            raise ValueError(table)
        return [r[0] for r in await fetch(self._db, f"SELECT id FROM {table} WHERE id = ANY(%s) ORDER BY id",
                                         (sorted(set(map(int, ids))),))]

    async def _erased(self, table: str) -> int:
        return int(await fetch_value(self._db, "SELECT value FROM cursors WHERE name = %s",
                                     (f"erased:{table}",)) or 0)

    async def _next_id(self, table: str) -> int:
        """Past every row there is and every one erased (under the write lock: one writer at a time)."""
        return int(await fetch_value(self._db, f"SELECT greatest((SELECT coalesce(max(id), 0) FROM {table}),"
                               " coalesce((SELECT value FROM cursors WHERE name = %s), 0)) + 1",
                               (f"erased:{table}",)))

    # ---- metabolism ------------------------------------------------------------------------
    async def set_strengths(self, rows: Sequence[tuple[int, float, float, str]]) -> None:
        for i, strength, recalled, status in rows:
            for (scope,) in await fetch(
                    self._db, "UPDATE memories SET strength = %s, last_recalled = %s, status = %s WHERE id "
                              "= %s"
                    " AND status != 'superseded' RETURNING scope", (strength, recalled, status, i)):
                fields = frozenset({"strength", "last_recalled", "status"})
                self._changed(MemoryChanged(i, scope, status, fields),
                              "m~", [i], fields="last_recalled,status,strength")

    async def archive(self, ids: Sequence[int]) -> list[tuple[int, str]]:
        out = [(r[0], r[1]) for r in await fetch(
            self._db, "UPDATE memories SET status = 'archived' WHERE id = ANY(%s) AND status = 'active'"
            " RETURNING id, scope", (list(map(int, ids)),))]
        out.sort()
        if out:
            ids = [i for i, _ in out]
            self._changed(MemoriesArchived(ids, [s for _, s in out]), "ma", ids)
        return out

    async def keep_apart(self, ids: Sequence[int]) -> None:
        pairs = [(a, b) for a in ids for b in ids if a < b]
        if pairs:
            async with self._db.cursor() as cur:
                await cur.executemany("INSERT INTO kept_apart VALUES (%s, %s) ON CONFLICT DO NOTHING", pairs)

    async def merge_memories(self, merged: Memory, originals: Sequence[int]) -> int | None:
        db = self._db
        originals = list(map(int, originals))
        found = await fetch(db, "SELECT id, root, scope FROM memories WHERE id = ANY(%s) AND status = "
                                "'active'"
                           " AND scope = %s FOR UPDATE", (originals, merged.scope))
        if len(found) != len(set(originals)):
            return None
        root = min(r[1] for r in found)
        mid = await self.add_memory(merged)
        for _, old_root, _ in found:
            await db.execute("UPDATE memories SET root = %s WHERE root = %s", (root, old_root))
        await db.execute("UPDATE memories SET status = 'superseded', valid_to = coalesce(valid_to, %s)"
                         " WHERE id = ANY(%s)", (timestamp(aware(merged.created_at)), originals))
        await self._unindex_memories(originals)
        await db.execute("UPDATE memories SET root = %s, supersedes = %s WHERE id = %s",
                         (root, min(originals), mid))
        for i, _, scope in found:
            self._changed(MemoryChanged(i, scope, "superseded", frozenset({"status"})), "m~", [i],
                          fields="status")
        return mid

    # ---- the soul bundle's import (and ``migrate_to``): rows as they were ---------------------
    async def restore_episodes(self, episodes: Sequence[Episode],
                               prepared: Sequence[tuple[str, int]] | None = None) -> None:
        if not episodes:
            return
        if prepared is not None and len(prepared) != len(episodes):
            raise ValueError("one (words, shape) per episode")
        await self._no_place_taken(episodes)
        await self._read_places([ep.place for ep in episodes])
        data, kw, postings, columns, keys, lengths = [], [], [], [], [], []
        for n, ep in enumerate(episodes):
            assert ep.id is not None and ep.seq is not None and ep.section is not None
            t = aware(ep.time)
            key = self._places[ep.place].key
            ws, shape = prepare_episode(ep) if prepared is None else prepared[n]
            row = (ep.id, t.timestamp(), zone_minutes(t), ep.place, ep.seq, ep.section, ep.source, ep.actor,
                   ep.actor_name, ep.kind, ep.content,
                   json.dumps(ep.meta, ensure_ascii=False) if ep.meta else "{}", shape)
            data.append(row)
            columns.append(EpisodeColumnRow(*row[:6], shape, ep.actor_name,  # type: ignore[call-arg]
                                            ep.kind == "image" or bool(ep.meta.get("image")),
                                            ep.kind == "message_out"))
            kw.append((ep.id, key, ws))
            postings += [(w, key, ep.id) for w in distinct_words(ws)]
            keys.append(key)
            lengths.append(word_count(ws))
        async with self._db.pipeline(), self._db.cursor() as cur:
            await self._insert_episodes(cur, data, kw, postings)
        self.postings_cleared.add("episode_words")  # old ids: not appended at the end of a list
        self._view.forget()  # each place's next sequence number (and the next id) is read again
        self._changed(EpisodesAdded(columns, keys, lengths), "e+", [c.id for c in columns])

    async def _no_place_taken(self, episodes: Sequence[Episode]) -> None:
        by_place: dict[str, list[tuple[int, int]]] = {}  # (sequence number, id) of each place's
        for ep in episodes:
            by_place.setdefault(ep.place, []).append((int(ep.seq or 0), int(ep.id or 0)))
        for place, pairs in by_place.items():
            mine = sorted(pairs)  # in the place's order, as SQLite's store refuses it
            seqs = [s for s, _ in mine]
            found = await fetch(
                self._db, "SELECT s, i FROM unnest(%s::bigint[], %s::bigint[]) AS r(s, i) WHERE"
                " (SELECT id FROM episodes WHERE space = %s AND seq < r.s ORDER BY seq DESC LIMIT 1) > r.i"
                " OR (SELECT id FROM episodes WHERE space = %s AND seq > r.s ORDER BY seq LIMIT 1) < r.i"
                " LIMIT 1", (seqs, [i for _, i in mine], place, place))
            error = out_of_place_order(place, mine, (int(found[0][0]), int(found[0][1])) if found else None)
            if error is not None:
                raise error
            taken = await fetch(self._db, "SELECT seq FROM episodes WHERE space = %s AND seq = ANY(%s) "
                                          "LIMIT 1",
                               (place, seqs))
            if taken:
                raise StoreError(f"another episode of {place!r} has the sequence number {taken[0][0]}",
                                 code="restore_conflict", place=place, seq=taken[0][0])

    async def restore_memories(self, memories: Sequence[tuple[Memory, int]]) -> None:
        data, kw, sources = [], [], []
        for m, root in memories:
            assert m.id is not None
            subjects = json.dumps(list(m.subjects), ensure_ascii=False)
            data.append((m.id, root, m.kind, m.text, m.scope, subjects,
                         m.importance, m.strength, timestamp(m.last_recalled), timestamp(aware(m.created_at)),
                         timestamp(m.valid_from), timestamp(m.valid_to), m.status, m.supersedes))
            sources += [(m.id, e) for e in m.sources]
            words = memory_words(m)
            if m.status != "superseded":
                kw.append((m.id, words))
            self._changed(MemoryAdded(m.id, m.scope, m.status, word_count(words), m.supersedes), "m+",
                          [m.id] if m.supersedes is None else [m.id, m.supersedes])
        await self._copy(f"COPY memories ({MEMORY_COLUMNS}) FROM STDIN", data)
        await self._index_memories(kw, newest=False)
        await self._add_sources(sources)

    async def restore_superseded(self, rows: Sequence[tuple[int, int, datetime | None]]) -> None:
        for mid, root, valid_to in rows:
            for (scope,) in await fetch(
                    self._db, "UPDATE memories SET status = 'superseded', root = %s, valid_to = %s WHERE id "
                              "= %s"
                    " AND status != 'superseded' RETURNING scope", (root, timestamp(valid_to), mid)):
                await self._unindex_memories([mid])
                self._changed(MemoryChanged(mid, scope, "superseded", frozenset({"status"})), "m~", [mid],
                              fields="status")

    async def restore_names(self, aliases: Sequence[tuple[str, str, float, float]],
                            place_names: Sequence[tuple[str, str, str, float]],
                            titles: Sequence[tuple[str, str, float]]) -> None:
        async with self._db.cursor() as cur:
            if aliases:
                await cur.executemany(
                    "INSERT INTO aliases VALUES (%s,%s,%s,%s) ON CONFLICT (person, alias) DO UPDATE SET"
                    " first_seen = least(aliases.first_seen, excluded.first_seen),"
                    " last_seen = greatest(aliases.last_seen, excluded.last_seen)", aliases)
            if place_names:
                await cur.executemany(
                    "INSERT INTO place_names VALUES (%s,%s,%s,%s) ON CONFLICT (space, person) DO UPDATE SET"
                    " name = excluded.name, last_seen = excluded.last_seen"
                    " WHERE excluded.last_seen > place_names.last_seen", place_names)
            if titles:
                await cur.executemany(
                    "INSERT INTO place_titles VALUES (%s,%s,%s) ON CONFLICT (space) DO UPDATE SET"
                    " title = excluded.title, seen = excluded.seen WHERE excluded.seen > place_titles.seen",
                    titles)

    # ---- vectors, cursors and job runs ---------------------------------------------------------
    async def save_vectors(self, model: str, kind: str, rows: Sequence[EmbedRow],
                           vectors: np.ndarray) -> None:
        """As ``SQLiteWrites.save_vectors``: the vectors, and their int8 codes under the model's factor."""
        rows, vectors = await self._still_there(kind, rows, vectors)
        await self._put_vectors(model, kind, [(r.id, vector_blob(v)) for r, v in zip(rows, vectors)])
        if not len(rows):
            self._changed(VectorsSaved(model, kind, list(rows), vectors), "v", [], model, kind)
            return
        unit = normalise(vectors)
        got = await fetch_value(self._db, "SELECT factor FROM vector_scales WHERE model = %s", (model,))
        factor = float(got) if got is not None else int8_factor(unit)
        if got is None:
            await self._db.execute("INSERT INTO vector_scales VALUES (%s, %s)", (model, factor))
        codes = int8_codes(unit, factor)
        keys: dict[int, int] = {}
        if kind == "e":
            keys = dict(await fetch(self._db, "SELECT e.id, s.id FROM episodes e JOIN spaces s ON s.name ="
                                    " e.space WHERE e.id = ANY(%s)", ([r.id for r in rows],)))
        async with self._db.cursor() as cur:
            await cur.executemany("INSERT INTO vector_codes VALUES (%s, %s, %s, %s, %s) ON CONFLICT"
                                  " (model, kind, item) DO UPDATE SET place = excluded.place,"
                                  " codes = excluded.codes",
                                  [(model, kind, r.id, keys.get(r.id), c.tobytes())
                                   for r, c in zip(rows, codes)])
        self._changed(VectorsSaved(model, kind, list(rows), vectors, codes, factor), "v",
                      [r.id for r in rows], model, kind)

    async def save_query_vectors(self, model: str, kind: str, rows: Sequence[EmbedRow],
                                 vectors: np.ndarray) -> None:
        rows, vectors = await self._still_there(kind, rows, vectors)
        await self._put_vectors(model, kind, [(r.id, compact_vector_blob(v)) for r, v in zip(rows, vectors)])
        self._changed(VectorsSaved(model, kind, list(rows), vectors), "q", [r.id for r in rows], model, kind)

    async def _put_vectors(self, model: str, kind: str, items: list[tuple[int, bytes]]) -> None:
        if items:
            async with self._db.cursor() as cur:
                await cur.executemany("INSERT INTO vectors VALUES (%s, %s, %s, %s)"
                                      " ON CONFLICT (model, kind, item) DO UPDATE SET vec = excluded.vec",
                                      [(model, kind, i, v) for i, v in items])

    async def _still_there(self, kind: str, rows: Sequence[EmbedRow], vectors: np.ndarray
                           ) -> tuple[Sequence[EmbedRow], np.ndarray]:
        there = set(await self.existing("episodes" if kind == "e" else "memories", [r.id for r in rows]))
        if len(there) == len(rows):
            return rows, vectors
        keep = [i for i, r in enumerate(rows) if r.id in there]
        return [rows[i] for i in keep], vectors[keep] if len(keep) else vectors[:0]

    async def keep_vector_scale(self, model: str, factor: float) -> None:
        """``model``'s int8 factor as another store fixed it (``migrate-to``), before its vectors."""
        await self._db.execute("INSERT INTO vector_scales VALUES (%s, %s) ON CONFLICT (model) DO NOTHING",
                               (model, factor))

    async def drop_vectors(self, model: str) -> None:
        for table in ("vectors", "vector_codes", "vector_scales"):  # a new model's codes get a new factor
            await self._db.execute(f"DELETE FROM {table} WHERE model = %s", (model,))  # type: ignore[arg-type]

    async def save_ranking(self, name: str, state: dict[str, Any] | None,
                           recalls: Sequence[tuple[int, str, dict[str, Any]]] = (),
                           dropped: Sequence[int] = ()) -> None:
        """As ``SQLiteWrites.save_ranking``."""
        db = self._db
        if state is None:
            await db.execute("DELETE FROM ranking WHERE name = %s", (name,))
        else:
            await db.execute("INSERT INTO ranking VALUES (%s, %s) ON CONFLICT (name) DO UPDATE SET state ="
                             " excluded.state", (name, json.dumps(state)))
        async with db.cursor() as cur:
            if recalls:
                await cur.executemany("INSERT INTO recall_feedback VALUES (%s, %s, %s) ON CONFLICT (id)"
                                      " DO UPDATE SET space = excluded.space, record = excluded.record",
                                      [(i, place, json.dumps(r)) for i, place, r in recalls])
            if dropped:
                await cur.execute("DELETE FROM recall_feedback WHERE id = ANY(%s)", (list(dropped),))

    async def cursor(self, name: str) -> int:
        return int(await fetch_value(self._db, "SELECT value FROM cursors WHERE name = %s", (name,)) or 0)

    async def set_cursor(self, name: str, value: int) -> None:
        await self._db.execute("INSERT INTO cursors VALUES (%s, %s) ON CONFLICT (name) DO UPDATE"
                               " SET value = excluded.value", (name, value))

    async def save_job_run(self, job: str, record: dict[str, Any]) -> None:
        await self._db.execute("INSERT INTO job_runs VALUES (%s, %s) ON CONFLICT (job) DO UPDATE"
                               " SET record = excluded.record", (job, json.dumps(record, ensure_ascii=False)))
