"""Checks on what callers hand the core: bad input gets a clear error before it reaches the store.

Each check returns the item as it will be stored: text capped at ``MAX_TEXT`` (and said so in the
log), lone surrogates replaced, times made timezone-aware, scopes normalised.
"""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from datetime import datetime, timezone

from .errors import InvalidInputError
from .model import EPISODE_KINDS, MEMORY_KINDS, MEMORY_STATUSES, Episode, Memory, aware
from .scopes import parse_scope
from .text.words import MAX_TEXT, blank, cap

log = logging.getLogger("engram")


def checked_episode(ep: Episode) -> Episode:
    if not isinstance(ep, Episode):
        raise InvalidInputError(f"expected an Episode, got {type(ep).__name__}")
    if not isinstance(ep.place, str) or not ep.place.strip():
        raise InvalidInputError("an episode needs a space")
    if not isinstance(ep.content, str) or not ep.content.strip():
        raise InvalidInputError("an episode needs some text", code="no_text")
    _check_episode_fields(ep)
    text, cut = cap(ep.content)
    meta = dict(ep.meta)
    if cut:
        log.warning("episode text of %d characters cut to %d", cut, MAX_TEXT)
        meta["truncated_from"] = cut
    # built directly: dataclasses.replace costs ~3x more, on every recorded message
    return Episode(place=clean(ep.place.strip()), content=clean(text), actor=clean(ep.actor),
                   actor_name=clean(ep.actor_name), kind=ep.kind, time=aware(ep.time), source=ep.source,
                   meta=meta, id=ep.id, seq=ep.seq, section=ep.section, place_title=clean(ep.place_title))


def clean(s: str) -> str:
    """``s`` with lone surrogates (a broken emoji from a platform) replaced: SQLite cannot store them."""
    if not isinstance(s, str):
        raise InvalidInputError(f"expected text, got {type(s).__name__}")
    try:
        s.encode("utf-8")
        return s
    except UnicodeEncodeError:
        return s.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _check_episode_fields(ep: Episode) -> None:
    """Refuse what would fail inside the store: one bad episode must not sink its group commit."""
    for name in ("actor", "actor_name", "kind", "source", "place_title"):
        if not isinstance(getattr(ep, name), str):
            raise InvalidInputError(f"an episode's {name} must be a string")
    if ep.kind not in EPISODE_KINDS:
        raise InvalidInputError(f"unknown episode kind {ep.kind!r}: use one of {', '.join(EPISODE_KINDS)}")
    if ep.time is not None and not isinstance(ep.time, datetime):
        raise InvalidInputError("an episode's time must be a datetime")
    _check_time("an episode's time", ep.time)
    if not isinstance(ep.meta, dict):
        raise InvalidInputError("an episode's meta must be a dict")
    if ep.meta:
        try:
            json.dumps(ep.meta, ensure_ascii=False).encode("utf-8")
        except (TypeError, ValueError) as e:
            raise InvalidInputError(f"an episode's meta must be plain JSON: {e}") from None


def checked_memory(m: Memory) -> Memory:
    if not isinstance(m, Memory):
        raise InvalidInputError(f"expected a Memory, got {type(m).__name__}")
    if not isinstance(m.text, str) or blank(m.text):  # nothing visible: an empty-looking memory
        raise InvalidInputError("a memory needs some text", code="no_text")
    if m.status not in MEMORY_STATUSES:
        raise InvalidInputError(f"unknown memory status {m.status!r}: use {', '.join(MEMORY_STATUSES)}")
    if m.kind not in MEMORY_KINDS:
        raise InvalidInputError(f"unknown memory kind {m.kind!r}: use one of {', '.join(MEMORY_KINDS)}",
                                code="arg_kind", kind=repr(m.kind), kinds=", ".join(MEMORY_KINDS))
    if not 0.0 <= float(m.importance) <= 1.0:
        raise InvalidInputError("importance must be between 0 and 1", code="importance_range")
    for name in ("created_at", "valid_from", "valid_to", "last_recalled"):
        _check_time(f"a memory's {name}", getattr(m, name))
    text, cut = cap(m.text)
    if cut:
        log.warning("memory text of %d characters cut to %d", cut, MAX_TEXT)
    return replace(m, text=clean(text), scope=clean(parse_scope(m.scope)),
                   subjects=tuple(clean(s) for s in m.subjects),
                   sources=tuple(int(s) for s in m.sources), created_at=aware(m.created_at))


def _check_time(what: str, t: datetime | None) -> None:
    """Refuse a time the store could not read back: one whose UTC instant (what it keeps) falls off
    the calendar (``0001-01-01T00:00+14:00``), or near its ends (a day added would)."""
    if t is None:
        return
    if not isinstance(t, datetime):
        raise InvalidInputError(f"{what} must be a datetime")
    try:
        year = aware(t).astimezone(timezone.utc).year
    except (OverflowError, ValueError):
        year = 0
    if not 1 < year < 9999:
        raise InvalidInputError(f"{what} {t.isoformat()} is out of range (years 2 to 9998)",
                                code="time_range", time=t.isoformat())
