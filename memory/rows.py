"""How rows of the store map to the model, and to the words of the keyword index."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta, timezone
from functools import lru_cache
from typing import Any

import aiosqlite

from .model import Episode, Memory, aware
from .text import date_words, text_shape, words


def ts(t: datetime | None) -> float | None:
    return None if t is None else aware(t).timestamp()


def tz_minutes(t: datetime) -> int:
    off = aware(t).utcoffset()
    return int(off.total_seconds() // 60) if off else 0


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


def episode_words(ep: Episode, content_words: list[str] | None = None) -> str:
    """What the keyword index holds for an episode: its words, the speaker and the month/year."""
    own = words(ep.content) if content_words is None else content_words
    return " ".join(own + words(ep.actor_name) + date_words(aware(ep.time)))


def prepare(ep: Episode) -> tuple[str, int]:
    """What ``SQLiteStore.add_episodes`` stores beside an episode: its index words and text shape."""
    content_words = words(ep.content)
    return episode_words(ep, content_words), text_shape(ep.content, content_words)


# A private-use character: a token character for FTS5's unicode61 tokenizer (category Co) that no
# index word contains (words are runs of letters and digits), so "word<KEY_MARK><space key>" is one
# token and tells word and space apart unambiguously.
KEY_MARK = "\ue000"
_KEYED = re.compile(KEY_MARK + r"\d+")


def space_mark(key: int) -> str:
    """What each of a space's index tokens ends with: ``KEY_MARK`` and the space's key."""
    return f"{KEY_MARK}{key}"


def keyed_words(words: str, key: int) -> str:
    """``episode_words`` with each word tied to its space: the episode keyword index's tokens."""
    mark = space_mark(key)
    return words.replace(" ", mark + " ") + mark if words else ""


def unkeyed(words: str) -> str:
    """The plain words back from the index's tokens."""
    return _KEYED.sub("", words)


def memory_words(m: Memory) -> str:
    return " ".join(words(m.text))


async def fetch_rows(db: aiosqlite.Connection, sql: str, args: Sequence[Any] = ()) -> list[Any]:
    """Every row of one query in a single trip to the connection's thread (not three)."""
    return list(await db.execute_fetchall(sql, args))


def chunks(ids: list[int], n: int = 500) -> Iterable[list[int]]:
    for i in range(0, len(ids), n):
        yield ids[i : i + n]


# The episodes table's columns in the order ``episode_row`` reads them (``shape``: see ``text.text_shape``).
EPISODE_COLUMNS = "id, time, tz, space, seq, section, source, actor, actor_name, kind, content, meta, shape"
# Recall's memory rows (``SQLiteStore.candidate_memories``): the stored columns, as ``memory_row``
# reads them.
M_TEXT, M_SCOPE, M_IMPORTANCE, M_STRENGTH, M_RECALLED = 3, 4, 6, 7, 8
M_CREATED, M_VALID_FROM, M_STATUS = 9, 10, 12


def episode_row(r: Sequence[Any]) -> Episode:
    return Episode(id=r[0], time=dt(r[1], r[2]), space=r[3], seq=r[4], section=r[5], source=r[6],
                   actor=r[7], actor_name=r[8], kind=r[9], content=r[10],
                   meta={} if r[11] == "{}" else json.loads(r[11]))


def memory_row(r: Sequence[Any], sources: list[int]) -> Memory:
    return Memory(id=r[0], kind=r[2], text=r[3], scope=r[4],
                  subjects=() if r[5] == "[]" else tuple(json.loads(r[5])),
                  importance=r[6], strength=r[7], last_recalled=dt(r[8]), created_at=dt(r[9]),
                  valid_from=dt(r[10]), valid_to=dt(r[11]), status=r[12], supersedes=r[13],
                  sources=tuple(sources))
