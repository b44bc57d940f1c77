"""m012: each place's title as its platform shows it (a group's name)."""

from __future__ import annotations

import aiosqlite

from .base import migration, run_script


@migration
async def m012_place_titles(db: aiosqlite.Connection) -> None:
    """The latest title each place went by (a QQ group's name), so the dashboard can name a place
    instead of showing its id; erased with the place (SQL only: older lines never kept one)."""
    await run_script(
        db,
        """
        CREATE TABLE place_titles (
            space TEXT PRIMARY KEY,
            title TEXT NOT NULL,
            seen REAL NOT NULL
        ) WITHOUT ROWID;
        """,
    )
