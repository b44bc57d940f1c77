"""Schema migrations: named functions, applied in order, each recorded by name in its own transaction.

A migration is frozen once released: whatever it computes, it computes with its own copy of the
code (below each one), so changing the live code later never changes what an old migration does.
The checks run before a file is touched (a foreign or newer file is refused) are in ``opening.py``.

This package is the runner (``migrate``); the migrations are in one module per group, each with its
frozen code: ``m001_m004_core``, ``m005_m010_tables``, ``m011_summaries``, ``m012_titles``,
``m013_learned``, ``m014_codes``, ``m015_merges``, ``m016_batch_counts``, ``m017_counts_later``,
``m018_place_order`` (``base``: the registry they add themselves to, in the order they are imported here).
"""

from __future__ import annotations

import logging
import sqlite3

import aiosqlite

from . import (  # noqa: F401  (each registers its own, in order)
    m001_m004_core,
    m005_m010_tables,
    m011_summaries,
    m012_titles,
    m013_learned,
    m014_codes,
    m015_merges,
    m016_batch_counts,
    m017_counts_later,
    m018_place_order,
)
from .base import APPEND_ONLY, MIGRATIONS, Migration, migration, run_script
from .m001_m004_core import (
    _m002_keyed_words,
    _m003_has_date,
    _m003_text_shape,
    _m004_text_shape,
    m001_core_tables,
    m002_keyword_index_per_space,
    m003_episode_shape,
    m004_empty_lines,
)
from .m005_m010_tables import (
    m005_job_runs,
    m006_latin_beside_chinese,
    m007_episode_time_indexes,
    m008_kept_apart,
    m009_unique_space_seq,
    m010_names_per_place,
)
from .m011_summaries import m011_episode_summaries
from .m012_titles import m012_place_titles
from .m013_learned import m013_ranking
from .m014_codes import m014_vector_codes
from .m015_merges import m015_episode_keyword_merges
from .m016_batch_counts import m016_episode_batch_counts
from .m017_counts_later import m017_episode_counts_later
from .m018_place_order import m018_episode_place_order

log = logging.getLogger("engram.store")

__all__ = ["APPEND_ONLY", "MIGRATIONS", "Migration", "_m002_keyed_words", "_m003_has_date",
           "_m003_text_shape", "_m004_text_shape", "m001_core_tables", "m002_keyword_index_per_space",
           "m003_episode_shape", "m004_empty_lines", "m005_job_runs", "m006_latin_beside_chinese",
           "m007_episode_time_indexes", "m008_kept_apart", "m009_unique_space_seq",
           "m010_names_per_place", "m011_episode_summaries", "m012_place_titles", "m013_ranking",
           "m014_vector_codes", "m015_episode_keyword_merges", "m016_episode_batch_counts",
           "m017_episode_counts_later", "m018_episode_place_order", "migrate", "migration", "run_script"]


async def migrate(db: aiosqlite.Connection) -> None:
    await db.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at REAL)")
    async with db.execute("SELECT name FROM _migrations") as cur:
        applied = {r[0] for r in await cur.fetchall()}
    done: list[str] = []
    fresh = not applied  # a new store: every migration runs, and one line says so
    for name, fn in MIGRATIONS:
        if name in applied:
            continue
        await db.execute("BEGIN IMMEDIATE")
        try:
            await fn(db)
            await db.execute("INSERT INTO _migrations VALUES (?, julianday('now'))", (name,))
            await db.execute("COMMIT")
        except BaseException:
            try:
                await db.execute("ROLLBACK")
            except sqlite3.Error as e:  # SQLite rolled back itself (a full disk): the first error stands
                log.debug("rollback of migration %s: %s", name, e)
            raise
        done.append(name)
        log.debug("applied migration %s", name)
    if done and fresh:
        log.info("created the store's tables (%d migrations, up to %s)", len(done), done[-1])
    elif done:  # an older store brought up to date: which ones ran, on one line
        log.info("applied %d migration%s: %s", len(done), "s" * (len(done) > 1), ", ".join(done))
