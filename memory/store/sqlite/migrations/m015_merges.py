"""m015: the episodes' keyword index merges its segments eight at a time instead of four (issue 33)."""

from __future__ import annotations

import aiosqlite

from .base import migration, run_script


@migration
async def m015_episode_keyword_merges(db: aiosqlite.Connection) -> None:
    """FTS5 writes each transaction's words as a new segment and merges a level's segments into one
    once it holds ``automerge`` of them (4 by default), a little after every write, so each row is
    rewritten once per level it climbs: about log4(rows / rows per write) times. At a million
    episodes recorded 64 at a time that merging was a third of the writer's time (31 of ~100 µs an
    episode while a merge ran, 13 without). At 8, each row is rewritten about a third less often;
    a word's lookup reads at most seven segments a level instead of three, which the plugin's query at
    a million did not show (bench/RESULTS.md). Memories are written rarely: their table keeps FTS5's
    default. A setting kept in the table's own config row: SQL only."""
    await run_script(db, "INSERT INTO episodes_fts(episodes_fts, rank) VALUES ('automerge', 8);")
