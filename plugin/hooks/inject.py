"""Adding the memory block to an AstrBot model request: what one injection was, and the block placed
in the request (the block itself: ``memory.compose``; the query's words: ``query.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

try:
    from astrbot.core.agent.message import TextPart
except ImportError:  # AstrBot before temporary user parts: the block goes into the system prompt
    TextPart = None  # type: ignore[assignment,misc]

from ...memory import Hit


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


def apply(req: Any, text: str, mode: str) -> None:
    """Add the block to the request: a temporary user part (not saved) or the system prompt."""
    if mode == "system" or TextPart is None or not hasattr(req, "extra_user_content_parts"):
        req.system_prompt = f"{req.system_prompt or ''}\n\n{text}".strip()
    else:
        req.extra_user_content_parts.append(TextPart(text=text).mark_as_temp())
