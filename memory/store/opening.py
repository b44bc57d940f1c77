"""Which backend a store's location names: a ``postgresql://`` URL, PostgreSQL (an optional extra,
imported only then); anything else, a SQLite file (the default)."""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import StoreError
from . import Store

URL_SCHEMES = ("postgresql://", "postgres://")
STORE_NAME = "engram.postgres"  # a database's ``path`` in its data folder (the erase list is named for it)


def is_database_url(where: object) -> bool:
    return isinstance(where, str) and where.startswith(URL_SCHEMES)


def store_path(where: str | Path, folder: str | Path | None = None) -> Path:
    """Where the store's files are named from: a SQLite file itself, or for a database the name
    ``STORE_NAME`` in its data folder (``folder``, default the working directory): its erase list
    and ``backups/`` are beside it."""
    if is_database_url(where):
        return Path(folder if folder is not None else Path.cwd()) / STORE_NAME
    return Path(where)


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
