"""m017: a batch's speaker and talk-pair counts appended beside the totals and folded in later
(issue 33)."""

from __future__ import annotations

import aiosqlite

from .base import migration, run_script


@migration
async def m017_episode_counts_later(db: aiosqlite.Connection) -> None:
    """Two tables a batch of new episodes appends its speaker and talk-pair counts to
    (``summaries.BATCH_COUNTS``), where it upserted them into ``speaker_counts`` and ``talk_pairs``. At
    a million episodes a batch of 64 lines dirtied ~41 pages of the one and ~46 of the other (a
    quarter of what its COMMIT wrote); appended rows fill one or two. The totals are the two tables
    summed (``summaries.SPEAKER_TOTALS``, ``PAIR_TOTALS``); the rows are folded into the totals every
    ``summaries.FOLD_SPAN`` ids and before an erase, whose triggers count down the totals. SQL only."""
    await run_script(db, """
        CREATE TABLE speaker_counts_later (id INTEGER PRIMARY KEY, actor TEXT NOT NULL,
                                           n INTEGER NOT NULL);
        CREATE TABLE talk_pairs_later (id INTEGER PRIMARY KEY, a TEXT NOT NULL, b TEXT NOT NULL,
                                       n INTEGER NOT NULL);
        """)
