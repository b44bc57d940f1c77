"""Checks on what callers hand the core: bad input gets a clear error before it reaches the store.

Each check returns the item as it will be stored: text capped at ``MAX_TEXT`` (and said so in the
log), lone surrogates replaced, times made timezone-aware, scopes normalised.
"""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any

from .errors import InvalidInputError
from .model import (
    EPISODE_KINDS,
    MEMORY_KINDS,
    MEMORY_STATUSES,
    PERSON_CHARS,
    PLACE_CHARS,
    STORED_NAME_CHARS,
    Audience,
    Episode,
    Memory,
    aware,
)
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
    meta = _check_episode_fields(ep)
    text, cut = cap(ep.content)
    if cut:
        log.warning("episode text of %d characters cut to %d", cut, MAX_TEXT)
        meta["truncated_from"] = cut
    name = ep.actor_name
    if len(name) > STORED_NAME_CHARS:  # a name only shows who spoke: cut, the line is kept
        log.warning("a speaker's name of %d characters cut to %d", len(name), STORED_NAME_CHARS)
        name = name[:STORED_NAME_CHARS]
    # built directly: dataclasses.replace costs ~3x more, on every recorded message
    return Episode(place=place_arg(ep.place, "an episode's place"), content=clean(text),
                   actor=person_arg(ep.actor, "an episode's actor", empty=True), actor_name=clean(name),
                   kind=ep.kind, time=aware(ep.time), source=ep.source, meta=meta, id=ep.id, seq=ep.seq,
                   section=ep.section, place_title=clean(ep.place_title))


def clean(s: str) -> str:
    """``s`` with lone surrogates (a broken emoji from a platform) replaced: SQLite cannot store them."""
    if not isinstance(s, str):
        raise InvalidInputError(f"expected text, got {type(s).__name__}")
    try:
        s.encode("utf-8")
        return s
    except UnicodeEncodeError:
        return s.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def cleaned(value: object) -> object:
    """``value`` (plain JSON: an episode's meta) with every string in it, keys too, ``clean``: a
    mention's name comes from the platform, which delivers broken emoji as readily as in the text."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, dict):
        return {cleaned(k) if isinstance(k, str) else k: cleaned(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [cleaned(v) for v in value]
    return value


def text_arg(value: object, what: str, limit: int | None = None, *, empty: bool = False) -> str:
    """``value`` as text a public function may take: a string (lone surrogates replaced, as they are
    when stored, so it matches what was stored), stripped, not blank unless ``empty``, at most
    ``limit`` characters; else ``InvalidInputError`` naming ``what``."""
    if not isinstance(value, str):
        raise InvalidInputError(f"{what} must be text, not {type(value).__name__}", code="arg_not_text",
                                what=what)
    s = clean(value).strip()
    if not s and not empty:
        raise InvalidInputError(f"{what} is empty", code="arg_empty", what=what)
    if limit is not None and len(s) > limit:
        raise InvalidInputError(f"{what} is longer than {limit} characters", code="arg_too_long", what=what,
                                limit=limit)
    return s


def place_arg(value: object, what: str = "a place id") -> str:
    """A place id (``PLACE_CHARS`` at most)."""
    return text_arg(value, what, PLACE_CHARS)


def person_arg(value: object, what: str = "a person id", *, empty: bool = False) -> str:
    """A person id (``PERSON_CHARS`` at most; ``empty``: "" names no one, as a line without a speaker)."""
    return text_arg(value, what, PERSON_CHARS, empty=empty)


def id_arg(value: object, what: str = "an id") -> int:
    """A memory's or an episode's id: a whole number (a bool is not one)."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise InvalidInputError(f"{what} must be a whole number, not {type(value).__name__}",
                                code="ids_not_numbers", what=what)
    return value


def ids_arg(values: object, what: str = "ids") -> list[int]:
    """A list of ids (``id_arg`` each)."""
    if isinstance(values, (str, bytes)) or not isinstance(values, (list, tuple, set, frozenset)):
        raise InvalidInputError(f"{what} must be a list of whole numbers", code="ids_not_numbers", what=what)
    return [id_arg(v, what) for v in values]


def audience_arg(audience: object) -> Audience:
    """An ``Audience`` with its place and people as they are stored (``place_arg``; "" is no place)."""
    if not isinstance(audience, Audience):
        raise InvalidInputError(f"expected an Audience, got {type(audience).__name__}", code="arg_audience")
    place = text_arg(audience.place, "the audience's place", PLACE_CHARS, empty=True)
    if not isinstance(audience.people, (tuple, list)):
        raise InvalidInputError("the audience's people must be a list of person ids", code="arg_audience")
    people = tuple(person_arg(p, "a person present") for p in audience.people)
    if (place, people) == (audience.place, audience.people):
        return audience
    return Audience(place=place, people=people, owner_private=bool(audience.owner_private),
                    everything=bool(audience.everything))


def _check_episode_fields(ep: Episode) -> dict:
    """Refuse what would fail inside the store: one bad episode must not sink its group commit. The
    meta as it will be stored (cleaned)."""
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
    if not ep.meta:
        return {}
    meta = cleaned(ep.meta)
    try:
        json.dumps(meta, ensure_ascii=False).encode("utf-8")
    except (TypeError, ValueError) as e:
        raise InvalidInputError(f"an episode's meta must be plain JSON: {e}") from None
    assert isinstance(meta, dict)
    return meta


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
                   subjects=tuple(person_arg(s, "a memory's subject") for s in m.subjects),
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


def setting_value(value: Any, default: Any, bounds: tuple[int, int] | None = None,
                  limit: int | None = None) -> Any:
    """A config value read as its default's kind: true or false, a whole number (within ``bounds``),
    or text (stripped; 1 to ``limit`` characters when given); else a ValueError saying what was
    expected. The plugin's config (``plugin/config.py``) and the dashboard's reading of the plugin's
    saved config (``self/selfhood.block_settings``) both read their values so."""
    if isinstance(default, bool):  # before int: bool is an int
        if not isinstance(value, bool):
            raise ValueError(f"expected true or false, got {value!r}")
        return value
    if isinstance(default, int):
        whole = isinstance(value, int) or isinstance(value, float) and value.is_integer()
        if isinstance(value, bool) or not whole:
            raise ValueError(f"expected a whole number, got {type(value).__name__} {value!r}")
        number = int(value)
        if bounds is not None and not bounds[0] <= number <= bounds[1]:
            raise ValueError(f"must be between {bounds[0]} and {bounds[1]}, got {number}")
        return number
    if not isinstance(value, str):
        raise ValueError(f"expected text, got {type(value).__name__} {value!r}")
    value = value.strip()
    if limit is not None and not 0 < len(value) <= limit:
        raise ValueError(f"expected 1 to {limit} characters, got {len(value)}")
    return value
