"""m005-m010: job records, Latin words beside Chinese re-indexed, time indexes, pairs kept apart,
unique sequence numbers per place, names per place."""

from __future__ import annotations

import logging

import aiosqlite

from ....text.words import episode_words, has_cjk, words
from ..codec import EPISODE_COLUMNS, episode_row
from ..keywords import keyed_words
from .base import APPEND_ONLY, migration, run_script

log = logging.getLogger("engram.store")


@migration
async def m005_job_runs(db: aiosqlite.Connection) -> None:
    """The scheduler's record of each job (last run, status, stats, totals), one JSON row per job; and
    episodes in id order per place, so consolidation reads a place's new lines without its old ones."""
    await run_script(
        db,
        """
        CREATE TABLE job_runs (job TEXT PRIMARY KEY, record TEXT NOT NULL);
        CREATE INDEX episodes_space_id ON episodes(space, id);
        """,
    )


@migration
async def m006_latin_beside_chinese(db: aiosqlite.Connection) -> None:
    """Index words again where a Latin word touches Chinese text ("Bart和同学们一起…").

    Such a word used to swallow the Chinese after it as one token no query could match (see
    ``text._RUNS``); only rows with Chinese in them can differ, and only those that do are rewritten.
    Unlike the migrations before it, it brings the index to the live code's words (``text.words``,
    as the store writes them): that is what it is for; a later change of the words needs its own.
    """
    n = 0
    last = 0
    cols = ", ".join(f"e.{c.strip()}" for c in EPISODE_COLUMNS.split(","))
    while rows := list(await db.execute_fetchall(
            f"SELECT {cols}, s.id, f.c0 FROM episodes e JOIN spaces s ON s.name = e.space"
            " JOIN episodes_fts_content f ON f.id = e.id WHERE e.id > ? ORDER BY e.id LIMIT 5000", (last,))):
        changed = []
        for r in rows:
            if has_cjk(r[10]) or has_cjk(r[8]):  # content, actor_name
                new = keyed_words(episode_words(episode_row(r)), r[-2])
                if new != r[-1]:
                    changed.append((new, r[0]))
        await db.executemany("UPDATE episodes_fts SET words = ? WHERE rowid = ?", changed)
        n += len(changed)
        last = rows[-1][0]
    last = 0
    while rows := list(await db.execute_fetchall(
            "SELECT m.id, m.text, f.c0 FROM memories m JOIN memories_fts_content f ON f.id = m.id"
            " WHERE m.id > ? ORDER BY m.id LIMIT 5000", (last,))):
        changed = [(new, i) for i, text, old in rows
                   if has_cjk(text) and (new := " ".join(words(text))) != old]
        await db.executemany("UPDATE memories_fts SET words = ? WHERE rowid = ?", changed)
        n += len(changed)
        last = rows[-1][0]
    if n:
        log.info("indexed the words of %d items with Latin words beside Chinese again", n)


@migration
async def m007_episode_time_indexes(db: aiosqlite.Connection) -> None:
    """A day's episodes across places (the diary) and a person's last line (the sense of time)."""
    await db.execute("CREATE INDEX episodes_time ON episodes(time)")
    await db.execute("CREATE INDEX episodes_actor_time ON episodes(actor, time)")


@migration
async def m008_kept_apart(db: aiosqlite.Connection) -> None:
    """Groups of similar memories the model said record different things (merging asks them once)."""
    await db.execute("CREATE TABLE kept_apart (a INTEGER NOT NULL, b INTEGER NOT NULL, PRIMARY KEY (a, b))"
                     " WITHOUT ROWID")


@migration
async def m009_unique_space_seq(db: aiosqlite.Connection) -> None:
    """A place's sequence numbers are unique: two writers (the bot and the CLI) can no longer give two
    episodes the same place in a chat. Files that already hold such pairs get those chats renumbered
    in their order (sequence number, then id); episodes are append-only, so the guard is lifted for it.
    SQL only: it computes nothing with the live code.
    """
    dup = [r[0] for r in await db.execute_fetchall(
        "SELECT DISTINCT space FROM (SELECT space FROM episodes GROUP BY space, seq HAVING count(*) > 1)")]
    if dup:
        log.warning("renumbering the episodes of %d chats whose sequence numbers repeat (once)", len(dup))
        await db.execute("DROP TRIGGER episodes_append_only")
        for space in dup:
            ids = [r[0] for r in await db.execute_fetchall(
                "SELECT id FROM episodes WHERE space = ? ORDER BY seq, id", (space,))]
            await db.executemany("UPDATE episodes SET seq = ? WHERE id = ?",
                                 [(n, i) for n, i in enumerate(ids, 1)])
        await db.execute(APPEND_ONLY)
    await run_script(
        db,
        """
        DROP INDEX episodes_space_seq;
        CREATE UNIQUE INDEX episodes_space_seq ON episodes(space, seq);
        """,
    )


@migration
async def m010_names_per_place(db: aiosqlite.Connection) -> None:
    """The name each person last went by in each place, so a note shows the name this chat knows
    (SQL only: it computes nothing with the live code)."""
    await run_script(
        db,
        """
        CREATE TABLE place_names (
            space TEXT NOT NULL,
            person TEXT NOT NULL,
            name TEXT NOT NULL,
            last_seen REAL NOT NULL,
            PRIMARY KEY (space, person)
        ) WITHOUT ROWID;
        INSERT INTO place_names
            SELECT space, actor, actor_name, max(time) FROM episodes
            WHERE actor != '' AND actor_name != '' GROUP BY space, actor;
        """,
    )
