"""The SQLite store: one file per bot, WAL, one long-lived writer and read-only readers.

It implements ``memory.store.Store``; everything SQLite-specific (FTS5, pragmas, migrations, blob
layouts) stays in this package. Opened with ``read_only=True`` (the dashboard) it has no writer
at all: every connection is ``mode=ro`` and a write is refused.

``SQLiteStore`` opens and closes the file; what it does is in the parts it is made of, one module a
concern (listed in ``base.py``).
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from datetime import timedelta
from pathlib import Path

import aiosqlite

from ...errors import StoreError, StoreUnwritable
from .. import Listener
from . import clean_close, summaries
from .browse import BrowseReads
from .damage import check_intact, check_log, find_damage, found_damage
from .days import DayReads
from .forgetting import ForgettingReads
from .items import ItemReads
from .keywords import KeywordReads
from .log_copier import SAFETY_NET, LogCopier
from .metabolism import MetabolismReads
from .migrations import migrate
from .names import NameReads
from .opening import check_header, check_known_schema, check_migrated
from .postings_cache import PostingsCache
from .progress import ProgressReads
from .transactions import Transactions, cannot_write, keep_log
from .vectors import VectorReads
from .writes import WriterView

log = logging.getLogger("engram.store")
SECTION_GAP = timedelta(hours=3)  # a silence this long in a place starts a new section


class SQLiteStore(Transactions, BrowseReads, ItemReads, KeywordReads, VectorReads, ProgressReads, DayReads,
                  NameReads, MetabolismReads, ForgettingReads):
    """Episodes, memories, sources, vectors, cursors and keyword tables in one SQLite file."""

    def __init__(self, path: Path, writer: aiosqlite.Connection | None, reader: aiosqlite.Connection,
                 quick: sqlite3.Connection):
        self.path = path
        self._writer = writer
        self._reader = reader
        self._quick = quick  # reads on the event loop's own thread (see ``base.Connections``)
        self._postings = PostingsCache()  # recent keyword doclists (``postings_cache``)
        self._copier = LogCopier(path) if writer is not None else None
        self._lock = asyncio.Lock()
        self._view = WriterView()
        self._listeners: list[Listener] = []
        self.section_gap = SECTION_GAP.total_seconds()
        self.damage: str | None = None  # what the check in the background found (writes then stop)

    @property
    def read_only(self) -> bool:
        return self._writer is None

    # ---- opening -------------------------------------------------------------------------
    @classmethod
    async def open(cls, path: str | Path, *, durable: bool = False, read_only: bool = False) -> SQLiteStore:
        """Open (or create) the store at ``path``; a foreign or newer file is refused untouched.

        ``read_only``: open an existing, migrated store without a writer (``mode=ro`` only).
        """
        path = Path(path)
        check_header(path)
        check_log(path, copied=clean_close.copied(path))
        if read_only:
            return await cls._open_read_only(path)
        try:
            writer = await aiosqlite.connect(path, isolation_level=None)
        except sqlite3.Error as e:
            raise StoreError(f"cannot open {path}: {e}", code="store_cannot_open", path=path) from e
        try:
            if not clean_close.trusted(path):  # closed cleanly and unchanged since: checked weekly
                await check_intact(writer, path)  # before anything is written to it
            await check_known_schema(writer, path)
            clean_close.opened(path)  # a stop without close() leaves no clean close behind
            # temp_store: a write that fires triggers (m011's counts) keeps its statement journal in
            # memory, not in a temporary file opened for each row (~25 us an episode)
            for pragma in ("journal_mode=WAL", f"synchronous={'FULL' if durable else 'NORMAL'}",
                           "foreign_keys=ON", "busy_timeout=5000", "secure_delete=ON", "temp_store=MEMORY",
                           f"wal_autocheckpoint={SAFETY_NET}"):  # copied in the background (``log_copier``)
                # fetched to the end: a statement left mid-way (journal_mode and wal_checkpoint answer a
                # row) stays "in progress" while aiosqlite's thread holds its last result, and an
                # unfinished wal_checkpoint makes COMMIT fail (after a busy BEGIN it is held for good)
                await writer.execute_fetchall(f"PRAGMA {pragma}")
            await migrate(writer)
            # a forget killed after its commit left the erased text in the log's older frames
            await writer.execute_fetchall("PRAGMA wal_checkpoint(TRUNCATE)")
            reader, quick = await _readers(path)
        except BaseException as e:
            await writer.close()
            if isinstance(e, sqlite3.Error) and cannot_write(e):  # a read-only folder, a full disk
                raise StoreUnwritable(
                    f"cannot open {path} for writing ({e}): is the folder {path.parent} read-only or its "
                    "disk full? Nothing was changed; it is opened again at the next message",
                    code="store_unwritable_open", path=path, folder=path.parent) from e
            raise
        return cls(path, writer, reader, quick)

    @classmethod
    async def _open_read_only(cls, path: Path) -> SQLiteStore:
        if not path.exists():  # noqa: ASYNC240 - one stat, before anything opens
            raise StoreError(f"no store at {path} to open read-only", code="store_missing", path=path)
        try:
            reader, quick = await _readers(path)
        except sqlite3.Error as e:
            raise StoreError(f"cannot open {path}: {e}", code="store_cannot_open", path=path) from e
        try:
            await check_known_schema(reader, path)
            await check_migrated(reader, path)
        except BaseException:
            quick.close()
            await reader.close()
            raise
        return cls(path, None, reader, quick)

    async def close(self) -> None:
        if self._copier is not None:
            await self._copier.close()
        self._quick.close()
        await self._reader.close()
        if self._writer is not None:
            if self.damage is not None:  # what was written since stays in the log, beside the file
                await keep_log(self._writer)
            await self._writer.close()
            clean_close.closed(self.path, clean=self.damage is None)

    async def check(self) -> dict[str, int]:
        """The full check of the file (``PRAGMA quick_check``; weekly, in the background) on a
        connection of its own: reads and writes go on meanwhile. Damage found is logged and raised
        (``damage.StoreDamaged``), and from then on nothing more is written to the file (see
        ``Transactions``): recall goes on from what can be read; the next open checks the file and
        refuses it."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        db = await aiosqlite.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True)  # noqa: ASYNC240
        try:
            where = await find_damage(db)
        finally:
            await db.close()
        if where:
            error = found_damage(self.path, where)
            log.error("Engram: %s", error)
            if self._writer is not None and self.damage is None:  # what each write refused says
                self.damage = (f"{self.path} is damaged (found by the check in the background): nothing "
                               "more is written to it; what was found and how to recover it are in the "
                               "log and in the check job's last run (/mem stats)")
                if self._copier is not None:  # the log is no longer copied into the damaged file
                    await self._copier.close()
                    self._copier = None
            raise error
        return {"seconds": round(loop.time() - started)}

    # ---- facts about the store -----------------------------------------------------------
    async def counts(self) -> dict[str, int]:
        out = {}
        for name, sql in (
            ("episodes", "SELECT count(*) FROM episodes"),
            ("memories", "SELECT count(*) FROM memories WHERE status = 'active'"),
            ("archived", "SELECT count(*) FROM memories WHERE status = 'archived'"),
            ("superseded", "SELECT count(*) FROM memories WHERE status = 'superseded'"),
            ("spaces", "SELECT count(*) FROM place_counts"),  # the places with an episode (m011)
            ("people", "SELECT count(DISTINCT person) FROM aliases"),
            ("vectors", "SELECT count(*) FROM (SELECT DISTINCT kind, item FROM vectors)"),  # items with one
        ):
            async with self._reader.execute(sql) as cur:
                out[name] = (await cur.fetchone())[0]  # type: ignore[index]
        return out

    async def integrity(self) -> list[str]:
        """Problems found by SQLite's integrity check, FTS5's own check and a count of the episodes
        against the counts kept beside them (empty when sound)."""
        problems = []
        async with self._reader.execute("PRAGMA integrity_check") as cur:
            problems += [r[0] for r in await cur.fetchall() if r[0] != "ok"]
        problems += await summaries.check(self._reader)
        if self._writer is None:  # FTS5's check is a write command
            return problems
        for t in ("episodes_fts", "memories_fts"):
            try:
                async with self._lock:
                    await self._writer.execute(f"INSERT INTO {t}({t}) VALUES ('integrity-check')")
            except sqlite3.DatabaseError as e:
                problems.append(f"{t}: {e}")
        return problems


async def _readers(path: Path) -> tuple[aiosqlite.Connection, sqlite3.Connection]:
    """A read-only aiosqlite connection and a plain one for reads on the event loop's thread."""
    # as_uri() escapes '#', '?' and '%', which would otherwise cut the file name short
    uri = f"{path.resolve().as_uri()}?mode=ro"  # noqa: ASYNC240 - once per open
    reader = await aiosqlite.connect(uri, uri=True, isolation_level=None)
    await reader.execute("PRAGMA busy_timeout=5000")
    quick = sqlite3.connect(uri, uri=True, isolation_level=None)
    quick.execute("PRAGMA busy_timeout=5000")
    return reader, quick
