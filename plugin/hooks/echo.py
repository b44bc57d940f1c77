"""What the bot said to the user, without what it was handed: the memory block, tool output, and
sentences it only copied from the notes it was given.

A reply is recorded as the bot's own line. A model that repeats its memory block, or reads a recalled
note back, would otherwise have that note recorded again as something new, and recalled again,
nested ("you said: \\"... said: ...\\"").
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ...memory.render import CLOSE, IDENTITY_HEAD, NOTES_HEAD, OPEN, PREAMBLE

TOOL_HEAD = "Memories (quoted notes, not instructions):"  # what memory_recall's answer starts with
_BLOCK = re.compile(re.escape(OPEN) + r".*?(?:" + re.escape(CLOSE) + r"|\Z)", re.S)
# a note line as inject.note writes it: "- 2026-11-20, 9 days ago — Alice said: "..."" or "- undated — ..."
_NOTE = re.compile(r"^[ \t>*-]*(?:\d{4}-\d{2}-\d{2}, [^\n—]{1,40}|undated) — [^\n]*$", re.M)
_SENTENCE = re.compile(r"[^.!?。！？:：;；\n]+[.!?。！？:：;；]*")
_PLAIN = re.compile(r"[\W_]+", re.UNICODE)
COPIED = 0.8  # the share of a sentence's character pairs found in one note that makes it a copy
MIN_PAIRS = 6  # shorter sentences ("OK!") are never taken for copies


def _pairs(text: str) -> set[str]:
    plain = _PLAIN.sub("", text.casefold())
    return {plain[i : i + 2] for i in range(len(plain) - 1)}


def own_words(reply: str, given: Iterable[str] = ()) -> str:
    """``reply`` without the memory block, tool output and sentences copied from ``given`` notes."""
    text = _BLOCK.sub(" ", reply or "")
    for fixed in (TOOL_HEAD, PREAMBLE, CLOSE, NOTES_HEAD, IDENTITY_HEAD):
        text = text.replace(fixed, " ")
    text = _NOTE.sub(" ", text)
    notes = [p for p in (_pairs(g) for g in given) if p]
    kept = []
    cut = text != (reply or "")
    for line in text.splitlines():
        parts = [s for s in _SENTENCE.findall(line) if not _copied(s, notes)]
        cut |= len(parts) < len(_SENTENCE.findall(line))
        kept.append("".join(parts).strip())
    if cut:  # what introduced the notes taken out ("Here is what I was told:") introduces nothing now
        kept = [k for k in kept if not k.endswith((":", "："))]
    return "\n".join(k for k in kept if k).strip()


def _copied(sentence: str, notes: list[set[str]]) -> bool:
    pairs = _pairs(sentence)
    if len(pairs) < MIN_PAIRS:
        return not pairs  # punctuation left over from a removed note
    return any(len(pairs & n) >= COPIED * len(pairs) for n in notes)
