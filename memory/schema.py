"""Schema migrations: named functions, applied in order, each recorded by name in its own transaction."""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable

import aiosqlite

Migration = Callable[[aiosqlite.Connection], Awaitable[None]]
MIGRATIONS: list[tuple[str, Migration]] = []


def migration(fn: Migration) -> Migration:
    """Register ``fn`` as the next migration; its name is what the store records."""
    MIGRATIONS.append((fn.__name__, fn))
    return fn


async def run_script(db: aiosqlite.Connection, script: str) -> None:
    """Run statements one by one (``executescript`` would commit the open transaction)."""
    stmt = ""
    for line in script.splitlines(keepends=True):
        stmt += line
        if sqlite3.complete_statement(stmt):
            await db.execute(stmt)
            stmt = ""
    if stmt.strip():
        raise ValueError(f"incomplete SQL statement in migration: {stmt!r}")


@migration
async def m001_core_tables(db: aiosqlite.Connection) -> None:
    await run_script(
        db,
        """
        CREATE TABLE episodes (
            id INTEGER PRIMARY KEY,
            time REAL NOT NULL,
            tz INTEGER NOT NULL DEFAULT 0,
            space TEXT NOT NULL,
            seq INTEGER NOT NULL,
            section INTEGER NOT NULL,
            source TEXT NOT NULL DEFAULT '',
            actor TEXT NOT NULL DEFAULT '',
            actor_name TEXT NOT NULL DEFAULT '',
            kind TEXT NOT NULL,
            content TEXT NOT NULL,
            meta TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX episodes_space_seq ON episodes(space, seq);
        CREATE TRIGGER episodes_append_only BEFORE UPDATE ON episodes
        BEGIN SELECT RAISE(ABORT, 'episodes are append-only'); END;

        CREATE TABLE memories (
            id INTEGER PRIMARY KEY,
            root INTEGER NOT NULL,
            kind TEXT NOT NULL,
            text TEXT NOT NULL,
            scope TEXT NOT NULL,
            subjects TEXT NOT NULL DEFAULT '[]',
            importance REAL NOT NULL DEFAULT 0.5,
            strength REAL NOT NULL DEFAULT 1.0,
            last_recalled REAL,
            created_at REAL NOT NULL,
            valid_from REAL,
            valid_to REAL,
            status TEXT NOT NULL DEFAULT 'active',
            supersedes INTEGER
        );
        CREATE INDEX memories_root ON memories(root);
        CREATE INDEX memories_scope ON memories(scope, status);

        CREATE TABLE sources (
            memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            episode_id INTEGER NOT NULL,
            PRIMARY KEY (memory_id, episode_id)
        ) WITHOUT ROWID;
        CREATE INDEX sources_episode ON sources(episode_id);

        CREATE TABLE vectors (
            model TEXT NOT NULL,
            kind TEXT NOT NULL,
            item INTEGER NOT NULL,
            vec BLOB NOT NULL,
            PRIMARY KEY (model, kind, item)
        ) WITHOUT ROWID;

        CREATE TABLE cursors (name TEXT PRIMARY KEY, value INTEGER NOT NULL);

        CREATE TABLE aliases (
            person TEXT NOT NULL,
            alias TEXT NOT NULL,
            first_seen REAL NOT NULL,
            last_seen REAL NOT NULL,
            PRIMARY KEY (person, alias)
        ) WITHOUT ROWID;

        CREATE VIRTUAL TABLE episodes_fts USING fts5(words, tokenize = 'unicode61 remove_diacritics 0');
        CREATE VIRTUAL TABLE memories_fts USING fts5(words, tokenize = 'unicode61 remove_diacritics 0');
        """
    )
