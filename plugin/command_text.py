"""How ``/mem`` replies show stored text: on one line, without control characters, cut to what a
chat message carries."""

from __future__ import annotations

from ..memory.display import cut, flat
from ..memory.render import quoted

SHOWN_CHARS = 160
WHOLE_CHARS = 3_000  # of a text /mem show shows: a chat message carries little more (QQ about 4,500)


def short(text: str) -> str:
    return cut(flat(text), SHOWN_CHARS)


def shown_whole(text: str, key: str) -> str:
    """A stored text quoted as /mem show shows it: whole, or its first ``WHOLE_CHARS`` characters
    and where the whole text can be read."""
    line = flat(text)
    if len(line) <= WHOLE_CHARS:
        return quoted(line)
    return (f"{quoted(cut(line, WHOLE_CHARS))}\n(cut: {len(text):,} characters in all; the whole text: the "
            f"dashboard or `python -m astrbot_plugin_engram.memory --db <engram.db> show {key}`)")
