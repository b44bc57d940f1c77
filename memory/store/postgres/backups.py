"""Backups of a PostgreSQL store as SQLite store files, and a restore of one into a database.

**A backup is a SQLite store.** The database is read as one moment (``PostgresStore.snapshot``: one
REPEATABLE READ transaction on a connection of its own, no lock: the instances record meanwhile) and
copied row by row into a new SQLite store file (``store/copying``, the code ``migrate-to`` runs the
other way). So a backup is the same file whichever backend made it: ``memory/backups.py`` checks,
names, keeps and erases in it as in a SQLite store's backups, and it can be restored into either
backend. Why not ``pg_dump``: its version must match the server's, it is not installed with the
driver, and its dump could not be opened, checked or erased by a forget the way a store file is.

**A restore is one transaction, with the database to itself.** The restoring store is opened
``alone``: refused while any other Engram instance (a bot, the MCP server, a dashboard, a command)
has the database open, and every one that opens meanwhile waits for it. Then, in one transaction,
every table but the migrations and the erase list is emptied and filled from the backup; the ids
given out before stay given out. A failure rolls it all back.
"""

from __future__ import annotations

from pathlib import Path

from .. import Store
from ..copying import Progress, copy_rows, copy_vectors
from ..sqlite import open_store as open_sqlite
from .store import PostgresStore
from .writes import PostgresWrites


async def snapshot_to_file(url: str, target: Path, progress: Progress | None = None) -> dict[str, int]:
    """The database at ``url`` as one moment, copied into a new SQLite store at ``target``."""
    async with PostgresStore.snapshot(url) as source:
        sink = await open_sqlite(target)
        try:
            async with sink.transaction() as tx:
                done = await copy_rows(source, tx, progress, vectors=False)
            async with sink.transaction() as tx:  # SQLite writes the rows at COMMIT: the vectors after
                done["vectors"] = await copy_vectors(source, tx)
            return done
        finally:
            await sink.close()


async def open_alone(url: str, folder: Path) -> PostgresStore:
    """The database opened for a restore: refused (``store_in_use``) while another store has it open."""
    return await PostgresStore.open(url, folder, alone=True)


async def replace_all(target: PostgresStore, source: Store) -> dict[str, int]:
    """Every row of ``target`` replaced by ``source``'s in one transaction; the highest ids given out
    before stay the floor of the next ones (an id names one line forever, the erase list relies on it)."""
    async with target.transaction() as tx:
        assert isinstance(tx, PostgresWrites)
        high_episode, high_memory = await tx.empty_for_restore()
        done = await copy_rows(source, tx)
        await tx.keep_ids_past(high_episode, high_memory)
    return done
