"""m018: a place's order kept by (space, seq) alone: the episodes' (space, id) index dropped, a place's
lines past an id found through (space, seq) (issue 33)."""

from __future__ import annotations

import aiosqlite

from .base import migration, run_script


@migration
async def m018_episode_place_order(db: aiosqlite.Connection) -> None:
    """In a place ids rise with sequence numbers (a line is appended with the next of both; a restore
    keeps a bundle's pairs and refuses one that would break the order), so the ``(space, id)`` index
    held the same order as the unique ``(space, seq)`` one. Its three readers (a place's backlog and
    lines past a cursor, a person's last lines there) now read ``(space, seq)``
    (``progress.PAST``). At a million episodes every batch of 64 lines dirtied ~50 of its leaf pages
    (a seventh of what its COMMIT wrote) and spent ~8 µs an episode inserting into it. SQL only."""
    await run_script(db, "DROP INDEX IF EXISTS episodes_space_id;")
