"""How SQLite rows map to the model: times as REAL seconds plus a zone in minutes, JSON text,
float32 vector blobs, ``IN (...)`` lists, many rows in one INSERT."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta, timezone
from functools import lru_cache
from typing import Any, TypeVar

import aiosqlite
import numpy as np

from ...model import Episode, Memory
from .. import quantise

T = TypeVar("T")


def dt(ts: float | None, tz_minutes: int = 0) -> datetime | None:
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, _zone(tz_minutes))


@lru_cache(maxsize=256)
def _zone(minutes: int) -> timezone:
    return timezone(timedelta(minutes=minutes))


def in_list(values: Iterable[Any]) -> tuple[str, list[Any]]:
    vals = list(values)
    return "(" + ",".join("?" * len(vals)) + ")", vals


async def fetch_rows(db: aiosqlite.Connection, sql: str, args: Sequence[Any] = ()) -> list[Any]:
    """Every row of one query in a single trip to the connection's thread (not three)."""
    return list(await db.execute_fetchall(sql, args))


def quick_rows(db: sqlite3.Connection, sql: str, args: Sequence[Any] = ()) -> list[Any]:
    """Rows of a quick indexed read on the event loop's own thread (the store's ``quick`` connection:
    recall's small reads run right there, since each trip to aiosqlite's thread costs a GIL hand-off,
    up to 5 ms on a busy machine, more than the read)."""
    return db.execute(sql, args).fetchall()


# Rows one multi-row INSERT takes: a few sizes only, so that SQLite's statement cache keeps every
# form (an insert into ``episodes`` compiles migration m011's triggers with it); ≤ 999 parameters.
ROW_PIECES = (64, 16, 4)


def insert_rows(db: sqlite3.Connection, sql: str, rows: Sequence[tuple[Any, ...]]) -> None:
    """``db.executemany(sql, rows)`` for an INSERT with one ``VALUES (?,...)`` group: the same rows
    in the same order, as multi-row statements of ``ROW_PIECES`` rows where they fit (the statement's
    set-up, its journal and its triggers' once for many rows: ~4 µs an episode less) and one row at a
    time for the rest."""
    if not rows:
        return
    columns = len(rows[0])
    group = "(" + ",".join("?" * columns) + ")"
    at = 0
    if sql.count(group) == 1:
        for size in ROW_PIECES:
            if size * columns > 999:  # SQLite before 3.32 takes at most 999 parameters
                continue
            many = sql.replace(group, ",".join([group] * size))
            while len(rows) - at >= size:
                db.execute(many, [v for row in rows[at:at + size] for v in row])
                at += size
    db.executemany(sql, rows[at:])


def chunks(ids: list[T], n: int = 500) -> Iterable[list[T]]:
    for i in range(0, len(ids), n):
        yield ids[i : i + n]


# The episodes table's columns in the order ``episode_row`` reads them (``shape``: see ``text.text_shape``).
EPISODE_COLUMNS = "id, time, tz, space, seq, section, source, actor, actor_name, kind, content, meta, shape"
# The memories table's columns in the order ``memory_row`` reads them.
MEMORY_COLUMNS = ("id, root, kind, text, scope, subjects, importance, strength, last_recalled, created_at,"
                  " valid_from, valid_to, status, supersedes")


def episode_row(r: Sequence[Any]) -> Episode:
    return Episode(id=r[0], time=dt(r[1], r[2]), place=r[3], seq=r[4], section=r[5], source=r[6],
                   actor=r[7], actor_name=r[8], kind=r[9], content=r[10],
                   meta={} if r[11] == "{}" else json.loads(r[11]))


def memory_row(r: Sequence[Any], sources: list[int]) -> Memory:
    return Memory(id=r[0], kind=r[2], text=r[3], scope=r[4],
                  subjects=() if r[5] == "[]" else tuple(json.loads(r[5])),
                  importance=r[6], strength=r[7], last_recalled=dt(r[8]), created_at=dt(r[9]),
                  valid_from=dt(r[10]), valid_to=dt(r[11]), status=r[12], supersedes=r[13],
                  sources=tuple(sources))


def vector_blob(vec: np.ndarray) -> bytes:
    """A vector as stored: float32, native byte order."""
    return np.asarray(vec).astype(np.float32).tobytes()


def vectors_of(blobs: Sequence[bytes]) -> np.ndarray:
    """Stored vectors back as one float32 matrix, a row each."""
    if not blobs:
        return np.zeros((0, 0), np.float32)
    return np.frombuffer(b"".join(blobs), np.float32).reshape(len(blobs), -1)


def compact_vector_blob(vec: np.ndarray) -> bytes:
    """A second vector as stored: its largest magnitude as float32, then ``store.quantise``'s int8s."""
    q, top = quantise(np.asarray(vec).reshape(1, -1))
    return top.tobytes() + q.tobytes()


def compact_vectors(blobs: Sequence[bytes]) -> np.ndarray:
    """``compact_vector_blob``s (of one length) back as one float32 matrix, a row each."""
    if not blobs:
        return np.zeros((0, 0), np.float32)
    raw = np.frombuffer(b"".join(blobs), np.uint8).reshape(len(blobs), -1)
    top = raw[:, :4].copy().view(np.float32).reshape(-1)
    return raw[:, 4:].view(np.int8).astype(np.float32) * (top / 127)[:, None]


def meta_names_image(meta: str) -> bool:
    """Whether an episode's meta (JSON) names an image."""
    return bool(json.loads(meta).get("image"))
