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
from .query import QUERY_TURNS, pool_depth, recall_query

__all__ = ["pool_depth", "recall_query"]  # the recall query's shape lives in query.py (no AstrBot import)


@dataclass
class Injection:
    """One injection: what was asked, what was recalled, what went in (for ``/mem why``)."""

    place: str
    query: str
    at: datetime
    hits: list[Hit] = field(default_factory=list)
    injected: list[Hit] = field(default_factory=list)
    text: str = ""

    @property
    def keys(self) -> list[str]:
        return [h.key for h in self.injected]


def message_text(message: Any) -> str:
    """The text of an OpenAI-format message (a string or a list of parts)."""
    content = message.get("content") if isinstance(message, dict) else getattr(message, "content", "")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def recent_turns(contexts: Sequence[Any], n: int = QUERY_TURNS) -> list[str]:
    """The last ``n`` user/assistant texts of the conversation, oldest first."""
    out = []
    for m in reversed(list(contexts or [])):
        role = m.get("role") if isinstance(m, dict) else getattr(m, "role", "")
        text = message_text(m).strip()
        if role in ("user", "assistant") and text:
            out.append(text)
            if len(out) == n:
                break
    return out[::-1]


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
