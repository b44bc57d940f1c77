"""Adding the memory block to an AstrBot model request: the recall query from the conversation, hits
the model already sees left out, the block placed in the request (the block itself: ``memory.render``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

try:
    from astrbot.core.agent.message import TextPart
except ImportError:  # AstrBot before temporary user parts: the block goes into the system prompt
    TextPart = None  # type: ignore[assignment,misc]

from ...memory import Episode, Hit
from .query import people_turns, pool_depth, recall_query, said

# the recall query's shape and the people's words live in query.py (no AstrBot import)
__all__ = ["people_turns", "pool_depth", "recall_query", "said"]


@dataclass
class Injection:
    """One injection: what was asked, what was recalled, what went in (for ``/mem why``)."""

    place: str
    query: str
    at: datetime
    hits: list[Hit] = field(default_factory=list)
    injected: list[Hit] = field(default_factory=list)
    text: str = ""
    held: list[Hit] = field(default_factory=list)  # worth a note, next below the cut (the learned ranking)

    @property
    def keys(self) -> list[str]:
        return [h.key for h in self.injected]


def already_in_context(hit: Hit, seen: Sequence[str]) -> bool:
    """An episode the model is already shown (the current message or a recent turn)."""
    if not isinstance(hit.item, Episode):
        return False
    text = " ".join(hit.item.content.split())
    return bool(text) and any(text in " ".join(s.split()) for s in seen)


def apply(req: Any, text: str, mode: str) -> None:
    """Add the block to the request: a temporary user part (not saved) or the system prompt."""
    if mode == "system" or TextPart is None or not hasattr(req, "extra_user_content_parts"):
        req.system_prompt = f"{req.system_prompt or ''}\n\n{text}".strip()
    else:
        req.extra_user_content_parts.append(TextPart(text=text).mark_as_temp())
