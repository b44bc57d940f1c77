"""Whether a text meant for every chat (the self-image, the inner state) carries someone's private details.

Checked in code, not trusted to the model: a text leaks when it holds the name of anyone the bot
talked with (in any place) or anyone named in a private place — a name the store knows (anyone's
display name or alias, in any place) found in a private line, or one guessed there
(``person_names.py``: ``@``-mentions, English names, Chinese names) — or a fact from a private
place: a number of three digits or more, five words in a row, or six Chinese characters in a row,
as they were said there. The prompts of those texts name the private names to leave out
(``to_leave_out``), which spares refused drafts; the check after the answer stays the guard. A name
said in a private place is not private when a public place's lines or the ``known`` text (the core
identity, written by the owner) hold it too: the bot's own name, someone famous talked about in public.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..model import SELF, Episode
from ..text.person_names import (
    english_names,
    given_names,
    guess_names,
    lowercase_words,
    mentions,
    ordinary_word,
    written_in,
)
from ..text.words import holds_name

if TYPE_CHECKING:
    from ..store import Store

_NUMBER = re.compile(r"\d{3,}")
_WORD = re.compile(r"[a-z0-9']+")
_CJK_RUN = re.compile("[\u3400-\u9fff]{6,}")
EN_RUN, ZH_RUN = 5, 6
_LETTER = re.compile(r"[^\W\d_]")
_KIND_WORDS = {"name": ("name", "names"), "number": ("number", "numbers"),
               "words": ("run of words", "runs of words")}
SHOWN_NAMES, SHOWN_CHARS = 60, 40  # the names a prompt is told to leave out: at most so many, so long


@dataclass
class PrivateDetails:
    """Names and private facts a shared text must not contain.

    ``names`` (people who spoke, their aliases, ``@``-mentions) match in any case; ``mentioned``
    (names written in private lines) match as written, so "I will" is no "Will"; ``mentioned_words``
    (those that are ordinary words too) only capitalised in the middle of a sentence."""

    names: set[str] = field(default_factory=set)
    numbers: set[str] = field(default_factory=set)
    word_runs: set[tuple[str, ...]] = field(default_factory=set)
    cjk_runs: set[str] = field(default_factory=set)
    mentioned: set[str] = field(default_factory=set)
    mentioned_words: set[str] = field(default_factory=set)
    written_names: set[str] = field(default_factory=set)  # ``names`` as they were written
    given: set[str] = field(default_factory=set)  # their given names (张婷婷: 婷婷), for ``mentioned``

    def add_name(self, name: str) -> None:
        name = " ".join(name.split())
        if len(name) >= 2 and not name.isdigit():
            self.names.add(name.lower())
            self.written_names.add(name)
            self.given |= given_names(name)

    def to_leave_out(self) -> list[str]:
        """The private names, for a prompt to ask the model to leave out (the check stays the guard)."""
        seen: dict[str, str] = {}
        every = self.written_names | self.mentioned | self.mentioned_words
        for n in sorted(every, key=lambda n: (len(n), n)):
            seen.setdefault(n.lower(), n[:SHOWN_CHARS])
        return sorted(seen.values())[:SHOWN_NAMES]

    def add_private_text(self, text: str) -> None:
        low = text.lower()
        self.numbers.update(_NUMBER.findall(low))
        words = _WORD.findall(low)
        self.word_runs.update(tuple(words[i:i + EN_RUN]) for i in range(len(words) - EN_RUN + 1))
        for run in _CJK_RUN.findall(text):
            self.cjk_runs.update(run[i:i + ZH_RUN] for i in range(len(run) - ZH_RUN + 1))


NONE_TO_LEAVE_OUT = {"en": "(none)", "zh": "（无）"}


def names_to_leave_out(details: PrivateDetails, lang: str) -> str:
    """The private names for a prompt: a JSON list (quoted, so a name cannot pass for an instruction)."""
    names = details.to_leave_out()
    return json.dumps(names, ensure_ascii=False) if names else NONE_TO_LEAVE_OUT.get(lang, "(none)")


async def known_names(store: Store) -> list[str]:
    """Every name anyone went by in any place (display names, aliases), for ``private_details``."""
    return [alias for person, _, _ in await store.people() for alias in await store.aliases(person)]


def private_details(episodes: Iterable[Episode], aliases: dict[str, list[str]],
                    is_public: Callable[[str], bool], *, known: str = "",
                    names: Iterable[str] = ()) -> PrivateDetails:
    """The names of everyone in ``episodes`` (and their ``aliases``), and the names and facts said in
    private places: ``names`` the store knows (``known_names``) found in a private line, and the
    names guessed there; a name also in a public place's lines or in ``known`` is not private.

    It runs jieba's tagger on the private lines in a child process (about a second to start, and a
    millisecond a line): call it off the event loop."""
    out = PrivateDetails()
    private: set[str] = set()
    public: list[str] = [known]
    ordinary: set[str] = set()
    for e in episodes:
        ordinary |= lowercase_words(e.content)
        if e.actor != SELF:
            out.add_name(e.actor_name)
            for alias in aliases.get(e.actor, ()):
                out.add_name(alias)
        if is_public(e.place):
            public.append(e.content)
            continue
        out.add_private_text(e.content)
        private.add(e.content)
        for m in e.meta.get("mentions", ()) if isinstance(e.meta, dict) else ():
            if isinstance(m, dict) and m.get("id") not in (SELF, "all") and isinstance(m.get("name"), str):
                out.add_name(m["name"])
    texts = sorted(private)
    for text, guessed in zip(texts, guess_names(texts)):
        for name in mentions(text):
            out.add_name(name)
        out.mentioned.update(guessed)
    said_in_public = "\n".join(public)
    said, public_low = "\n".join(texts).lower(), said_in_public.lower()  # one look a known name
    for n in {n.strip() for n in names if len(n.strip()) >= 2 and _LETTER.search(n)}:
        low = n.lower()
        if low in said and holds_name(said, low) and not holds_name(public_low, low):
            if ordinary_word(n):  # "Will": as written, and only where it is a name (below)
                out.mentioned.add(n)
            else:  # "Bob", "婉婷": in any case, as a speaker's name is
                out.add_name(n)
    out.mentioned = {n for n in out.mentioned | out.given if not written_in(said_in_public, n)}
    out.mentioned_words = {n for n in out.mentioned if n.lower() in ordinary}
    out.mentioned -= out.mentioned_words
    return out


def kinds(found: list[str]) -> str:
    """What ``leaks`` found, by kind and count ("2 names, 1 number"): what a log may say of it, since
    the log (AstrBot's, shown in its WebUI) must not hold the private details themselves."""
    counts: dict[str, int] = {}
    for f in found:
        kind = f.split(" ", 1)[0]
        counts[kind] = counts.get(kind, 0) + 1
    return ", ".join(f"{n} {_KIND_WORDS[k][n > 1]}" for k, n in sorted(counts.items()))


def leaks(text: str, details: PrivateDetails) -> list[str]:
    """What of ``details`` the text contains (empty: nothing private)."""
    low = text.lower()
    found = [f"name {n!r}" for n in sorted(details.names) if holds_name(low, n)]
    mid_sentence = english_names(text) if details.mentioned_words else set()
    found += [f"name {n!r}" for n in sorted(details.mentioned | details.mentioned_words)
              if n.lower() not in details.names
              and (n in mid_sentence if n in details.mentioned_words else written_in(text, n))]
    found += [f"number {n!r}" for n in sorted(details.numbers) if n in _NUMBER.findall(low)]
    words = _WORD.findall(low)
    runs = {tuple(words[i:i + EN_RUN]) for i in range(len(words) - EN_RUN + 1)}
    found += [f"words {' '.join(r)!r}" for r in sorted(runs & details.word_runs)]
    found += [f"words {r!r}" for r in sorted(details.cjk_runs) if r in text]
    return found


