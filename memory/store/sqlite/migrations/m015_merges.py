"""m015: the episodes' keyword segments merged in the background, eight at a time (issue 33)."""

from __future__ import annotations

import aiosqlite

from .base import migration, run_script


@migration
async def m015_episode_keyword_merges(db: aiosqlite.Connection) -> None:
    """FTS5 writes each transaction's words as a new segment and merges a level's segments into one
    once it holds ``automerge`` of them (4 by default), a little inside each write that follows. At a
    million episodes recorded 64 at a time that merging was a third of the writer's time while a
    merge ran. From here the writes merge nothing (``automerge`` 0): a worker thread does it after
    each commit (``keyword_merges``), starting once a level holds eight segments (``usermerge`` 8:
    each row is rewritten about a third less often than at 4; a word's lookup reads at most seven
    segments a level instead of three, which the plugin's query at a million did not show). Memories
    are written rarely: their table keeps FTS5's defaults. Settings kept in the table's own config
    rows: SQL only."""
    await run_script(db, """
        INSERT INTO episodes_fts(episodes_fts, rank) VALUES ('automerge', 0);
        INSERT INTO episodes_fts(episodes_fts, rank) VALUES ('usermerge', 8);
        """)
