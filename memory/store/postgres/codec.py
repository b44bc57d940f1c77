"""How PostgreSQL rows map to the model: the same columns as the SQLite store's (times as seconds
plus a zone in minutes, JSON text, float32 vector bytes), so a store moves between them row for row
(``migrate_to``)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta, timezone
from functools import lru_cache
from typing import Any

import numpy as np

from ...model import Episode, Memory
from .. import quantise

# The episodes table's columns in the order ``episode_row`` reads them.
EPISODE_COLUMNS = "id, time, tz, space, seq, section, source, actor, actor_name, kind, content, meta, shape"
# The memories table's columns in the order ``memory_row`` reads them.
MEMORY_COLUMNS = ("id, root, kind, text, scope, subjects, importance, strength, last_recalled, created_at,"
                  " valid_from, valid_to, status, supersedes")


def dt(ts: float | None, tz_minutes: int = 0) -> datetime | None:
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, _zone(tz_minutes))


@lru_cache(maxsize=256)
def _zone(minutes: int) -> timezone:
    return timezone(timedelta(minutes=minutes))


# Arrays sent as PostgreSQL's text form, cast in the statement (``%s::bigint[]``): psycopg dumps a
# Python list element by element in Python, which cost more client CPU than the rest of a batch's
# write (and a recall's id lists); these joins run in C.
def id_array(values: Iterable[int]) -> str:
    """``values`` (ints, or numbers that are whole) as a ``bigint[]`` / ``int[]`` literal."""
    return "{" + ",".join(map(str, map(int, values))) + "}"


def float_array(values: Iterable[float | None]) -> str:
    """A ``float8[]`` literal: each number's shortest exact form (PostgreSQL reads it back exactly)."""
    return "{" + ",".join("NULL" if v is None else repr(float(v)) for v in values) + "}"


def text_array(values: Iterable[str | None]) -> str:
    """A ``text[]`` literal: each string quoted, its backslashes and double quotes escaped."""
    return "{" + ",".join("NULL" if v is None else '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
                          for v in values) + "}"


def chunks(ids: list[int], n: int = 5000) -> Iterable[list[int]]:
    for i in range(0, len(ids), n):
        yield ids[i : i + n]


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
    """A vector as stored: float32, native byte order (as the SQLite store keeps it)."""
    return np.asarray(vec).astype(np.float32).tobytes()


def vectors_of(blobs: Sequence[bytes]) -> np.ndarray:
    if not blobs:
        return np.zeros((0, 0), np.float32)
    return np.frombuffer(b"".join(blobs), np.float32).reshape(len(blobs), -1)


def compact_vector_blob(vec: np.ndarray) -> bytes:
    """A second vector as stored: its largest magnitude as float32, then ``store.quantise``'s int8s."""
    q, top = quantise(np.asarray(vec).reshape(1, -1))
    return top.tobytes() + q.tobytes()


def compact_vectors(blobs: Sequence[bytes]) -> np.ndarray:
    if not blobs:
        return np.zeros((0, 0), np.float32)
    raw = np.frombuffer(b"".join(blobs), np.uint8).reshape(len(blobs), -1)
    top = raw[:, :4].copy().view(np.float32).reshape(-1)
    return raw[:, 4:].view(np.int8).astype(np.float32) * (top / 127)[:, None]


def meta_names_image(meta: str) -> bool:
    return bool(json.loads(meta).get("image"))


def word_count(words: str) -> int:
    """How many words an index row holds (joined by single spaces): BM25's document length."""
    return words.count(" ") + 1 if words else 0


def distinct_words(words: str) -> list[str]:
    """Each word of an index row once (a posting says a row holds a word, not how often)."""
    return list(dict.fromkeys(words.split(" "))) if words else []
