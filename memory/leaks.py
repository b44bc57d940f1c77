"""Whether a text meant for every chat (the self-image, the inner state) carries someone's private details.

Checked in code, not trusted to the model: a text leaks when it holds the name of anyone the bot
talked with (in any place), or a fact from a private place — a number of three digits or more, five
words in a row, or six Chinese characters in a row, as they were said there.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from .model import SELF, Episode

_NUMBER = re.compile(r"\d{3,}")
_WORD = re.compile(r"[a-z0-9']+")
_CJK_RUN = re.compile("[\u3400-\u9fff]{6,}")
EN_RUN, ZH_RUN = 5, 6


@dataclass
class PrivateDetails:
    """Names and private facts a shared text must not contain."""

    names: set[str] = field(default_factory=set)
    numbers: set[str] = field(default_factory=set)
    word_runs: set[tuple[str, ...]] = field(default_factory=set)
    cjk_runs: set[str] = field(default_factory=set)

    def add_name(self, name: str) -> None:
        name = " ".join(name.split()).lower()
        if len(name) >= 2 and not name.isdigit():
            self.names.add(name)

    def add_private_text(self, text: str) -> None:
        low = text.lower()
        self.numbers.update(_NUMBER.findall(low))
        words = _WORD.findall(low)
        self.word_runs.update(tuple(words[i:i + EN_RUN]) for i in range(len(words) - EN_RUN + 1))
        for run in _CJK_RUN.findall(text):
            self.cjk_runs.update(run[i:i + ZH_RUN] for i in range(len(run) - ZH_RUN + 1))


def private_details(episodes: Iterable[Episode], aliases: dict[str, list[str]],
                    is_public: Callable[[str], bool]) -> PrivateDetails:
    """The names of everyone in ``episodes`` (and their ``aliases``), and the facts said in private places."""
    out = PrivateDetails()
    for e in episodes:
        if e.actor != SELF:
            out.add_name(e.actor_name)
            for alias in aliases.get(e.actor, ()):
                out.add_name(alias)
        if not is_public(e.space):
            out.add_private_text(e.content)
    return out


def leaks(text: str, details: PrivateDetails) -> list[str]:
    """What of ``details`` the text contains (empty: nothing private)."""
    low = text.lower()
    found = [f"name {n!r}" for n in sorted(details.names) if _has_name(low, n)]
    found += [f"number {n!r}" for n in sorted(details.numbers) if n in _NUMBER.findall(low)]
    words = _WORD.findall(low)
    runs = {tuple(words[i:i + EN_RUN]) for i in range(len(words) - EN_RUN + 1)}
    found += [f"words {' '.join(r)!r}" for r in sorted(runs & details.word_runs)]
    found += [f"words {r!r}" for r in sorted(details.cjk_runs) if r in text]
    return found


def _has_name(low: str, name: str) -> bool:
    if re.search("[\u3400-\u9fff]", name):
        return name in low
    return re.search(rf"(?<![a-z0-9]){re.escape(name)}(?![a-z0-9])", low) is not None
