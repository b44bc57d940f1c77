"""What every migration uses: the ordered registry (``migration``), ``run_script`` and the trigger
that keeps episodes append-only."""

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


APPEND_ONLY = """CREATE TRIGGER episodes_append_only BEFORE UPDATE ON episodes
        BEGIN SELECT RAISE(ABORT, 'episodes are append-only'); END"""
