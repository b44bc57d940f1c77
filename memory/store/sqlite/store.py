"""The SQLite store: one file per bot, WAL, one long-lived writer and read-only readers.

It implements ``memory.store.Store``; everything SQLite-specific (FTS5, pragmas, migrations, blob
layouts) stays in this package. Opened with ``read_only=True`` (the dashboard) it has no writer
at all: every connection is ``mode=ro`` and a write is refused.

``SQLiteStore`` opens and closes the file; what it does is in the parts it is composed of, one module
a concept (listed in its docstring).
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path

import aiosqlite

from ...errors import StoreError, StoreUnwritable
from . import clean_close, summaries
from .browse import Browse
from .damage import check_intact, check_log, find_damage, found_damage
from .days import Days
from .forgetting import Forgetting
from .items import Items
from .keywords import Keywords
from .log_copier import SAFETY_NET, LogCopier
from .metabolism import Metabolism
from .migrations import migrate
from .names import Names
from .opening import check_header, check_known_schema, check_migrated
from .postings_cache import PostingsCache
from .progress import Progress
from .ranking import RankingRows
from .transactions import Transactions, cannot_write, keep_log
from .vectors import Vectors
from .whole import Whole

log = logging.getLogger("engram.store")
SECTION_GAP = timedelta(hours=3)  # a silence this long in a place starts a new section


class SQLiteStore:
    """Episodes, memories, sources, vectors, cursors and keyword tables in one SQLite file.

    It opens the file's connections and hands each to the parts that use it, one concept a part:
    ``writing`` (the one door for writes), ``items``, ``keywords``, ``vectors``, ``progress``,
    ``days``, ``names``, ``browse``, ``metabolism``, ``forgetting`` and ``whole`` (the bundle's reads).
    Each read of the ``Store`` protocol is the method of the part that owns its concept (the table in
    ``__init__``)."""

    def __init__(self, path: Path, writer: aiosqlite.Connection | None, reader: aiosqlite.Connection,
                 quick: sqlite3.Connection):
        self.path = path
        self._writer = writer  # None when the store was opened read-only
        self._reader = reader  # mode=ro, on aiosqlite's thread
        self._quick = quick  # mode=ro, on the event loop's own thread (``codec.quick_rows``)
        latest = writer or reader  # background work reads what it just wrote on the writer
        # recent keyword doclists (``postings_cache``): read by ``keywords``, followed after each commit
        self._postings = postings = PostingsCache()
        self.writing = Transactions(path, writer, postings, LogCopier(path) if writer is not None else None,
                                    SECTION_GAP.total_seconds())
        self.items = Items(reader, quick)
        self.keywords = Keywords(reader, quick, postings)
        self.vectors = Vectors(reader, latest, quick)
        self.progress = Progress(reader, latest, self.writing)
        self.days = Days(latest)
        self.names = Names(reader, quick)
        self.browse = Browse(reader, quick, self.items)
        self.metabolism = Metabolism(reader, quick)
        self.forgetting = Forgetting(reader, quick)
        self.whole = Whole(reader)
        self.ranking = RankingRows(latest)

        # the one door for writes
        self.transaction = self.writing.transaction
        self.append_episodes = self.writing.append_episodes
        self.listen = self.writing.listen
        self.checkpoint = self.writing.checkpoint
        self.vacuum = self.writing.vacuum
        # RecallReads
        self.get_episodes = self.items.get_episodes
        self.get_memories = self.items.get_memories
        self.episode_index_words = self.items.episode_index_words
        self.memory_rank_rows = self.items.memory_rank_rows
        self.episode_columns = self.items.episode_columns
        self.last_episode_id = self.items.last_episode_id
        self.keyed_places = self.items.keyed_places
        self.place_key = self.items.place_key
        self.episode_postings = self.keywords.episode_postings
        self.memory_postings = self.keywords.memory_postings
        self.episode_keyword_rows = self.keywords.episode_keyword_rows
        self.memory_keyword_rows = self.keywords.memory_keyword_rows
        self.episode_keyword_page = self.keywords.episode_keyword_page
        self.vector_counts = self.vectors.vector_counts
        self.vectors_page = self.vectors.vectors_page
        self.vector_scale = self.vectors.vector_scale
        self.vector_codes_page = self.vectors.vector_codes_page
        self.query_vectors_page = self.vectors.query_vectors_page
        self.query_vectors = self.vectors.query_vectors
        # ProgressReads
        self.cursor = self.progress.cursor
        self.cursors = self.progress.cursors
        self.items_to_embed = self.vectors.items_to_embed
        self.episode_backlog = self.progress.episode_backlog
        self.episodes_after = self.progress.episodes_after
        # PeopleReads
        self.aliases = self.names.aliases
        self.people_named = self.names.people_named
        self.people_named_in = self.names.people_named_in
        self.people_mentioned_in = self.names.people_mentioned_in
        self.names_in_place = self.names.names_in_place
        # DayReads
        self.episodes_between = self.days.episodes_between
        self.memory_ids_of_kind = self.days.memory_ids_of_kind
        self.last_time_with = self.days.last_time_with
        self.last_episode_time = self.items.last_episode_time
        self.last_heard = self.items.last_heard
        # MetabolismReads
        self.strength_rows = self.metabolism.strength_rows
        self.strength_of = self.metabolism.strength_of
        self.scope_memories = self.metabolism.scope_memories
        self.memory_scopes = self.metabolism.memory_scopes
        self.memory_vectors = self.vectors.memory_vectors
        self.kept_apart = self.metabolism.kept_apart
        # ForgettingReads
        self.all_versions = self.forgetting.all_versions
        self.memories_citing = self.forgetting.memories_citing
        self.source_ids = self.forgetting.source_ids
        self.episodes_where = self.forgetting.episodes_where
        self.lines_of = self.forgetting.lines_of
        self.memories_mentioning = self.forgetting.memories_mentioning
        self.memories_where = self.forgetting.memories_where
        self.names_holding = self.forgetting.names_holding
        # BrowseReads (and keyed_places, people_named, job_runs above and below)
        self.list_memories = self.browse.list_memories
        self.versions = self.browse.versions
        self.place_episodes = self.browse.place_episodes
        self.episodes_around = self.browse.episodes_around
        self.memory_counts = self.browse.memory_counts
        self.episodes_per_day = self.browse.episodes_per_day
        self.count_episodes = self.browse.count_episodes
        self.count_place_episodes = self.browse.count_place_episodes
        self.has_place = self.browse.has_place
        self.places = self.browse.places
        self.place_titles = self.names.place_titles
        self.people = self.browse.people
        self.memories_about = self.browse.memories_about
        self.count_memories_about = self.browse.count_memories_about
        self.talks = self.browse.talks
        self.count_talks = self.browse.count_talks
        self.counts = self.browse.counts
        # BundleReads (and cursors, job_runs)
        self.episodes_page = self.whole.episodes_page
        self.memories_page = self.whole.memories_page
        self.alias_rows = self.whole.alias_rows
        self.place_name_rows = self.whole.place_name_rows
        self.place_title_rows = self.whole.place_title_rows
        self.place_names = self.whole.place_names
        self.kept_apart_pairs = self.whole.kept_apart_pairs
        # RankingState
        self.ranking_state = self.ranking.ranking_state
        self.recall_feedback = self.ranking.recall_feedback
        # JobRuns
        self.job_runs = self.progress.job_runs
        self.save_job_run = self.progress.save_job_run

    @property
    def read_only(self) -> bool:
        return self._writer is None

    @asynccontextmanager
    async def turn(self, name: str) -> AsyncIterator[bool]:
        """Always this instance's: a second process on the file is caught at commit (``Store.turn``)."""
        yield True

    @property
    def damage(self) -> str | None:
        """What the check in the background found (None: nothing): from then on only job runs are written."""
        return self.writing.damage

    @damage.setter
    def damage(self, said: str | None) -> None:
        self.writing.damage = said

    @property
    def _copier(self) -> LogCopier | None:
        """What copies the write-ahead log into the file in the background (None: read-only, or stopped)."""
        return self.writing.copier

    # ---- opening -------------------------------------------------------------------------
    @classmethod
    async def open(cls, path: str | Path, *, durable: bool = False, read_only: bool = False,
                   checked: bool = True) -> SQLiteStore:
        """Open (or create) the store at ``path``; a foreign or newer file is refused untouched.

        ``read_only``: open an existing, migrated store without a writer (``mode=ro`` only).
        ``checked=False``: no full check of a file not closed cleanly (a backup, checked when it was
        taken and checked again when it is restored: a forget erasing in each backup would otherwise
        read every page of every backup, half its time at 100k).
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
            if checked and not clean_close.trusted(path):  # closed cleanly, unchanged since: checked weekly
                await check_intact(writer, path)  # before anything is written to it
            await check_known_schema(writer, path)
            clean_close.opened(path)  # a stop without close() leaves no clean close behind
            # temp_store: a write that fires triggers (m011's counts) keeps its statement journal in
            # memory, not in a temporary file opened for each row (~25 us an episode)
            # a new file gives its freed pages back (``PRAGMA incremental_vacuum`` after an erase and
            # at each open); set before its first table, else it changes nothing (an older file
            # needs one VACUUM: ``python -m astrbot_plugin_engram.memory vacuum``, docs/durability.md)
            for pragma in ("auto_vacuum=INCREMENTAL", "journal_mode=WAL",
                           f"synchronous={'FULL' if durable else 'NORMAL'}", "foreign_keys=ON",
                           "busy_timeout=5000", "secure_delete=ON", "temp_store=MEMORY",
                           f"wal_autocheckpoint={SAFETY_NET}"):  # copied in the background (``log_copier``)
                # fetched to the end: a statement left mid-way (journal_mode and wal_checkpoint answer a
                # row) stays "in progress" while aiosqlite's thread holds its last result, and an
                # unfinished wal_checkpoint makes COMMIT fail (after a busy BEGIN it is held for good)
                await writer.execute_fetchall(f"PRAGMA {pragma}")
            await migrate(writer)
            await writer.execute_fetchall("PRAGMA incremental_vacuum")  # what a reindex freed, say
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
        if self.writing.copier is not None:
            await self.writing.copier.close()
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
                if self.writing.copier is not None:  # the log is no longer copied into the damaged file
                    await self.writing.copier.close()
                    self.writing.copier = None
            raise error
        return {"seconds": round(loop.time() - started)}

    # ---- the file itself -----------------------------------------------------------------
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
                async with self.writing.lock:
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
