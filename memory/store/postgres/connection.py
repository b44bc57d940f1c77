"""The store's connections (``Link``: opened again after the server dropped one), rows in one call,
and the store's lock keys (advisory locks are per database: every Engram instance takes the same)."""

from __future__ import annotations

import logging
import struct
from collections.abc import Sequence
from typing import Any

import numpy as np
import psycopg
from psycopg.abc import Buffer
from psycopg.adapt import Loader
from psycopg.pq import Format

from ...errors import StoreError
from ..opening import shown

log = logging.getLogger("engram.store")
WRITING = 0x656E6772616D01  # held by the transaction that writes (one at a time across instances)
INT8_ARRAY = 1016  # the oid of bigint[]
TURNS = 0x656E6774  # the first half of a turn's two-part advisory lock key (``PostgresStore.turn``)
# held shared by every open store's reader for as long as it is open, and alone by a restore: a restore
# is refused while any instance has the database open, and an instance opening meanwhile waits for it
OPEN = 0x656E6772616D02
HOLD_OPEN = f"SELECT pg_advisory_lock_shared({OPEN})"


class IdArrayLoader(Loader):
    """A ``bigint[]`` in binary straight into a numpy array: a recall's postings are tens of thousands
    of ids, and a Python int made for each, then a list, cost more CPU than the server's read."""

    format = Format.BINARY

    def load(self, data: Buffer) -> np.ndarray:
        if not struct.unpack_from(">i", data)[0]:  # no dimensions: empty
            return np.zeros(0, np.int64)
        n = struct.unpack_from(">i", data, 12)[0]
        # after the header (dimensions, null flag, element type, size, lower bound): each element
        # as its length (always 8; a NULL would be -1, and ARRAY(SELECT id ...) has none) and value
        cells = np.frombuffer(data, np.dtype([("length", ">i4"), ("value", ">i8")]), n, 20)
        return cells["value"].astype(np.int64)


async def connect(url: str, *, read_only: bool = False) -> psycopg.AsyncConnection:
    """A connection in autocommit (a transaction is begun explicitly); ``read_only``: it refuses writes.
    A ``bigint[]`` read in binary (``rows(..., binary=True)``) comes back as a numpy array."""
    try:
        conn = await psycopg.AsyncConnection.connect(url, autocommit=True)
        conn.adapters.register_loader(INT8_ARRAY, IdArrayLoader)
        if read_only:
            await conn.execute("SET default_transaction_read_only = on")
        return conn
    except psycopg.Error as e:
        raise StoreError(f"cannot open {shown(url)}: {shown(str(e))}", code="store_cannot_open",
                         path=shown(url)) from e


class Link:
    """One connection of the store, opened again when the server dropped it (a restart, a network
    cut): the next read or transaction finds it broken and reconnects, instead of every later read
    failing until the plugin is reloaded."""

    def __init__(self, url: str, conn: psycopg.AsyncConnection, *, read_only: bool = False,
                 hold: str = "", reconnect: bool = True):
        self.url = url
        self.conn = conn
        self._read_only = read_only
        self._hold = hold  # a lock the connection holds, taken again on a new one
        self._reconnect = reconnect  # False: a snapshot's transaction, which a new connection would not be

    async def get(self) -> psycopg.AsyncConnection:
        if self.conn.closed or self.conn.broken:
            if not self._reconnect:
                raise StoreError(f"the connection to {shown(self.url)} was lost in the middle of a snapshot",
                                 code="store_unreachable", path=shown(self.url))
            log.warning("Engram: the connection to %s was lost; connecting again", shown(self.url))
            self.conn = await connect(self.url, read_only=self._read_only)
            if self._hold:
                await self.conn.execute(self._hold)  # type: ignore[arg-type]
        return self.conn

    async def rows(self, sql: str, args: Sequence[Any] | dict[str, Any] = (), *, binary: bool = False
                   ) -> list[Any]:
        """Every row of one read; a connection found broken is opened again and the read tried once more."""
        for attempt in (1, 2):
            conn = await self.get()
            try:
                cur = await conn.execute(sql, args, binary=binary)  # type: ignore[arg-type]
                return await cur.fetchall()
            except psycopg.OperationalError as e:
                if attempt == 2 or not (conn.closed or conn.broken):
                    raise StoreError(f"{shown(self.url)} could not be read: {shown(str(e))}",
                                     code="store_unreachable", path=shown(self.url)) from e
        raise AssertionError("unreachable")

    async def close(self) -> None:
        await self.conn.close()


async def rows(db: Link | psycopg.AsyncConnection, sql: str,
               args: Sequence[Any] | dict[str, Any] = (), *, binary: bool = False) -> list[Any]:
    """Every row of one query (``binary``: in PostgreSQL's binary form, a ``bigint[]`` as numpy)."""
    if isinstance(db, Link):
        return await db.rows(sql, args, binary=binary)
    cur = await db.execute(sql, args, binary=binary)  # type: ignore[arg-type]
    return await cur.fetchall()


async def value(db: Link | psycopg.AsyncConnection, sql: str, args: Sequence[Any] = ()) -> Any:
    """The first column of the first row (None when there is none)."""
    found = await rows(db, sql, args)
    return found[0][0] if found else None
