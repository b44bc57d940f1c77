"""The PostgreSQL backend of the Store protocol (psycopg 3, async): the only package that knows
PostgreSQL. An optional extra (``pip install 'psycopg[binary]'``, docs/postgres.md): imported only
when a store is opened at a ``postgresql://`` URL."""

from __future__ import annotations

from pathlib import Path

from .. import Store
from .store import PostgresStore

__all__ = ["PostgresStore", "open_store"]


async def open_store(url: str, folder: str | Path | None = None, *, read_only: bool = False) -> Store:
    store: Store = await PostgresStore.open(url, folder, read_only=read_only)  # checked against the protocol
    return store
