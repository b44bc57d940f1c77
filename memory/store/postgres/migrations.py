"""The PostgreSQL store's migrations: the SQLite store's named migrations (``sqlite/migrations``), one
for one under the same names, each frozen once released and recorded by name in ``_migrations``.

A PostgreSQL store is newer than m012: none ever held rows before m012's shape, so the migrations
that re-computed stored rows with code (m002's keyed words, m003/m004's text shapes, m006's words)
have only their schema part here, and each refuses (``StoreError``) a table that holds rows where
it would have had to recompute them. Several instances may open one database at once: the runner
holds an advisory lock while it migrates, so one of them migrates and the others find it done.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Awaitable, Callable

import numpy as np
import psycopg

from ...errors import StoreError

log = logging.getLogger("engram.store")

Migration = Callable[[psycopg.AsyncConnection], Awaitable[None]]
MIGRATIONS: list[tuple[str, Migration]] = []
MIGRATING = 0x656E6772616D00  # the advisory lock key held while one instance migrates ("engram\0")
T = 'text COLLATE "C"'  # text compared and ordered byte by byte, as SQLite does


def migration(fn: Migration) -> Migration:
    MIGRATIONS.append((fn.__name__, fn))
    return fn


async def run(db: psycopg.AsyncConnection, script: str) -> None:
    """Statements separated by a line holding only ``;;`` (bodies of functions hold ``;``)."""
    for stmt in script.split("\n;;\n"):
        if stmt.strip():
            await db.execute(stmt)  # type: ignore[arg-type]


async def _empty(db: psycopg.AsyncConnection, table: str, name: str) -> None:
    cur = await db.execute(f"SELECT EXISTS (SELECT 1 FROM {table})")  # type: ignore[arg-type]
    row = await cur.fetchone()
    if row and row[0]:
        raise StoreError(f"migration {name} would have to recompute the rows of {table}, and no PostgreSQL "
                         "store held rows before it: this database was not made by Engram",
                         code="store_foreign")


@migration
async def m001_core_tables(db: psycopg.AsyncConnection) -> None:
    """The core tables; the keyword index is a postings table per kind (a word, a row), with each
    row's words beside it (their count is BM25's document length). Episodes are append-only: a
    trigger refuses an update, but inside a hard forget (``engram.rewriting`` set for its transaction)."""
    await run(db, f"""
        CREATE TABLE episodes (
            id bigint PRIMARY KEY, time double precision NOT NULL, tz integer NOT NULL DEFAULT 0,
            space {T} NOT NULL, seq integer NOT NULL, section integer NOT NULL,
            source {T} NOT NULL DEFAULT '', actor {T} NOT NULL DEFAULT '', actor_name {T} NOT NULL DEFAULT '',
            kind {T} NOT NULL, content text NOT NULL, meta text NOT NULL DEFAULT '{{}}')
        ;;
        CREATE INDEX episodes_space_seq ON episodes(space, seq)
        ;;
        CREATE FUNCTION engram_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF coalesce(current_setting('engram.rewriting', true), '') = 'on' THEN RETURN NEW; END IF;
            RAISE EXCEPTION 'episodes are append-only';
        END $$
        ;;
        CREATE TRIGGER episodes_append_only BEFORE UPDATE ON episodes
            FOR EACH ROW EXECUTE FUNCTION engram_append_only()
        ;;
        CREATE TABLE memories (
            id bigint PRIMARY KEY, root bigint NOT NULL, kind {T} NOT NULL, text text NOT NULL,
            scope {T} NOT NULL, subjects text NOT NULL DEFAULT '[]',
            importance double precision NOT NULL DEFAULT 0.5, strength double precision NOT NULL DEFAULT 1.0,
            last_recalled double precision, created_at double precision NOT NULL,
            valid_from double precision, valid_to double precision,
            status {T} NOT NULL DEFAULT 'active', supersedes bigint)
        ;;
        CREATE INDEX memories_root ON memories(root)
        ;;
        CREATE INDEX memories_scope ON memories(scope, status)
        ;;
        CREATE TABLE sources (
            memory_id bigint NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            episode_id bigint NOT NULL, PRIMARY KEY (memory_id, episode_id))
        ;;
        CREATE INDEX sources_episode ON sources(episode_id)
        ;;
        CREATE TABLE vectors (model {T} NOT NULL, kind {T} NOT NULL, item bigint NOT NULL, vec bytea NOT NULL,
                              PRIMARY KEY (model, kind, item))
        ;;
        CREATE TABLE cursors (name {T} PRIMARY KEY, value bigint NOT NULL)
        ;;
        CREATE TABLE aliases (person {T} NOT NULL, alias {T} NOT NULL, first_seen double precision NOT NULL,
                              last_seen double precision NOT NULL, PRIMARY KEY (person, alias))
        ;;
        CREATE TABLE episodes_kw (id bigint PRIMARY KEY, words text NOT NULL)
        ;;
        CREATE TABLE episode_words (word {T} NOT NULL, id bigint NOT NULL, PRIMARY KEY (word, id))
        ;;
        CREATE TABLE memories_kw (id bigint PRIMARY KEY, words text NOT NULL)
        ;;
        CREATE TABLE memory_words (word {T} NOT NULL, id bigint NOT NULL, PRIMARY KEY (word, id))
        """)


@migration
async def m002_keyword_index_per_space(db: psycopg.AsyncConnection) -> None:
    """Places get a key, and each posting of an episode names its place's key, so one chat's words
    are read without the others' (SQLite's keyed tokens)."""
    await _empty(db, "episodes", "m002_keyword_index_per_space")
    await run(db, f"""
        CREATE TABLE spaces (id integer GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, name {T} NOT NULL
            UNIQUE)
        ;;
        ALTER TABLE episodes_kw ADD COLUMN key integer NOT NULL
        ;;
        DROP TABLE episode_words
        ;;
        CREATE TABLE episode_words (word {T} NOT NULL, key integer NOT NULL, id bigint NOT NULL,
                                    PRIMARY KEY (word, key, id))
        """)


@migration
async def m003_episode_shape(db: psycopg.AsyncConnection) -> None:
    """Each episode's text shape (``text.text_shape``), so recall's text features need no text."""
    await _empty(db, "episodes", "m003_episode_shape")
    await db.execute("ALTER TABLE episodes ADD COLUMN shape integer NOT NULL DEFAULT 0")


@migration
async def m004_empty_lines(db: psycopg.AsyncConnection) -> None:
    """Lines with no content of their own marked in their shape: only rows to recompute (none here)."""
    await _empty(db, "episodes", "m004_empty_lines")


@migration
async def m005_job_runs(db: psycopg.AsyncConnection) -> None:
    """The scheduler's record of each job; episodes in id order per place (consolidation's reads)."""
    await run(db, f"""
        CREATE TABLE job_runs (job {T} PRIMARY KEY, record text NOT NULL)
        ;;
        CREATE INDEX episodes_space_id ON episodes(space, id)
        """)


@migration
async def m006_latin_beside_chinese(db: psycopg.AsyncConnection) -> None:
    """Words re-indexed where a Latin word touches Chinese text: only rows to recompute (none here)."""
    await _empty(db, "episodes_kw", "m006_latin_beside_chinese")
    await _empty(db, "memories_kw", "m006_latin_beside_chinese")


@migration
async def m007_episode_time_indexes(db: psycopg.AsyncConnection) -> None:
    await run(db, """
        CREATE INDEX episodes_time ON episodes(time)
        ;;
        CREATE INDEX episodes_actor_time ON episodes(actor, time)
        """)


@migration
async def m008_kept_apart(db: psycopg.AsyncConnection) -> None:
    await db.execute("CREATE TABLE kept_apart (a bigint NOT NULL, b bigint NOT NULL, PRIMARY KEY (a, b))")


@migration
async def m009_unique_space_seq(db: psycopg.AsyncConnection) -> None:
    """A place's sequence numbers are unique (several instances write one database)."""
    await run(db, """
        DROP INDEX episodes_space_seq
        ;;
        CREATE UNIQUE INDEX episodes_space_seq ON episodes(space, seq)
        """)


@migration
async def m010_names_per_place(db: psycopg.AsyncConnection) -> None:
    await run(db, f"""
        CREATE TABLE place_names (space {T} NOT NULL, person {T} NOT NULL, name {T} NOT NULL,
                                  last_seen double precision NOT NULL, PRIMARY KEY (space, person))
        ;;
        INSERT INTO place_names SELECT space, actor, (array_agg(actor_name ORDER BY time DESC))[1], max(time)
            FROM episodes WHERE actor != '' AND actor_name != '' GROUP BY space, actor
        """)


@migration
async def m011_episode_summaries(db: psycopg.AsyncConnection) -> None:
    """The counts beside the episodes (per day in each line's own zone, per place, per speaker, and
    who answers whom), kept by row triggers in the write's own transaction, as SQLite's m011. The
    triggers run BEFORE each row: a statement writing many rows has each see the rows before it
    (an AFTER trigger would see them all at the end of the statement)."""
    await run(db, f"""
        CREATE INDEX episodes_space_time ON episodes(space, time)
        ;;
        CREATE TABLE episode_days (day {T} PRIMARY KEY, n integer NOT NULL)
        ;;
        CREATE TABLE place_counts (space {T} PRIMARY KEY, n integer NOT NULL)
        ;;
        CREATE TABLE speaker_counts (actor {T} PRIMARY KEY, n integer NOT NULL)
        ;;
        CREATE TABLE talk_pairs (a {T} NOT NULL, b {T} NOT NULL, n integer NOT NULL, PRIMARY KEY (a, b))
        ;;
        CREATE FUNCTION engram_day(t double precision, tz integer) RETURNS text LANGUAGE sql IMMUTABLE AS
        $$ SELECT to_char(to_timestamp(least(t + tz * 60, 253402300799)) AT TIME ZONE 'UTC', 'YYYY-MM-DD') $$
        ;;
        CREATE FUNCTION engram_pair(x text, y text, step integer) RETURNS void LANGUAGE plpgsql AS $$
        DECLARE lo text := least(x COLLATE "C", y COLLATE "C"); hi text := greatest(x COLLATE "C", y
            COLLATE "C");
        BEGIN
            IF x IS NULL OR y IS NULL OR x = y THEN RETURN; END IF;
            IF step > 0 THEN
                INSERT INTO talk_pairs VALUES (lo, hi, 1) ON CONFLICT (a, b) DO UPDATE SET n = talk_pairs.n
                    + 1;
            ELSE
                UPDATE talk_pairs SET n = n - 1 WHERE a = lo AND b = hi;
                DELETE FROM talk_pairs WHERE a = lo AND b = hi AND n <= 0;
            END IF;
        END $$
        ;;
        CREATE FUNCTION engram_counted() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE prev text; nxt text; later boolean;
        BEGIN
            INSERT INTO episode_days VALUES (engram_day(NEW.time, NEW.tz), 1)
                ON CONFLICT (day) DO UPDATE SET n = episode_days.n + 1;
            INSERT INTO place_counts VALUES (NEW.space, 1) ON CONFLICT (space) DO UPDATE SET n =
                place_counts.n + 1;
            IF NEW.actor != '' THEN
                INSERT INTO speaker_counts VALUES (NEW.actor, 1)
                    ON CONFLICT (actor) DO UPDATE SET n = speaker_counts.n + 1;
                SELECT actor INTO prev FROM episodes WHERE space = NEW.space AND seq < NEW.seq AND actor != ''
                    ORDER BY seq DESC LIMIT 1;
                PERFORM engram_pair(prev, NEW.actor, 1);
                SELECT EXISTS (SELECT 1 FROM episodes WHERE space = NEW.space AND seq > NEW.seq) INTO later;
                IF later THEN
                    SELECT actor INTO nxt FROM episodes WHERE space = NEW.space AND seq > NEW.seq AND actor
                        != ''
                        ORDER BY seq LIMIT 1;
                    PERFORM engram_pair(prev, nxt, -1);
                    PERFORM engram_pair(NEW.actor, nxt, 1);
                END IF;
            END IF;
            RETURN NEW;
        END $$
        ;;
        CREATE FUNCTION engram_uncounted() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE prev text; nxt text; d text := engram_day(OLD.time, OLD.tz);
        BEGIN
            UPDATE episode_days SET n = n - 1 WHERE day = d;
            DELETE FROM episode_days WHERE day = d AND n <= 0;
            UPDATE place_counts SET n = n - 1 WHERE space = OLD.space;
            DELETE FROM place_counts WHERE space = OLD.space AND n <= 0;
            IF OLD.actor != '' THEN
                UPDATE speaker_counts SET n = n - 1 WHERE actor = OLD.actor;
                DELETE FROM speaker_counts WHERE actor = OLD.actor AND n <= 0;
                SELECT actor INTO prev FROM episodes WHERE space = OLD.space AND seq < OLD.seq AND actor != ''
                    ORDER BY seq DESC LIMIT 1;
                SELECT actor INTO nxt FROM episodes WHERE space = OLD.space AND seq > OLD.seq AND actor != ''
                    ORDER BY seq LIMIT 1;
                PERFORM engram_pair(prev, OLD.actor, -1);
                PERFORM engram_pair(OLD.actor, nxt, -1);
                PERFORM engram_pair(prev, nxt, 1);
            END IF;
            RETURN OLD;
        END $$
        ;;
        INSERT INTO episode_days SELECT engram_day(time, tz) AS day, count(*) FROM episodes GROUP BY day
        ;;
        INSERT INTO place_counts SELECT space, count(*) FROM episodes GROUP BY space
        ;;
        INSERT INTO speaker_counts SELECT actor, count(*) FROM episodes WHERE actor != '' GROUP BY actor
        ;;
        INSERT INTO talk_pairs SELECT least(x, y), greatest(x, y), count(*) FROM (SELECT actor AS x,
            lag(actor) OVER (PARTITION BY space ORDER BY seq) AS y FROM episodes WHERE actor != '') p
            WHERE y IS NOT NULL AND x != y GROUP BY 1, 2
        ;;
        CREATE TRIGGER episodes_counted BEFORE INSERT ON episodes FOR EACH ROW EXECUTE FUNCTION
            engram_counted()
        ;;
        CREATE TRIGGER episodes_uncounted BEFORE DELETE ON episodes FOR EACH ROW EXECUTE FUNCTION
            engram_uncounted()
        """)


@migration
async def m012_place_titles(db: psycopg.AsyncConnection) -> None:
    await db.execute(f"CREATE TABLE place_titles (space {T} PRIMARY KEY, title {T} NOT NULL,"  # type: ignore[arg-type]
                     " seen double precision NOT NULL)")


@migration
async def pg001_change_log(db: psycopg.AsyncConnection) -> None:
    """PostgreSQL's own (several instances): each commit's changes by reference, in commit order, so
    every other instance follows them into its in-memory indexes (``following``)."""
    await run(db, f"""
        CREATE TABLE change_log (n bigint PRIMARY KEY, at double precision NOT NULL, kind {T} NOT NULL,
                                 ids bigint[] NOT NULL, model {T} NOT NULL DEFAULT '',
                                 fields {T} NOT NULL DEFAULT '')
        """)



@migration
async def m013_ranking(db: psycopg.AsyncConnection) -> None:
    """As SQLite's m013: the learned ranking's named JSON states and the recent recalls' feedback rows."""
    await run(db, f"""
        CREATE TABLE ranking (name {T} PRIMARY KEY, state text NOT NULL)
        ;;
        CREATE TABLE recall_feedback (id bigint PRIMARY KEY, space {T} NOT NULL, record text NOT NULL)
        ;;
        CREATE INDEX recall_feedback_space ON recall_feedback (space, id)
        """)


@migration
async def pg002_erase_list(db: psycopg.AsyncConnection) -> None:
    """PostgreSQL's own (several instances): the erase list in the database, written by each hard
    forget in its own transaction (``store/erase_records``), so a restore run on any host erases again
    what any instance forgot. A restore leaves it as it is."""
    await db.execute("CREATE TABLE erase_list (n bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
                     " record text NOT NULL)")


_M014_PAGE = 16_384
_M014_ROWS = {
    "e": ("SELECT v.item, s.id, v.vec FROM vectors v JOIN episodes e ON e.id = v.item"
          " JOIN spaces s ON s.name = e.space WHERE v.model = %s AND v.kind = 'e' AND v.item > %s"
          " ORDER BY v.item LIMIT %s"),
    "m": ("SELECT v.item, NULL, v.vec FROM vectors v JOIN memories m ON m.id = v.item"
          " WHERE v.model = %s AND v.kind = 'm' AND v.item > %s ORDER BY v.item LIMIT %s"),
}


@migration
async def m014_vector_codes(db: psycopg.AsyncConnection) -> None:
    """As SQLite's m014: each passage vector also as its int8 codes (an episode's with its place key),
    one factor per model, filled from the stored vectors with the same frozen quantisation."""
    await run(db, f"""
        CREATE TABLE vector_codes (model {T} NOT NULL, kind {T} NOT NULL, item bigint NOT NULL,
                                   place integer, codes bytea NOT NULL, PRIMARY KEY (model, kind, item))
        ;;
        CREATE TABLE vector_scales (model {T} PRIMARY KEY, factor double precision NOT NULL)
        """)
    cur = await db.execute("SELECT DISTINCT model FROM vectors WHERE model NOT LIKE '%%#as-query'")
    for (model,) in await cur.fetchall():
        factor = None
        for kind in ("e", "m"):
            after = 0
            while True:
                cur = await db.execute(_M014_ROWS[kind], (model, after, _M014_PAGE))  # type: ignore[arg-type]
                found = await cur.fetchall()
                if not found:
                    break
                raw = np.frombuffer(b"".join(bytes(r[2]) for r in found), np.float32).reshape(len(found), -1)
                norms = np.linalg.norm(raw, axis=-1, keepdims=True)
                vecs = raw / np.where(norms == 0, 1, norms)
                if factor is None:
                    top = float(np.abs(vecs).max()) if vecs.size else 0.0
                    factor = 127.0 / min(1.0, max(1.5 * top, 4.0 / math.sqrt(vecs.shape[-1])))
                    await db.execute("INSERT INTO vector_scales VALUES (%s, %s)", (model, factor))
                codes = np.clip(np.rint(vecs * factor), -127, 127).astype(np.int8)
                async with db.cursor() as c:
                    await c.executemany(
                        "INSERT INTO vector_codes VALUES (%s, %s, %s, %s, %s)",
                        [(model, kind, r[0], r[1], k.tobytes()) for r, k in zip(found, codes)])
                after = found[-1][0]

@migration
async def m015_episode_keyword_merges(db: psycopg.AsyncConnection) -> None:
    """SQLite's m015 widens its FTS5 merges; the PostgreSQL store's keywords are postings tables (a
    word and a row each, in B-trees), which have no segments to merge: nothing to change, the name
    recorded so that both backends' migrations stay the same list."""


@migration
async def m016_episode_batch_counts(db: psycopg.AsyncConnection) -> None:
    """SQLite's m016 counts a batch of new episodes once instead of row by row; PostgreSQL's counting
    triggers stay as they are (its writes go to the server a statement at a time): nothing to
    change, the name recorded so that both backends' migrations stay the same list."""


@migration
async def m017_episode_counts_later(db: psycopg.AsyncConnection) -> None:
    """SQLite's m017 appends a batch's speaker and talk-pair counts beside the totals, folded in
    later; PostgreSQL's triggers keep the totals row by row as before: nothing to change, the name
    recorded so that both backends' migrations stay the same list."""


@migration
async def m018_episode_place_order(db: psycopg.AsyncConnection) -> None:
    """SQLite's m018 drops the (space, id) index, its readers reading (space, seq); PostgreSQL keeps
    its index and its queries: nothing to change, the name recorded so that both backends'
    migrations stay the same list."""


async def migrate(db: psycopg.AsyncConnection) -> None:
    """Apply the migrations not yet applied, each in its own transaction (``db`` in autocommit)."""
    await db.execute("SELECT pg_advisory_lock(%s)", (MIGRATING,))
    try:
        await db.execute("CREATE TABLE IF NOT EXISTS _migrations (name text PRIMARY KEY, applied_at double "
                         "precision)")
        cur = await db.execute("SELECT name FROM _migrations")
        applied = {r[0] for r in await cur.fetchall()}
        done = []
        for name, fn in MIGRATIONS:
            if name in applied:
                continue
            async with db.transaction():
                await fn(db)
                await db.execute("INSERT INTO _migrations VALUES (%s, %s)", (name, time.time()))
            done.append(name)
        if done and not applied:
            log.info("created the store's tables in PostgreSQL (%d migrations, up to %s)", len(done),
                     done[-1])
        elif done:
            log.info("applied %d migrations: %s", len(done), ", ".join(done))
    finally:
        await db.execute("SELECT pg_advisory_unlock(%s)", (MIGRATING,))


async def pending(db: psycopg.AsyncConnection) -> list[str]:
    """The migrations a database still lacks (all of them for one Engram never opened)."""
    cur = await db.execute("SELECT to_regclass('_migrations') IS NOT NULL")
    row = await cur.fetchone()
    if not row or not row[0]:
        return [n for n, _ in MIGRATIONS]
    cur = await db.execute("SELECT name FROM _migrations")
    applied = {r[0] for r in await cur.fetchall()}
    return [n for n, _ in MIGRATIONS if n not in applied]
