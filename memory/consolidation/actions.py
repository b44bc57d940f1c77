"""The model's answer: JSON actions parsed leniently, then checked one by one against the batch.

The contract (README, *Consolidation*): ``{"actions": [{"op": "add", "text", "kind", "about",
"importance", "scope", "sources", "when"}, {"op": "update", "id", "text", "sources"}, {"op":
"none"}]}``. An answer that holds no such object is malformed (the batch is retried); an action
that breaks the contract is refused and counted, the others still apply.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone, tzinfo
from typing import Any

from ..errors import EngramError
from ..prompts.answers import json_values

ADD_KINDS = ("fact", "preference", "event", "relation", "plan")
MAX_MEMORY_TEXT = 1000
MAX_ID = 2**63 - 1  # SQLite's largest integer: a bigger one cannot even be looked up
_KEY = re.compile(r"\s*([em])(\d{1,18})\s*", re.I)


class MalformedReply(EngramError, ValueError):
    """The answer holds no JSON object with an ``actions`` list (not JSON, truncated, empty)."""


class Refused(EngramError, ValueError):
    """One action breaks the contract; ``reason`` is the counter it is counted under."""

    def __init__(self, reason: str, detail: str):
        super().__init__(f"{reason}: {detail}")
        self.reason = reason


# refusal reasons, each counted in the job's stats
BAD_FIELD, UNKNOWN_OP, INVENTED_ID = "bad_field", "unknown_op", "invented_id"
FOREIGN_SOURCE, UNSEEN_MEMORY, WIDER_SCOPE = "foreign_source", "other_scope", "wider_scope"
UNFORESEEN = "unforeseen"  # an action that raised where no check expected it (a defect, logged whole)


@dataclass(frozen=True)
class Add:
    text: str
    kind: str
    about: tuple[str, ...]
    importance: float
    scope_hint: str | None
    sources: tuple[int, ...]
    when: datetime | None


@dataclass(frozen=True)
class Update:
    memory_id: int
    text: str
    sources: tuple[int, ...]
    about: tuple[str, ...] | None


def parse_reply(text: str) -> list[Any]:
    """The raw ``actions`` of an answer: plain JSON, JSON in a code fence, or JSON inside prose."""
    if not text or not text.strip():
        raise MalformedReply("the answer is empty")
    for obj in json_values(text, "{["):
        found = _actions_of(obj)
        if found is not None:
            return found
    raise MalformedReply(f"no JSON object with an actions list in the answer ({len(text)} characters)")


def _actions_of(obj: Any) -> list[Any] | None:
    if isinstance(obj, dict) and isinstance(obj.get("actions"), list):
        return list(obj["actions"])
    if isinstance(obj, list) and obj and all(isinstance(a, dict) and "op" in a for a in obj):
        return obj
    return None


def key_number(value: Any, prefix: str) -> int:
    """``"e12"`` / ``"m12"`` (or a bare number) -> 12; anything else is a bad field."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= MAX_ID:
        return value
    if isinstance(value, str):
        m = _KEY.fullmatch(value)
        if m and m.group(1).lower() == prefix:
            return int(m.group(2))
        if re.fullmatch(r"\s*[0-9]{1,18}\s*", value):  # not str.isdigit: int() refuses '²'
            return int(value.strip())
    raise Refused(BAD_FIELD, f"{value!r} is not a key like {prefix}12")


def _text(raw: dict[str, Any]) -> str:
    text = raw.get("text")
    if not isinstance(text, str) or not text.strip():
        raise Refused(BAD_FIELD, "text must be a non-empty string")
    return " ".join(text.split())[:MAX_MEMORY_TEXT]


def _sources(raw: dict[str, Any], batch: frozenset[int], required: bool) -> tuple[int, ...]:
    value = raw.get("sources")
    if value is None and not required:
        return ()
    if isinstance(value, str | int):
        value = [value]
    if not isinstance(value, list) or (required and not value):
        raise Refused(BAD_FIELD, "sources must be a list of episode keys like e12")
    ids = tuple(dict.fromkeys(key_number(v, "e") for v in value))
    outside = [i for i in ids if i not in batch]
    if outside:
        raise Refused(FOREIGN_SOURCE, f"e{outside[0]} is not one of this batch's lines")
    return ids


def _about(raw: dict[str, Any]) -> tuple[str, ...] | None:
    value = raw.get("about")
    if value is None:
        return None
    if isinstance(value, str):
        value = [value] if value.strip() else []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise Refused(BAD_FIELD, "about must be a list of person ids")
    return tuple(dict.fromkeys(v.strip() for v in value if v.strip()))


def _importance(raw: dict[str, Any]) -> float:
    value = raw.get("importance", 0.5)
    if value is None:
        return 0.5
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        raise Refused(BAD_FIELD, "importance must be a number from 0 to 1")
    return min(1.0, max(0.0, float(value)))


def _when(raw: dict[str, Any], tz: tzinfo | None = None) -> datetime | None:
    """The event's time: a date or time without a zone is in ``tz`` (the zone the model read the
    lines in; None: UTC), a bare date at its noon (inside that day whatever the zone and boundary)."""
    value = raw.get("when")
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise Refused(BAD_FIELD, "when must be an ISO date or null")
    try:
        when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        if when.tzinfo is None:
            bare_date = "T" not in value.upper() and ":" not in value
            when = (when.replace(hour=12) if bare_date else when).replace(tzinfo=tz or timezone.utc)
        # at the calendar's ends the UTC instant (what the store keeps) falls outside it: unreadable
        if not 1 < when.astimezone(timezone.utc).year < 9999:
            return None
    except (ValueError, OverflowError):
        return None  # a date the model wrote oddly (or out of range): the sources' time stands in
    return when


def check_action(raw: Any, batch: frozenset[int], tz: tzinfo | None = None) -> Add | Update | None:
    """One raw action as an Add, an Update or None (``none``); a broken one raises Refused (``tz``:
    the zone of a ``when`` that names none)."""
    if not isinstance(raw, dict):
        raise Refused(BAD_FIELD, "an action must be an object")
    op = raw.get("op")
    if op == "none":
        return None
    if op == "add":
        kind = raw.get("kind", "fact")
        if kind is not None and not isinstance(kind, str):
            raise Refused(BAD_FIELD, "kind must be a string")
        scope = raw.get("scope")
        if scope is not None and not isinstance(scope, str):
            raise Refused(BAD_FIELD, "scope must be a string or null")
        kind = (kind or "fact").strip().lower()
        return Add(_text(raw), kind if kind in ADD_KINDS else "fact", _about(raw) or (), _importance(raw),
                   scope, _sources(raw, batch, required=True), _when(raw, tz))
    if op == "update":
        return Update(key_number(raw.get("id"), "m"), _text(raw), _sources(raw, batch, required=False),
                      _about(raw))
    raise Refused(UNKNOWN_OP, f"unknown op {op!r}")
