"""m013: the ranking each bot learns from what its replies used (issue 32): its learned weights, and
the last recalls of each place with their candidates' features and what the reply used."""

from __future__ import annotations

import aiosqlite

from .base import migration, run_script


@migration
async def m013_ranking(db: aiosqlite.Connection) -> None:
    """``ranking``: named JSON states (the learner's weights and what judged them); ``recall_feedback``:
    one JSON row per recorded injection (note keys, features, used), a bounded number per place, erased
    with the place (numbers and ids only: no text)."""
    await run_script(
        db,
        """
        CREATE TABLE ranking (name TEXT PRIMARY KEY, state TEXT NOT NULL) WITHOUT ROWID;
        CREATE TABLE recall_feedback (id INTEGER PRIMARY KEY, space TEXT NOT NULL, record TEXT NOT NULL);
        CREATE INDEX recall_feedback_space ON recall_feedback(space, id);
        """,
    )
