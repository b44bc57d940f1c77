"""A damaged store file found before anything is written to it: ``PRAGMA quick_check`` at open, and
a refusal that says what is damaged (which tables and indexes), that the file was left untouched,
and how to get back what it holds. Also a log file lost beside its index (``-wal`` gone or cut,
``-shm`` left: a store folder copied without it), which SQLite would open as if nothing was missing.
"""

from __future__ import annotations

import logging
import re
import sqlite3
import sys
from pathlib import Path

import aiosqlite

from ...errors import StoreDamaged, StoreError

log = logging.getLogger("engram.store")

DAMAGE_CODES = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB
SHOWN = 4  # damaged places named in the message
WAL_INDEX_VERSION = 3007000  # the first field of a -shm file's header (its two copies must agree)


def is_damage(e: sqlite3.DatabaseError) -> bool:
    """Whether ``e`` says the file is damaged (not busy, locked, full or read-only)."""
    code = getattr(e, "sqlite_errorcode", None)  # Python 3.11+
    if code is not None:
        return code & 0xFF in DAMAGE_CODES
    return "malformed" in str(e) or "not a database" in str(e)


def _recover(path: Path) -> str:
    return (f"Keep a copy of it (with its -wal and -shm files, if any); recover what it holds with: "
            f"sqlite3 {path} \".recover\" | sqlite3 recovered.db, then put recovered.db in its place "
            f"(or move it away to start anew)")


def _places(where: list[str]) -> str:
    return "; ".join(where[:SHOWN]) or "SQLite cannot read it"


def damaged(path: Path, where: list[str]) -> StoreError:
    return StoreError(f"{path} is damaged ({_places(where)}); it was left untouched and nothing is "
                      f"recorded until it is dealt with. {_recover(path)}", code="store_damaged", path=path)


def found_damage(path: Path, where: list[str]) -> StoreDamaged:
    """The damage the weekly check found in the store while it was open."""
    return StoreDamaged(f"{path} is damaged ({_places(where)}), found by the check in the background; "
                        f"nothing more is written to it (recall goes on from what can be read). Stop the "
                        f"bot; {_recover(path)}", path=path)


async def find_damage(db: aiosqlite.Connection) -> list[str]:
    """The damaged places of the file (``PRAGMA quick_check``); empty when it is sound."""
    try:
        problems = [str(r[0]) for r in await db.execute_fetchall("PRAGMA quick_check(20)")]
    except sqlite3.DatabaseError as e:
        if not is_damage(e):
            raise
        problems = [str(e)]
    return [] if problems == ["ok"] else await _where(db, problems)


async def check_intact(db: aiosqlite.Connection, path: Path) -> None:
    """Refuse a damaged file (``PRAGMA quick_check``), before anything is written to it."""
    where = await find_damage(db)
    if where:
        raise damaged(path, where)


async def _where(db: aiosqlite.Connection, problems: list[str]) -> list[str]:
    """The damaged tables and indexes: each table checked alone, and the pages the check named."""
    found: dict[str, str] = {}
    try:
        rows = await db.execute_fetchall("SELECT name FROM sqlite_master WHERE type = 'table'")
        tables = [str(r[0]) for r in rows]
    except sqlite3.DatabaseError as e:
        return [f"its list of tables cannot be read: {e}"]
    for t in tables:
        try:
            said = [str(r[0]) for r in await db.execute_fetchall(f'PRAGMA quick_check("{t}")')]
        except sqlite3.DatabaseError as e:
            said = [str(e)]
        if said != ["ok"] and not said[0].startswith("no such"):
            problems = [*problems, *said]
            found.setdefault(f"table {t}", said[0].replace("*** in database main ***\n", ""))
    for page in sorted({int(p) for text in problems for p in re.findall(r"[Pp]age (\d+)", text)}):
        try:
            rows = await db.execute_fetchall("SELECT name FROM dbstat WHERE pageno = ?", (page,))
            names = {str(r[0]) for r in rows}
        except sqlite3.DatabaseError:
            continue
        for name in sorted(names):
            found.setdefault(name, f"page {page}")
    return [f"{name}: {what}" for name, what in found.items()] or problems


def check_log(path: Path, *, copied: bool = False) -> None:
    """Say (once, at open) when the ``-wal`` file is missing or shorter than its ``-shm`` index says:
    the commits it held are not in the store file, and the open that follows makes that final.

    ``copied``: the folder is a copy of one whose store was open (``clean_close.copied``): the log
    is still where it was copied from, so the store is refused untouched, saying how to bring it
    or to go on without it. Otherwise (a power cut with ``synchronous=NORMAL`` loses the last
    commits in the same way, and can be told apart from a copy only by the marker) it is logged."""
    lost = lost_changes(path)
    if not lost:
        return
    shm, wal = Path(f"{path}-shm"), Path(f"{path}-wal")
    how = "missing" if not wal.is_file() else f"cut ({wal.stat().st_size} bytes)"
    if copied:
        raise StoreError(
            f"{path} was copied while its store was open, without its log {wal.name} ({how}): the "
            f"{lost} changes it held are not in {path.name}. Nothing was changed. Copy {wal.name} too, "
            f"from the folder it was copied from (stop the bot there first); or, to open it without "
            f"those changes, delete {shm.name}", code="store_copied", path=path, wal=wal.name, shm=shm.name)
    log.error("Engram: %s is %s, while %s says it held %d changes not yet copied into %s: they are "
              "lost. If this folder was copied from a running bot, copy %s from there too and "
              "start again before anything new is recorded", wal.name, how, shm.name, lost, path.name,
              wal.name)


def lost_changes(path: Path) -> int:
    """How many changed pages the ``-shm`` index beside ``path`` says its ``-wal`` log holds beyond
    what it has (0: none lost, or no index SQLite would trust)."""
    shm, wal = Path(f"{path}-shm"), Path(f"{path}-wal")
    try:
        head = shm.read_bytes()[:100] if shm.is_file() else b""
    except OSError:
        return 0
    version = int.from_bytes(head[0:4], sys.byteorder) if len(head) >= 100 else 0
    if version != WAL_INDEX_VERSION or not head[12] or head[0:48] != head[48:96]:
        return 0  # no index, one never filled, or one SQLite itself would not trust (it rebuilds it)
    frames = int.from_bytes(head[16:20], sys.byteorder)
    copied = int.from_bytes(head[96:100], sys.byteorder)
    size = int.from_bytes(head[14:16], sys.byteorder)
    size = 65536 if size == 1 else size
    needed = 32 + frames * (24 + size) if frames else 0
    have = wal.stat().st_size if wal.is_file() else 0
    return frames - copied if frames > copied and have < needed else 0
