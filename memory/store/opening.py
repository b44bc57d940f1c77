"""Which backend a store's location names: a ``postgresql://`` URL, PostgreSQL (an optional extra,
imported only then); anything else, a SQLite file (the default)."""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import StoreError
from . import Store

URL_SCHEMES = ("postgresql://", "postgres://")


def is_database_url(where: object) -> bool:
    return isinstance(where, str) and where.startswith(URL_SCHEMES)


def shown(where: str | Path) -> str:
    """A store's location as it may be logged and shown: a database URL without its password."""
    return re.sub(r"(://[^:/@]*):[^@]*@", r"\1:***@", str(where))


async def open_store(where: str | Path, *, folder: str | Path | None = None, durable: bool = False,
                     read_only: bool = False) -> Store:
    """Open (or create) the store at ``where``: a SQLite file, or a PostgreSQL database by URL
    (``folder``: the data folder beside it, for diaries and identity; default the working directory)."""
    if is_database_url(where):
        try:
            from .postgres import open_store as open_postgres
        except ImportError as e:
            raise StoreError("a postgresql:// store needs the psycopg driver, an optional extra: "
                             "pip install 'psycopg[binary]>=3.1,<4' (docs/postgres.md)",
                             code="store_needs_psycopg",
                             command="pip install 'psycopg[binary]>=3.1,<4'") from e
        return await open_postgres(str(where), folder, read_only=read_only)
    from .sqlite import open_store as open_sqlite
    return await open_sqlite(where, durable=durable, read_only=read_only)
