"""Reading a model's one-object JSON answer (diary, self-image, inner state) and checking its shape."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from itertools import islice
from typing import Any

from ..errors import EngramError
from ..validate import clean

MAX_STARTS = 200  # brackets tried as the start of JSON (``json_values``)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S | re.I)


class WrongShape(EngramError, ValueError):
    """The model's answer is not the JSON object asked for; nothing was changed."""


def json_values(text: str, brackets: str = "{") -> Iterator[Any]:
    """Every JSON value that starts at one of ``brackets`` in ``text`` or in one of its code fences,
    in order: plain JSON, fenced, or inside prose. Only the first ``MAX_STARTS`` brackets of each are
    tried: each try may read to the end, and every bracket of a long answer would take seconds."""
    decoder = json.JSONDecoder()
    starts = re.compile(f"[{re.escape(brackets)}]")
    for candidate in (text, *_FENCE.findall(text)):
        for m in islice(starts.finditer(candidate), MAX_STARTS):
            try:
                yield decoder.raw_decode(candidate, m.start())[0]
            except (ValueError, RecursionError):  # not JSON from here, or nested deeper than json reads
                continue


def json_object(text: str, required: tuple[str, ...]) -> dict[str, Any]:
    """The first JSON object in ``text`` (plain, fenced or in prose) holding every key of ``required``."""
    if not text or not text.strip():
        raise WrongShape("the answer is empty", code="answer_empty")
    for obj in json_values(text):
        if isinstance(obj, dict) and all(k in obj for k in required):
            return obj
    raise WrongShape(f"no JSON object with {', '.join(required)} in the answer ({len(text)} characters)",
                     code="answer_no_json", keys=", ".join(required), n=len(text))


def text_field(obj: dict[str, Any], key: str, limit: int) -> str:
    """``obj[key]`` as non-empty text of at most ``limit`` characters; a lone surrogate (JSON lets a model
    write ``"\\ud83d"``, half an emoji) replaced, as in every text the store keeps: the diary and the
    self-image are also written to files, which cannot hold one."""
    value = obj.get(key)
    if not isinstance(value, str) or not value.strip():
        raise WrongShape(f"{key!r} must be non-empty text, got {type(value).__name__}", code="field_not_text",
                         key=key)
    value = clean(value.strip())
    if len(value) > limit:
        raise WrongShape(f"{key!r} is {len(value)} characters, at most {limit}",
                         code="field_too_long", key=key, n=len(value), max=limit)
    return value


def number_field(obj: dict[str, Any], key: str, low: float, high: float) -> float:
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= float(value) <= high:
        raise WrongShape(f"{key!r} must be a number from {low} to {high}, got {_shown(value)}",
                         code="field_not_number", key=key, low=low, high=high)
    return float(value)


def _shown(value: Any) -> str:
    """A wrong value as an error (and the log) may show it: a number as it is, anything else by its type
    (the model's text may repeat what users said)."""
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return repr(value) if number else type(value).__name__
