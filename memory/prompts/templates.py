"""The consolidation prompt: templates from ``memory/prompts/``, filled with one batch of one place."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime, tzinfo
from functools import lru_cache
from pathlib import Path
from string import Template

from ..chat import Message
from ..model import SELF, Episode, Memory
from ..text.display import cut, flat, person

PROMPTS = Path(__file__).resolve().parent
LINE_CHARS = 600  # of one line shown to the model; a longer message is cut
_CJK = re.compile("[\u3400-\u9fff]")
_LETTER = re.compile(r"[^\W\d_]")
BOT_NAME = {"en": "you (the bot)", "zh": "你（机器人）"}
NOTHING = {"en": "(none)", "zh": "（无）"}


def language(texts: Sequence[str]) -> str:
    """``zh`` when Chinese characters make up a good share of the letters, else ``en``."""
    joined = "".join(texts)
    letters = len(_LETTER.findall(joined))
    return "zh" if letters and len(_CJK.findall(joined)) / letters > 0.2 else "en"


@lru_cache(maxsize=8)
def templates(name: str, lang: str) -> tuple[str, Template]:
    """The system text and the user template of ``prompts/<name>.<lang>.md``."""
    text = (PROMPTS / f"{name}.{lang}.md").read_text("utf-8")
    _, rest = text.split("## system\n", 1)
    system, user = rest.split("## user\n", 1)
    return system.strip(), Template(user.strip())


def _stamp(t: datetime | None, tz: tzinfo | None) -> str:
    return f"{t.astimezone(tz):%Y-%m-%d %H:%M}" if t else "?"


def one_line(text: str, limit: int = LINE_CHARS) -> str:
    """``text`` on one line without control characters (``display.flat``), cut at ``limit``."""
    return cut(flat(text), limit)


def speaker(ep: Episode, lang: str, shared: frozenset[str] = frozenset()) -> str:
    """Who said ``ep``: the bot, or the speaker's name on one line (one posing as the bot, the owner
    or the system shown as someone so named, ``display.person``), else their id; a name in
    ``shared`` (two speakers go by it) with the id after it."""
    if ep.actor == SELF:
        return BOT_NAME[lang]
    shown = name_or_id(ep.actor_name, ep.actor, lang) or "?"
    return f"{shown} ({flat(ep.actor)})" if ep.actor_name and shared_key(ep.actor_name) in shared else shown


def shared_key(name: str) -> str:
    return flat(name).casefold()


def shared_names(batch: Sequence[Episode]) -> frozenset[str]:
    """The names two or more speakers of ``batch`` go by (someone renamed to pass for another)."""
    who: dict[str, set[str]] = {}
    for e in batch:
        if e.actor != SELF and e.actor_name:
            who.setdefault(shared_key(e.actor_name), set()).add(e.actor)
    return frozenset(k for k, ids in who.items() if len(ids) > 1)


def name_or_id(name: str | None, pid: str, lang: str) -> str:
    """A person's name as shown (``display.person``), else their id on one line."""
    return (person(name, lang) if name else "") or flat(pid)


def episode_line(ep: Episode, lang: str, tz: tzinfo | None, shared: frozenset[str] = frozenset()) -> str:
    return f"e{ep.id} [{_stamp(ep.time, tz)}] {speaker(ep, lang, shared)}: {one_line(ep.content)}"


def memory_line(m: Memory, names: Mapping[str, str], tz: tzinfo | None, lang: str = "en") -> str:
    t = m.valid_from or m.created_at
    about = ", ".join(f"{name_or_id(names.get(s), s, lang)} ({flat(s)})" for s in m.subjects)
    head = f"m{m.id} [{m.kind}, {t.astimezone(tz):%Y-%m-%d}" if t else f"m{m.id} [{m.kind}"
    return f"{head}{'; about ' + about if about else ''}] {one_line(m.text)}"


def messages(place: str, batch: Sequence[Episode], related: Sequence[Memory], names: Mapping[str, str],
             now: datetime, tz: tzinfo | None = None) -> list[Message]:
    """The system and user messages asking the model about ``batch`` (language of the batch)."""
    lang = language([e.content for e in batch])
    system, user = templates("consolidate", lang)
    people = {SELF: BOT_NAME[lang]}
    shared = shared_names(batch)
    people.update((e.actor, name_or_id(e.actor_name or names.get(e.actor), e.actor, lang))
                  for e in batch if e.actor != SELF)
    people.update((s, name_or_id(names.get(s), s, lang))
                  for m in related for s in m.subjects if s not in people)
    filled = user.safe_substitute(
        place=flat(place), today=f"{now.astimezone(tz):%Y-%m-%d}",
        people="\n".join(f"{flat(p)} = {n or '?'}" for p, n in people.items() if flat(p)),
        memories="\n".join(memory_line(m, names, tz, lang) for m in related) or NOTHING[lang],
        lines="\n".join(episode_line(e, lang, tz, shared) for e in batch))
    return [{"role": "system", "content": system}, {"role": "user", "content": filled}]
