"""What one chat message carries: a ``/mem`` reply shows stored text on one line, without control
characters, cut to that size; and a reply of many lines is kept to it, saying where the rest is."""

from __future__ import annotations

from collections.abc import Sequence

from ...memory.render import quoted
from ...memory.text.display import cut, flat
from .catalogue import say

SHOWN_CHARS = 160
WHOLE_CHARS = 3_000  # of a text /mem show shows: a chat message carries little more (QQ about 4,500)
REPLY_CHARS = 3_000  # of any /mem reply (the lines that do not fit are counted and where they are said)
SOURCES_CHARS = 1_000  # of /mem show's source lines: the memory's own text keeps the rest of a reply
MIN_WHOLE = 500  # a shown text keeps at least this much, however long the lines around it


def short(text: str) -> str:
    return cut(flat(text), SHOWN_CHARS)


def shown_whole(text: str, key: str, lang: str = "en", limit: int = WHOLE_CHARS) -> str:
    """A stored text quoted as /mem show shows it: whole, or cut so that it and the note saying how
    long it is and where the whole text can be read take at most ``limit`` characters."""
    line = flat(text)
    if len(line) + 2 <= limit:
        return quoted(line)
    note = say(lang, "show_cut", n=f"{len(text):,}", key=key)
    return f"{quoted(cut(line, max(MIN_WHOLE, limit - len(note) - 3)))}\n{note}"


def fit_lines(lines: Sequence[str], lang: str, rest: str, keep: int = 1, limit: int = REPLY_CHARS) -> str:
    """``lines`` joined, or as many as fit in ``limit`` characters (the first ``keep`` always) and a
    last line saying how many more there are and ``rest``: where to see them."""
    text = "\n".join(lines)
    if len(text) <= limit:
        return text
    shown = list(lines[:keep])
    for i in range(keep, len(lines)):
        note = say(lang, "cut_reply", n=len(lines) - i, rest=rest)
        if len("\n".join([*shown, lines[i], note])) > limit:
            return "\n".join([*shown, note])
        shown.append(lines[i])
    return "\n".join(shown)  # pragma: no cover - the whole text was longer than the limit

