"""The SQLite store: one file per bot, WAL, one long-lived writer and one reader connection.

Everything SQLite-specific (FTS5, pragmas, migrations) stays in this module and its helpers
(``schema.py``, ``rows.py``, ``vector_rows.py``); the engine above it speaks the store's methods only.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

import aiosqlite
import numpy as np

from .errors import ErasedMeanwhile, StoreError, UnknownIdError
from .facts import EpisodeFacts
from .keyword import Keywords, word_count
from .model import Episode, Memory, aware
from .rows import (
    EPISODE_COLUMNS,
    chunks,
    dt,
    episode_row,
    fetch_rows,
    in_list,
    keyed_words,
    memory_row,
    memory_words,
    prepare,
    ts,
    tz_minutes,
    unkeyed,
)
from .schema import check_header, check_known_schema, migrate
from .scopes import Visibility
from .vector_rows import VectorRows

log = logging.getLogger("engram.store")

SECTION_GAP = timedelta(hours=3)  # a silence this long in a place starts a new section


def _checkpoint(path: Path) -> bool:
    """One TRUNCATE checkpoint on a short-lived connection; True when the log was emptied."""
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.execute("PRAGMA busy_timeout=5000")
        busy, _, _ = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        return not busy
    except sqlite3.OperationalError as e:
        log.debug("checkpoint of %s: %s", path, e)
        return False
    finally:
        db.close()


@dataclass
class _SpaceState:
    key: int  # the space's number in the keyword index (``rows.keyed_words``)
    seq: int
    section: int
    last_time: float


class SQLiteStore:
    """Episodes, memories, sources, vectors, cursors and keyword indexes in one SQLite file."""

    def __init__(self, path: Path, writer: aiosqlite.Connection, reader: aiosqlite.Connection,
                 quick: sqlite3.Connection):
        self.path = path
        self._w = writer
        self._r = reader
        # Recall's small indexed reads run right here on the event loop: each trip to aiosqlite's
        # thread costs a GIL hand-off (up to 5 ms on a busy machine), more than the read itself.
        self._q = quick
        self._lock = asyncio.Lock()
        self._spaces: dict[str, _SpaceState] = {}  # the writer's view
        self.keywords = Keywords(quick)
        self.facts = EpisodeFacts()
        self.vectors = VectorRows(writer, reader, self._transaction)
        self.section_gap = SECTION_GAP.total_seconds()

    # ---- opening -------------------------------------------------------------------------
    @classmethod
    async def open(cls, path: str | Path, *, durable: bool = False) -> SQLiteStore:
        """Open (or create) the store at ``path``; a foreign or newer file is refused untouched."""
        path = Path(path)
        check_header(path)
        try:
            writer = await aiosqlite.connect(path, isolation_level=None)
        except sqlite3.Error as e:
            raise StoreError(f"cannot open {path}: {e}") from e
        try:
            await check_known_schema(writer, path)
            for pragma in ("journal_mode=WAL", f"synchronous={'FULL' if durable else 'NORMAL'}",
                           "foreign_keys=ON", "busy_timeout=5000", "secure_delete=ON"):
                await writer.execute(f"PRAGMA {pragma}")
            await migrate(writer)
            # a forget killed after its commit left the erased text in the log's older frames
            await writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            # as_uri() escapes '#', '?' and '%', which would otherwise cut the file name short
            reader = await aiosqlite.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True,
                                             isolation_level=None)
            await reader.execute("PRAGMA busy_timeout=5000")
            quick = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)
            quick.execute("PRAGMA busy_timeout=5000")
            store = cls(path, writer, reader, quick)
            await store.keywords.load(partial(fetch_rows, reader))
            await store.facts.load(partial(fetch_rows, reader))
        except BaseException:
            await writer.close()
            raise
        return store

    async def close(self) -> None:
        self._q.close()
        await self._r.close()
        await self._w.close()

    @asynccontextmanager
    async def _transaction(self) -> AsyncIterator[None]:
        """One write transaction under the writer lock; a failed rollback never hides the first error."""
        async with self._lock:
            await self._w.execute("BEGIN IMMEDIATE")
            try:
                yield
                await self._w.execute("COMMIT")
            except BaseException:
                try:
                    await self._w.execute("ROLLBACK")
                except sqlite3.Error as e:  # e.g. a cancel that arrived after the COMMIT went through
                    log.warning("rollback failed (%s); the transaction had already ended", e)
                raise

    # ---- episodes ------------------------------------------------------------------------
    async def add_episodes(self, episodes: Sequence[Episode],
                           prepared: Sequence[tuple[str, int]] | None = None) -> list[int]:
        """Write ``episodes`` in one transaction; returns their ids once committed.

        ``prepared``: each episode's ``episode_words`` and ``text_shape``, when the caller worked
        them out beforehand (outside the writer lock they overlap the previous batch's commit).
        """
        if prepared is not None and len(prepared) != len(episodes):
            raise ValueError("one (words, shape) per episode")
        placed: list[tuple[int, int, int]] = []
        facts: list[tuple[Any, ...]] = []
        try:
            async with self._transaction():
                await self._insert_episodes(episodes, prepared, placed, facts)
        except BaseException:
            self._spaces.clear()  # the cached seq/section may be ahead of the file now
            raise
        ids, keys, counts = zip(*placed) if placed else ((), (), ())
        # committed: now recall may find them
        for key, space in {(key, r[3]) for key, r in zip(keys, facts)}:
            self.facts.name_space(key, space)
        self.facts.add(facts)
        self.keywords.episodes.put(ids, keys, counts)
        return list(ids)

    async def _insert_episodes(self, episodes: Sequence[Episode], prepared: Sequence[tuple[str, int]] | None,
                               placed: list[tuple[int, int, int]], facts: list[tuple[Any, ...]]) -> None:
        """Insert rows; ``placed`` gets each one's (id, space key, number of index words), ``facts``
        its row for ``EpisodeFacts.add``."""
        next_id = await self._next_id("episodes")
        rows, fts, aliases = [], [], []
        for n, ep in enumerate(episodes):
            t = aware(ep.time)
            stamp, meta = t.timestamp(), json.dumps(ep.meta, ensure_ascii=False) if ep.meta else "{}"
            key, seq, section = await self._place(ep.space, stamp, bool(ep.meta.get("section_break")))
            ws, shape = prepare(ep) if prepared is None else prepared[n]
            row = (next_id, stamp, tz_minutes(t), ep.space, seq, section, ep.source, ep.actor,
                   ep.actor_name, ep.kind, ep.content, meta, shape)
            rows.append(row)
            facts.append((*row[:6], shape, ep.actor_name, ep.kind, meta if '"image"' in meta else None))
            fts.append((next_id, keyed_words(ws, key)))
            placed.append((next_id, key, word_count(ws)))
            if ep.actor and ep.actor_name:
                aliases.append((ep.actor, ep.actor_name, stamp, stamp))
            next_id += 1
        await self._w.executemany(f"INSERT INTO episodes({EPISODE_COLUMNS}) VALUES"
                                  " (?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
        await self._w.executemany("INSERT INTO episodes_fts(rowid, words) VALUES (?,?)", fts)
        await self._w.executemany(
            "INSERT INTO aliases VALUES (?,?,?,?) ON CONFLICT(person, alias) DO UPDATE SET"
            " last_seen = max(last_seen, excluded.last_seen)", aliases)

    async def _place(self, space: str, ts: float, brk: bool) -> tuple[int, int, int]:
        """The space's key, the next sequence number in it and its section (new after a silence)."""
        st = self._spaces.get(space)
        if st is None:
            rows = await fetch_rows(self._w, "SELECT id FROM spaces WHERE name = ?", (space,))
            if rows:
                key = rows[0][0]
            else:
                key = (await self._w.execute("INSERT INTO spaces(name) VALUES (?)", (space,))).lastrowid
            rows = await fetch_rows(
                self._w, "SELECT seq, section, time FROM episodes WHERE space = ? ORDER BY seq DESC LIMIT 1",
                (space,))
            st = _SpaceState(key, *rows[0]) if rows else _SpaceState(key, 0, 0, ts)  # type: ignore[arg-type]
            self._spaces[space] = st
        if brk or ts - st.last_time > self.section_gap:
            st.section += 1
        st.seq += 1
        st.last_time = max(st.last_time, ts)
        return st.key, st.seq, st.section

    async def get_episodes(self, ids: Sequence[int]) -> dict[int, Episode]:
        out: dict[int, Episode] = {}
        for chunk in chunks(list(ids)):
            sql, vals = in_list(chunk)
            rows = await self._read(f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE id IN {sql}", vals)
            out.update((r[0], episode_row(r)) for r in rows)
        return out

    async def sync_facts(self) -> None:
        """Bring ``facts`` up to date with the episodes another process wrote (the CLI beside a bot)."""
        await self.facts.sync(self._read)

    async def episode_index_words(self, ids: Sequence[int]) -> dict[int, list[str]]:
        """The keyword-index words of the episodes ``ids``: the text's, the speaker's, then the month
        and the year (``rows.episode_words``)."""
        ins, vals = in_list(ids)
        rows = await self._read(f"SELECT id, c0 FROM episodes_fts_content WHERE id IN {ins}", vals)
        return {i: unkeyed(words).split(" ") for i, words in rows if words}

    async def last_episode_time(self, space: str, before: datetime | None = None) -> datetime | None:
        sql = "SELECT time, tz FROM episodes WHERE space = ?"
        args: list[Any] = [space]
        if before is not None:
            sql += " AND time < ?"
            args.append(ts(before))
        async with self._r.execute(sql + " ORDER BY time DESC LIMIT 1", args) as cur:
            row = await cur.fetchone()
        return dt(row[0], row[1]) if row else None

    async def _read(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        """Rows of a quick indexed read, run on the event loop's own thread (see ``__init__``)."""
        return self._q.execute(sql, args).fetchall()

    # ---- memories ------------------------------------------------------------------------
    async def add_memory(self, m: Memory, *, supersedes: int | None = None) -> int:
        """Insert a memory (or a new version superseding ``supersedes``) with its sources."""
        async with self._transaction():
            mid, words = await self._insert_memory(m, supersedes)
        self._index_memory(m, mid, words, supersedes)
        return mid

    async def _insert_memory(self, m: Memory, supersedes: int | None) -> tuple[int, str]:
        """Insert one memory inside the open transaction; returns its id and its index words."""
        root = None
        if supersedes is not None:
            async with self._w.execute(
                "SELECT root, status FROM memories WHERE id = ?", (supersedes,)) as cur:
                row = await cur.fetchone()
            if row is None:
                raise UnknownIdError(f"no memory with id {supersedes}")
            if row[1] == "superseded":
                raise UnknownIdError(f"memory {supersedes} was already superseded")
            root = row[0]
            # valid_to: when we learned otherwise (the new version's valid_from, else now)
            await self._w.execute(
                "UPDATE memories SET status = 'superseded', valid_to = coalesce(valid_to, ?) WHERE id = ?",
                (ts(m.valid_from) or ts(aware(m.created_at)), supersedes))
            await self._w.execute("DELETE FROM memories_fts WHERE rowid = ?", (supersedes,))
        mid = await self._next_id("memories")
        await self._w.execute(
            "INSERT INTO memories (id, root, kind, text, scope, subjects, importance, strength,"
            " last_recalled, created_at, valid_from, valid_to, status, supersedes)"
            " VALUES (?,0,?,?,?,?,?,?,?,?,?,?,?,?)",
            (mid, m.kind, m.text, m.scope, json.dumps(list(m.subjects), ensure_ascii=False),
             m.importance, m.strength, ts(m.last_recalled), ts(aware(m.created_at)),
             ts(m.valid_from), ts(m.valid_to), m.status, supersedes))
        await self._w.execute("UPDATE memories SET root = ? WHERE id = ?", (root or mid, mid))
        words = memory_words(m)
        await self._w.execute("INSERT INTO memories_fts(rowid, words) VALUES (?, ?)", (mid, words))
        await self._w.executemany(
            "INSERT OR IGNORE INTO sources VALUES (?, ?)", [(mid, e) for e in m.sources])
        return mid, words

    def _index_memory(self, m: Memory, mid: int, words: str, supersedes: int | None) -> None:
        """After the commit: the keyword index finds the new version, not the old one."""
        kw = self.keywords
        if supersedes is not None:
            kw.memories.drop([supersedes])
        kw.memories.put([mid], [kw.memory_group(m.scope, m.status)], [word_count(words)])

    async def get_memories(self, ids: Sequence[int]) -> dict[int, Memory]:
        out: dict[int, Memory] = {}
        for chunk in chunks(list(ids)):
            sql, vals = in_list(chunk)
            rows = await self._read(f"SELECT * FROM memories WHERE id IN {sql}", vals)
            srcs: dict[int, list[int]] = {}
            for mid, eid in await self._read(
                    f"SELECT memory_id, episode_id FROM sources WHERE memory_id IN {sql}", vals):
                srcs.setdefault(mid, []).append(eid)
            for row in rows:
                out[row[0]] = memory_row(row, sorted(srcs.get(row[0], [])))
        return out

    async def list_memories(self, vis: Visibility, *, scope: str | None = None, kind: str | None = None,
                            people: Sequence[str] = (), limit: int = 10, offset: int = 0
                            ) -> tuple[list[Memory], int]:
        """Active memories ``vis`` may see (of ``scope``, ``kind``, about any of ``people``), newest
        first: one page of them and how many there are in all."""
        where, args = ["status = 'active'"], []
        if vis.memory_scopes is not None:
            q, v = in_list(sorted(vis.memory_scopes))
            where.append(f"scope IN {q}")
            args += v
        if scope is not None:
            where.append("scope = ?")
            args.append(scope)
        if kind is not None:
            where.append("kind = ?")
            args.append(kind)
        if people:
            where.append("(" + " OR ".join("instr(subjects, ?) > 0" for _ in people) + ")")
            args += [json.dumps(p, ensure_ascii=False) for p in people]
        cond = " AND ".join(where)
        total = (await self._read(f"SELECT count(*) FROM memories WHERE {cond}", args))[0][0]
        ids = [r[0] for r in await self._read(
            f"SELECT id FROM memories WHERE {cond} ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
            [*args, limit, offset])]
        found = await self.get_memories(ids)
        return [found[i] for i in ids if i in found], int(total)

    async def people_named(self, name: str) -> list[str]:
        """The people who have gone by ``name`` (case ignored)."""
        rows = await self._read("SELECT DISTINCT person FROM aliases WHERE lower(alias) = lower(?)", (name,))
        return [r[0] for r in rows]

    async def candidate_memories(self, ids: Sequence[int]) -> list[Any]:
        """Rows (``rows.M_*``) of the memories ``ids``."""
        if not ids:
            return []
        ins, vals = in_list(ids)
        return await self._read(f"SELECT * FROM memories WHERE id IN {ins}", vals)

    async def versions(self, memory_id: int) -> list[int]:
        """Ids of every version of the memory ``memory_id`` belongs to, oldest first."""
        async with self._r.execute(
            "SELECT id FROM memories WHERE root = (SELECT root FROM memories WHERE id = ?) ORDER BY id",
            (memory_id,),
        ) as cur:
            return [r[0] for r in await cur.fetchall()]

    async def set_memory_fields(self, memory_id: int, **fields: Any) -> None:
        """Change bookkeeping fields (status, strength, last_recalled, scope) in place."""
        allowed = {"status", "strength", "last_recalled", "scope", "importance"}
        if not fields or set(fields) - allowed:
            raise ValueError(f"only {sorted(allowed)} can be set in place")
        vals = [ts(v) if isinstance(v, datetime) else v for v in fields.values()]
        sets = ", ".join(f"{k} = ?" for k in fields)
        async with self._lock:
            await self._w.execute(f"UPDATE memories SET {sets} WHERE id = ?", [*vals, memory_id])
            if "scope" in fields or "status" in fields:  # who may find it by keyword changed
                row = await fetch_rows(self._w, "SELECT scope, status FROM memories WHERE id = ?",
                                       (memory_id,))
                if row:
                    self.keywords.memories.regroup(memory_id, self.keywords.memory_group(*row[0]))

    async def delete_memories(self, root_ids: Sequence[int]) -> list[int]:
        """Hard-delete every version of the given memories; returns the deleted row ids."""
        return (await self.erase([], await self.all_versions(root_ids)))[1]

    async def all_versions(self, ids: Sequence[int]) -> list[int]:
        """Every version of the memories ``ids`` (those that exist), merged ones' originals included."""
        out: list[int] = []
        for chunk in chunks(list(map(int, ids))):
            sql, vals = in_list(chunk)
            out += [r[0] for r in await fetch_rows(
                self._w, "SELECT id FROM memories WHERE root IN"
                f" (SELECT root FROM memories WHERE id IN {sql})", vals)]
        return sorted(set(out))

    # ---- consolidation (issue 12; PORT to the Store protocol when memory/store/ lands) ---------
    async def write_memories(self, memories: Sequence[tuple[Memory, int | None]],
                             cursors: dict[str, int], read: Sequence[int] = ()) -> list[int]:
        """Memories (each new, or a version superseding an id) and cursors, in ONE transaction.

        ``read``: the episodes the memories were drawn from; if any was erased meanwhile (a forget
        while the model was thinking), nothing is written and ``ErasedMeanwhile`` is raised.
        """
        done: list[tuple[Memory, int, str, int | None]] = []
        cited = sorted({*read, *(e for m, _ in memories for e in m.sources)})
        async with self._transaction():
            if len(await self._existing("episodes", cited)) < len(cited):
                raise ErasedMeanwhile("some of the lines these memories came from were forgotten meanwhile")
            for m, supersedes in memories:
                mid, words = await self._insert_memory(m, supersedes)
                done.append((m, mid, words, supersedes))
            for name, value in cursors.items():
                await self.vectors._set_cursor(name, value)
        for m, mid, words, supersedes in done:
            self._index_memory(m, mid, words, supersedes)
        return [mid for _, mid, _, _ in done]

    async def set_cursors(self, cursors: dict[str, int]) -> None:
        async with self._transaction():
            for name, value in cursors.items():
                await self.vectors._set_cursor(name, value)

    async def cursors(self, prefix: str) -> dict[str, int]:
        """Every cursor whose name starts with ``prefix``, by name."""
        return dict(await fetch_rows(self._w, "SELECT name, value FROM cursors WHERE name >= ? AND name < ?",
                                     (prefix, prefix + "\uffff")))

    async def episode_backlog(self, after: dict[str, int]) -> list[tuple[str, int, int, float, float]]:
        """(space, new episodes, last id, first time, last time) of every space with episodes past
        ``after[space]``."""
        out = []
        for (space,) in await fetch_rows(self._w, "SELECT name FROM spaces"):
            rows = await fetch_rows(self._w, "SELECT count(*), max(id), min(time), max(time) FROM episodes"
                                    " WHERE space = ? AND id > ?", (space, after.get(space, 0)))
            if rows and rows[0][0]:
                out.append((space, *rows[0]))
        return out

    async def episodes_after(self, space: str, after: int, limit: int) -> list[Episode]:
        """The first ``limit`` episodes of ``space`` past the id ``after``, oldest first."""
        rows = await fetch_rows(self._w, f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE space = ? AND id > ?"
                                " ORDER BY id LIMIT ?", (space, after, limit))
        return [episode_row(r) for r in rows]

    async def job_runs(self) -> dict[str, dict[str, Any]]:
        """The persisted record of every job: last start/finish, status, error, stats, totals."""
        rows = await fetch_rows(self._w, "SELECT job, record FROM job_runs")
        return {job: json.loads(record) for job, record in rows}

    async def save_job_run(self, job: str, record: dict[str, Any]) -> None:
        async with self._transaction():
            await self._w.execute("INSERT INTO job_runs VALUES (?, ?) ON CONFLICT(job) DO UPDATE SET"
                                  " record = excluded.record", (job, json.dumps(record, ensure_ascii=False)))

    async def delete_episodes(self, ids: Sequence[int]) -> list[int]:
        """Hard-delete episodes with their keyword-index rows and vectors; returns the ids deleted."""
        return (await self.erase(ids, []))[0]

    async def erase(self, episode_ids: Sequence[int], memory_ids: Sequence[int], *,
                    people: Sequence[str] = (), spaces: Sequence[str] = ()) -> tuple[list[int], list[int]]:
        """Hard-delete episodes and memories (the exact ids given) with everything that holds their
        text: keyword-index rows, vectors, source links, kept-apart pairs; also ``people``'s names and
        ``spaces``' names and cursors. Returns the (episode, memory) ids deleted.

        THE one exception to episodes being append-only (hard forgetting). One transaction: a crash
        leaves all of it or none. The keyword indexes are rewritten inside it (FTS5 ``optimize``: a
        plain delete leaves the words in older index segments) and ``secure_delete`` zeroes every
        freed page; after the commit the write-ahead log is checkpointed and truncated, so no copy
        of the text is left in the file or beside it.
        """
        async with self._transaction():
            eps = await self._existing("episodes", episode_ids)
            mems = await self._existing("memories", memory_ids)
            for table, ids in (("episodes", eps), ("memories", mems)):
                if ids:  # ids are never given out again (a later line must not inherit a cursor)
                    await self.vectors._set_cursor(f"erased:{table}", max(ids + [await self._erased(table)]))
            for chunk in chunks(eps):
                q, v = in_list(chunk)
                await self._w.execute(f"DELETE FROM episodes_fts WHERE rowid IN {q}", v)
                await self._w.execute(f"DELETE FROM vectors WHERE kind = 'e' AND item IN {q}", v)
                await self._w.execute(f"DELETE FROM sources WHERE episode_id IN {q}", v)
                await self._w.execute(f"DELETE FROM episodes WHERE id IN {q}", v)
            for chunk in chunks(mems):
                q, v = in_list(chunk)
                await self._w.execute(f"DELETE FROM memories_fts WHERE rowid IN {q}", v)
                await self._w.execute(f"DELETE FROM vectors WHERE kind = 'm' AND item IN {q}", v)
                await self._w.execute(f"DELETE FROM kept_apart WHERE a IN {q} OR b IN {q}", v + v)
                await self._w.execute(f"DELETE FROM memories WHERE id IN {q}", v)
            for person in people:
                await self._w.execute("DELETE FROM aliases WHERE person = ?", (person,))
            for space in spaces:
                await self._w.execute("DELETE FROM spaces WHERE name = ?", (space,))
                await self._w.execute("DELETE FROM cursors WHERE substr(name, -?) = ?",
                                      (len(space) + 1, ":" + space))
            for table, ids in (("episodes_fts", eps), ("memories_fts", mems)):
                if ids:
                    await self._w.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
        self.keywords.episodes.drop(eps)
        self.keywords.memories.drop(mems)
        self.facts.forget(eps)
        for space in spaces:
            self._spaces.pop(space, None)
            self.keywords.forget_space(space)
        await self.checkpoint()
        return eps, mems

    async def checkpoint(self) -> bool:
        """Copy the write-ahead log into the file and truncate it (erased text must not linger there);
        False if readers kept it from finishing after a few tries (the next open finishes it).

        On a connection of its own: the writer may be in the middle of a read (the indexer's), and
        SQLite refuses a checkpoint on a connection with a statement open."""
        async with self._lock:
            for attempt in range(5):
                if await asyncio.to_thread(_checkpoint, self.path):
                    return True
                await asyncio.sleep(0.1 * (attempt + 1))
        log.warning("the write-ahead log of %s could not be truncated yet (at the next open)", self.path)
        return False

    async def _existing(self, table: str, ids: Sequence[int]) -> list[int]:
        out: list[int] = []
        for chunk in chunks(sorted(set(map(int, ids)))):
            sql, vals = in_list(chunk)
            rows = await fetch_rows(self._w, f"SELECT id FROM {table} WHERE id IN {sql}", vals)
            out += [r[0] for r in rows]
        return out

    async def _erased(self, table: str) -> int:
        """The highest id ever erased from ``table`` (0: none)."""
        return await self.vectors.cursor(f"erased:{table}")

    async def _next_id(self, table: str) -> int:
        """The id the next row of ``table`` gets: past every row there is and every one erased."""
        top = (await fetch_rows(self._w, f"SELECT coalesce(max(id), 0) FROM {table}"))[0][0]
        return max(top, await self._erased(table)) + 1

    # ---- metabolism (issue 14): strength, archiving, merging, what forgetting reaches ----------
    async def strength_rows(self, since: int = 0, limit: int = 100_000) -> list[tuple[Any, ...]]:
        """(id, strength, last recalled or created, importance, kind) of active memories past ``since``."""
        return await fetch_rows(self._w, "SELECT id, strength, coalesce(last_recalled, created_at),"
                                " importance, kind FROM memories WHERE status = 'active' AND id > ?"
                                " ORDER BY id LIMIT ?",
                                (since, limit))

    async def strength_of(self, ids: Sequence[int]) -> dict[int, tuple[float, float, str]]:
        """Each memory's (stored strength, last recalled or created, status)."""
        out = {}
        for chunk in chunks(sorted(set(ids))):
            sql, vals = in_list(chunk)
            for i, st, t, status in await fetch_rows(
                    self._w, "SELECT id, strength, coalesce(last_recalled, created_at), status FROM memories"
                    f" WHERE id IN {sql}", vals):
                out[i] = (st, t, status)
        return out

    async def set_strengths(self, rows: Sequence[tuple[int, float, float, str]]) -> None:
        """(id, strength, last recalled, status) of many memories in one transaction (superseded
        ones are left alone); a reactivated one moves back among the active in the keyword index."""
        moved = []
        async with self._transaction():
            for i, strength, recalled, status in rows:
                cur = await self._w.execute(
                    "UPDATE memories SET strength = ?, last_recalled = ?, status = ? WHERE id = ?"
                    " AND status != 'superseded' RETURNING scope", (strength, recalled, status, i))
                moved += [(i, r[0], status) for r in await cur.fetchall()]
        for i, scope, status in moved:
            self.keywords.memories.regroup(i, self.keywords.memory_group(scope, status))

    async def archive(self, ids: Sequence[int]) -> list[tuple[int, str]]:
        """Mark active memories archived; returns (id, scope) of those that were."""
        out: list[tuple[int, str]] = []
        async with self._transaction():
            for chunk in chunks(list(ids)):
                sql, vals = in_list(chunk)
                cur = await self._w.execute(f"UPDATE memories SET status = 'archived' WHERE id IN {sql}"
                                            " AND status = 'active' RETURNING id, scope", vals)
                out += [(r[0], r[1]) for r in await cur.fetchall()]
        kw = self.keywords
        kw.memories.regroup_many([i for i, _ in out],
                                 [kw.memory_group(scope, "archived") for _, scope in out])
        return out

    async def scope_memories(self, scope: str, kinds: Sequence[str]) -> list[tuple[int, str]]:
        """(id, text) of the active memories of ``scope`` of ``kinds``."""
        sql, vals = in_list(kinds)
        return await fetch_rows(self._w, "SELECT id, text FROM memories WHERE scope = ?"
                                f" AND status = 'active' AND kind IN {sql} ORDER BY id", [scope, *vals])

    async def memory_scopes(self) -> list[str]:
        return [r[0] for r in await fetch_rows(
            self._w, "SELECT DISTINCT scope FROM memories WHERE status = 'active' ORDER BY scope")]

    async def memory_vectors(self, model: str, ids: Sequence[int]) -> dict[int, bytes]:
        out: dict[int, bytes] = {}
        for chunk in chunks(list(ids)):
            sql, vals = in_list(chunk)
            out.update(await fetch_rows(self._w, "SELECT item, vec FROM vectors WHERE model = ?"
                                        f" AND kind = 'm' AND item IN {sql}", [model, *vals]))
        return out

    async def kept_apart(self, ids: Sequence[int]) -> set[tuple[int, int]]:
        """The pairs (a < b) among ``ids`` the model said record different things."""
        out: set[tuple[int, int]] = set()
        for chunk in chunks(list(ids)):
            sql, vals = in_list(chunk)
            out |= {(a, b) for a, b in await fetch_rows(
                self._w, f"SELECT a, b FROM kept_apart WHERE a IN {sql}", vals)}
        return out

    async def keep_apart(self, ids: Sequence[int]) -> None:
        pairs = [(a, b) for a in ids for b in ids if a < b]
        async with self._transaction():
            await self._w.executemany("INSERT OR IGNORE INTO kept_apart VALUES (?, ?)", pairs)

    async def merge_memories(self, merged: Memory, originals: Sequence[int]) -> int | None:
        """One memory in place of ``originals`` (all still active, else nothing happens: None); they
        are kept, superseded, as versions of it (one root), and it cites all their sources."""
        async with self._transaction():
            sql, vals = in_list(originals)
            rows = await fetch_rows(
                self._w, f"SELECT id, root FROM memories WHERE id IN {sql} AND status = 'active'", vals)
            if len(rows) != len(set(originals)):
                return None
            root = min(r[1] for r in rows)
            mid, words = await self._insert_memory(merged, None)
            for _, old_root in rows:
                await self._w.execute("UPDATE memories SET root = ? WHERE root = ?", (root, old_root))
            await self._w.execute("UPDATE memories SET status = 'superseded', valid_to ="
                                  f" coalesce(valid_to, ?) WHERE id IN {sql}",
                                  [ts(aware(merged.created_at)), *vals])
            await self._w.execute(f"DELETE FROM memories_fts WHERE rowid IN {sql}", vals)
            await self._w.execute("UPDATE memories SET root = ?, supersedes = ? WHERE id = ?",
                                  (root, min(originals), mid))
        self.keywords.memories.drop(list(originals))
        self._index_memory(merged, mid, words, None)
        return mid

    async def memories_citing(self, episode_ids: Sequence[int]) -> list[int]:
        """Memories (any status) with a source among ``episode_ids``."""
        out: set[int] = set()
        for chunk in chunks(sorted(set(episode_ids))):
            sql, vals = in_list(chunk)
            out |= {r[0] for r in await fetch_rows(
                self._w, f"SELECT DISTINCT memory_id FROM sources WHERE episode_id IN {sql}", vals)}
        return sorted(out)

    async def source_ids(self, memory_ids: Sequence[int]) -> list[int]:
        out: set[int] = set()
        for chunk in chunks(sorted(set(memory_ids))):
            sql, vals = in_list(chunk)
            out |= {r[0] for r in await fetch_rows(
                self._w, f"SELECT episode_id FROM sources WHERE memory_id IN {sql}", vals)}
        return sorted(out)

    async def episodes_where(self, *, actor: str | None = None, space: str | None = None,
                             mentions: Sequence[str] = ()) -> list[tuple[int, str]]:
        """(id, content) of the episodes said by ``actor``, in ``space``, or whose text holds one of
        ``mentions`` (a substring; the caller checks word edges)."""
        cond, args = [], []
        if actor is not None:
            cond.append("actor = ?")
            args.append(actor)
        if space is not None:
            cond.append("space = ?")
            args.append(space)
        for m in mentions:
            cond.append("instr(lower(content), lower(?)) > 0")
            args.append(m)
        if not cond:
            return []
        return await fetch_rows(self._w, f"SELECT id, content FROM episodes WHERE {' OR '.join(cond)}", args)

    async def memories_mentioning(self, names: Sequence[str]) -> list[tuple[int, str]]:
        """(id, text) of the memories whose text holds one of ``names`` (the caller checks word edges)."""
        if not names:
            return []
        cond = " OR ".join("instr(lower(text), lower(?)) > 0" for _ in names)
        return await fetch_rows(self._w, f"SELECT id, text FROM memories WHERE {cond}", list(names))

    async def memories_where(self, *, subject: str | None = None, scope: str | None = None) -> list[int]:
        """Memories (any status) about ``subject`` or of ``scope``."""
        rows: list[Any] = []
        if subject is not None:
            rows += await fetch_rows(self._w, "SELECT id FROM memories WHERE instr(subjects, ?) > 0",
                                     (json.dumps(subject, ensure_ascii=False),))
        if scope is not None:
            rows += await fetch_rows(self._w, "SELECT id FROM memories WHERE scope = ?", (scope,))
        return sorted({r[0] for r in rows})

    # ---- keyword search ------------------------------------------------------------------
    async def keyword_episodes(self, query: list[str], vis: Visibility, limit: int,
                               postings: dict[str, np.ndarray] | None = None) -> list[tuple[int, float]]:
        """(id, bm25) of the best-matching visible episodes; higher is better (``postings``: see
        ``Keywords.search_episodes``)."""
        return self.keywords.search_episodes(query, vis, limit, postings)

    async def keyword_memories(self, query: list[str], vis: Visibility, limit: int, include_archived: bool,
                               postings: dict[str, np.ndarray] | None = None) -> list[tuple[int, float]]:
        """(id, bm25) of the best-matching visible memories (active, or archived too); higher is better
        (``postings``: see ``Keywords.search_memories``)."""
        return self.keywords.search_memories(query, vis, limit, include_archived, postings)

    # ---- facts about the store -----------------------------------------------------------
    async def counts(self) -> dict[str, int]:
        out = {}
        for name, sql in (
            ("episodes", "SELECT count(*) FROM episodes"),
            ("memories", "SELECT count(*) FROM memories WHERE status = 'active'"),
            ("archived", "SELECT count(*) FROM memories WHERE status = 'archived'"),
            ("superseded", "SELECT count(*) FROM memories WHERE status = 'superseded'"),
            ("spaces", "SELECT count(DISTINCT space) FROM episodes"),
            ("people", "SELECT count(DISTINCT person) FROM aliases"),
            ("vectors", "SELECT count(*) FROM vectors"),
        ):
            async with self._r.execute(sql) as cur:
                out[name] = (await cur.fetchone())[0]  # type: ignore[index]
        return out

    async def aliases(self, person: str) -> list[str]:
        async with self._r.execute(
            "SELECT alias FROM aliases WHERE person = ? ORDER BY last_seen DESC", (person,)) as cur:
            return [r[0] for r in await cur.fetchall()]

    async def integrity(self) -> list[str]:
        """Problems found by SQLite's integrity check and FTS5's own check (empty when sound)."""
        problems = []
        async with self._r.execute("PRAGMA integrity_check") as cur:
            problems += [r[0] for r in await cur.fetchall() if r[0] != "ok"]
        for t in ("episodes_fts", "memories_fts"):
            try:
                async with self._lock:
                    await self._w.execute(f"INSERT INTO {t}({t}) VALUES ('integrity-check')")
            except sqlite3.DatabaseError as e:
                problems.append(f"{t}: {e}")
        return problems
