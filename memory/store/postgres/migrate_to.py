"""A store copied into an empty PostgreSQL database (``migrate-to``): every row as it is, in one
transaction (a failure leaves the database empty); the copying itself is ``store/copying``."""

from __future__ import annotations

from ...errors import StoreError
from .. import Store
from ..copying import Progress, copy_rows


async def migrate_to(source: Store, target: Store, progress: Progress | None = None) -> dict[str, int]:
    """Copy ``source`` (any backend) into ``target`` (empty); how many rows of each kind."""
    counts = await target.counts()
    if counts["episodes"] or counts["memories"] or counts["archived"] or counts["superseded"]:
        raise StoreError("the database to migrate to is not empty: Engram copies a store only into an empty "
                         "one",
                         code="migrate_not_empty")
    async with target.transaction() as tx:
        return await copy_rows(source, tx, progress)
