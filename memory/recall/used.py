"""Which injected notes a reply used: the share of a note's content words that the reply says again.

A reply that draws on a note restates some of its facts, so it repeats the note's content words
(Chinese words from ``text.word_set`` too, with their sub-words); one that only shares the topic
repeats one or two. The threshold was calibrated on hand-labelled replies in English and Chinese
(``bench/used.py``, bench/data/used-replies.json).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..text.words import word_set

SHARE = 0.2  # of the note's content words found in the reply
# words in common, whatever the share: one shared word ("train", "training") is a topic, not a use
AT_LEAST = 2


def overlap(reply: str, note: str) -> tuple[int, float]:
    """How many of the note's content words the reply holds, and their share of the note's."""
    said, words = word_set(reply), word_set(note)
    common = len(words & said)
    return common, common / len(words) if words else 0.0


def used(reply: str, notes: Sequence[str], share: float = SHARE, at_least: int = AT_LEAST) -> list[bool]:
    """For each note, whether the reply used it."""
    out = []
    for note in notes:
        common, part = overlap(reply, note)
        out.append(common >= at_least and part >= share)
    return out
