"""The SQLite backend of the Store protocol: the only package that knows SQLite."""

from __future__ import annotations

from pathlib import Path

from .store import SQLiteStore


async def open_store(path: str | Path, *, durable: bool = False, read_only: bool = False,
                     checked: bool = True) -> SQLiteStore:
    """Open (or create) the store file at ``path``; ``read_only``: an existing store, no writer;
    ``checked``: the full check of a file not closed cleanly (``SQLiteStore.open``)."""
    return await SQLiteStore.open(path, durable=durable, read_only=read_only, checked=checked)
