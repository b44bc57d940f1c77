"""Rows from a psycopg connection in one call, and the store's lock keys (advisory locks are per
database: every Engram instance on it takes the same ones)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg

WRITING = 0x656E6772616D01  # held by the transaction that writes (one at a time across instances)
TURNS = 0x656E6774  # the first half of a turn's two-part advisory lock key (``PostgresStore.turn``)


async def rows(db: psycopg.AsyncConnection, sql: str, args: Sequence[Any] | dict[str, Any] = ()) -> list[Any]:
    """Every row of one query."""
    cur = await db.execute(sql, args)  # type: ignore[arg-type]
    return await cur.fetchall()


async def value(db: psycopg.AsyncConnection, sql: str, args: Sequence[Any] = ()) -> Any:
    """The first column of the first row (None when there is none)."""
    found = await rows(db, sql, args)
    return found[0][0] if found else None
