"""Whole copies of a store file, for backups (``memory/backups.py``): SQLite's online backup API, and
the people and places a copy holds (the erase list is matched against them before a restore)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from ...errors import StoreError

STEP_PAGES = 256  # pages copied per step of the online backup (writers go on between steps)
_IDS = {"people": "SELECT person FROM aliases UNION SELECT person FROM place_names "
                  "UNION SELECT DISTINCT actor FROM episodes",
        "places": "SELECT name FROM spaces UNION SELECT DISTINCT space FROM episodes"}


def copy_store(source: Path, target: Path) -> None:
    """``source`` copied to ``target`` through the backup API, checked, flushed, then renamed."""
    part = target.with_name(target.name + ".part")
    part.unlink(missing_ok=True)
    try:
        src = sqlite3.connect(f"file:{source}?mode=ro", uri=True, timeout=30)
        try:
            dst = sqlite3.connect(part)
            try:
                src.backup(dst, pages=STEP_PAGES, sleep=0.005)
                dst.execute("PRAGMA journal_mode=DELETE")  # one file, no write-ahead log beside it
                (ok,) = dst.execute("PRAGMA quick_check").fetchone()
                if ok != "ok":
                    raise StoreError(f"the backup of {source} failed its check: {ok}", code="backup_damaged",
                                     path=source)
            finally:
                dst.close()
        finally:
            src.close()
        with open(part, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(part, target)
        sync_folder(target.parent)
    except sqlite3.Error as e:
        part.unlink(missing_ok=True)
        raise StoreError(f"the store {source} could not be backed up: {e}", code="backup_failed", path=source,
                         error=str(e)) from e
    except BaseException:
        part.unlink(missing_ok=True)
        raise


def sync_folder(folder: Path) -> None:
    """The folder's entries flushed to disk (a rename in it survives a power cut)."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def ids_in(path: Path, which: str) -> list[str]:
    """Every person id (``people``) or place id (``places``) the store file at ``path`` holds."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return [str(r[0]) for r in db.execute(_IDS[which])]
    finally:
        db.close()


def settle(path: Path, *, always: bool = False) -> None:
    """A backup made one file again: an erase in it stopped by a kill left its journal beside it (a
    hot rollback journal, or a write-ahead log), which a read-only open cannot apply ("attempt to
    write a readonly database"): opened for writing, SQLite finishes or undoes that erase; the file
    goes back to a rollback journal, and the files beside it (and the store's clean-close mark) are
    removed. ``always``: also when nothing is beside it (after an erase, to leave one file)."""
    beside = [path.with_name(path.name + s) for s in ("-wal", "-shm", "-journal", "-clean")]
    if not always and not any(p.exists() for p in beside):
        return
    try:
        db = sqlite3.connect(path)
        try:
            db.execute("PRAGMA journal_mode=DELETE").fetchall()
        finally:
            db.close()
    except sqlite3.Error as e:
        raise StoreError(f"{path} could not be made whole again: {e}", code="backup_unsettled", path=path,
                         error=str(e)) from e
    for side in beside:
        side.unlink(missing_ok=True)


def is_engram_store(path: Path) -> bool:
    """Whether the SQLite file at ``path`` holds Engram's tables (a backup to restore must)."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_migrations'"
                          ).fetchone() is not None
    finally:
        db.close()
