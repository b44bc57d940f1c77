"""The checks run before a store file is touched: a folder, a foreign file or one written by a newer
Engram is refused and left as it was; a read-only open refuses a file that still needs migrating."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import aiosqlite

from ...errors import StoreError
from .migrations import MIGRATIONS
from .transactions import cannot_write

SQLITE_MAGIC = b"SQLite format 3\x00"


def check_header(path: Path) -> None:
    if path.is_dir():
        raise StoreError(f"{path} is a folder; give the path of a store file inside it", code="store_folder",
                         path=path)
    if not path.parent.is_dir():
        raise StoreError(f"cannot create {path}: the folder {path.parent} does not exist",
                         code="store_no_folder", path=path, folder=path.parent)
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb") as f:
        if f.read(16) != SQLITE_MAGIC:
            raise StoreError(f"{path} is not an Engram store (not an SQLite file); left untouched",
                             code="store_not_sqlite", path=path)


async def check_known_schema(db: aiosqlite.Connection, path: Path) -> None:
    try:
        async with db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name = '_migrations'") as cur:
            exists = await cur.fetchone()
        if not exists:
            async with db.execute("SELECT count(*) FROM sqlite_master") as cur:
                others = (await cur.fetchone())[0]  # type: ignore[index]
            if others:
                raise StoreError(f"{path} is an SQLite file of another program; left untouched",
                                 code="store_foreign", path=path)
            return
        async with db.execute("SELECT name FROM _migrations") as cur:
            applied = {r[0] for r in await cur.fetchall()}
    except sqlite3.DatabaseError as e:
        if cannot_write(e):  # a read-only folder, a full disk: said as such by the open
            raise
        raise StoreError(f"{path} cannot be read as an Engram store ({e}); left untouched",
                         code="store_unreadable", path=path) from e
    unknown = applied - {name for name, _ in MIGRATIONS}
    if unknown:
        raise StoreError(
            f"{path} was written by a newer Engram (migrations {sorted(unknown)}); "
            "upgrade the plugin to open it. The file was left untouched.", code="store_newer", path=path
        )


async def check_migrated(db: aiosqlite.Connection, path: Path) -> None:
    """Refuse (untouched) a file a read-only open cannot serve: not a store yet, or one that needs
    migrating first."""
    try:
        async with db.execute("SELECT name FROM _migrations") as cur:
            applied = {r[0] for r in await cur.fetchall()}
    except sqlite3.DatabaseError:
        raise StoreError(f"{path} is not an Engram store yet; open it read-write once",
                         code="store_not_migrated", path=path) from None
    pending = [name for name, _ in MIGRATIONS if name not in applied]
    if pending:
        raise StoreError(f"{path} needs migrations {pending}; open it read-write once",
                         code="store_not_migrated", path=path)
