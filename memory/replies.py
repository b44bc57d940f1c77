"""Reading a model's one-object JSON answer (diary, self-image, inner state) and checking its shape."""

from __future__ import annotations

import json
import re
from itertools import islice
from typing import Any

from .errors import EngramError

MAX_STARTS = 200  # braces tried as the start of the object: trying every one of a long answer takes seconds
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)


class WrongShape(EngramError, ValueError):
    """The model's answer is not the JSON object asked for; nothing was changed."""


def json_object(text: str, required: tuple[str, ...]) -> dict[str, Any]:
    """The first JSON object in ``text`` (plain, fenced or in prose) holding every key of ``required``."""
    if not text or not text.strip():
        raise WrongShape("the answer is empty")
    decoder = json.JSONDecoder()
    for candidate in (text, *_FENCE.findall(text)):
        for m in islice(re.finditer(r"\{", candidate), MAX_STARTS):  # each try may read to the end
            try:
                obj, _ = decoder.raw_decode(candidate, m.start())
            except (ValueError, RecursionError):
                continue
            if isinstance(obj, dict) and all(k in obj for k in required):
                return obj
    raise WrongShape(f"no JSON object with {', '.join(required)} in the answer ({len(text)} characters)")


def text_field(obj: dict[str, Any], key: str, limit: int) -> str:
    """``obj[key]`` as non-empty text of at most ``limit`` characters."""
    value = obj.get(key)
    if not isinstance(value, str) or not value.strip():
        raise WrongShape(f"{key!r} must be non-empty text, got {type(value).__name__}")
    value = value.strip()
    if len(value) > limit:
        raise WrongShape(f"{key!r} is {len(value)} characters, at most {limit}")
    return value


def number_field(obj: dict[str, Any], key: str, low: float, high: float) -> float:
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= float(value) <= high:
        raise WrongShape(f"{key!r} must be a number from {low} to {high}, got {value!r}")
    return float(value)
