"""The block the model reads before a reply: recall, the hits worth a note, the lines the bot adds
about itself, the sense of time, all within the budget.

One path for the plugin's injection (``plugin.service``) and for recall explained, in the plugin and
from the command line (``dashboard``), so that the page shows what the model reads, character for
character. What only a running plugin knows stays with it: whether the abilities line goes in (it
lists AstrBot's tools) and the learned ranking's exploring.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, tzinfo

from .kernel import Kernel
from .model import Audience, Episode, Hit, now_utc
from .render import build_block, hit_names, notes, time_line
from .self.selfhood import Selfhood
from .worth import asks, worth_notes

QUERY_CHARS = 1200  # of the recall query: the latest message and the turns before it


def recall_query(prompt: str | None, turns: Sequence[str]) -> str:
    """The latest user message first, then the recent turns, newest first, capped."""
    parts = [(prompt or "").strip(), *reversed([t[:300] for t in turns])]
    return "\n".join(p for p in parts if p)[:QUERY_CHARS]


def pool_depth(k: int, seen: int) -> int:
    """How many hits to ask recall for, so that ``k`` remain after the ``seen`` lines the model already
    reads are left out (``already_in_context``)."""
    return min(200, 2 * k + min(seen, 40))


def already_in_context(hit: Hit, seen: Sequence[str]) -> bool:
    """An episode the model is already shown (the current message or a recent turn)."""
    if not isinstance(hit.item, Episode):
        return False
    text = " ".join(hit.item.content.split())
    return bool(text) and any(text in " ".join(s.split()) for s in seen)


@dataclass(frozen=True)
class Composed:
    """A block: the hits worth a note (in the block's order), those that fit, its text, and the
    next ones worth a note that were held back (what the learned ranking compares them with)."""

    hits: list[Hit] = field(default_factory=list)
    injected: list[Hit] = field(default_factory=list)
    text: str = ""
    held: list[Hit] = field(default_factory=list)


class Composer:
    """One bot's block: its self (the identity folder and the settings) and its zone."""

    def __init__(self, selfhood: Selfhood, tz: tzinfo | None = None):
        self.selfhood = selfhood
        self.tz = tz

    @property
    def budget(self) -> int:
        return self.selfhood.settings.inject_budget_tokens

    async def recall_worth(self, engram: Kernel, audience: Audience, query: str, k: int,
                           seen: Sequence[str] = (), *, include_archived: bool = False
                           ) -> tuple[list[Hit], list[Hit]]:
        """``recall``'s hits worth a note, and up to ``k`` more that came next (held back)."""
        hits = await engram.recall(query, audience, k=pool_depth(k, len(seen)),
                                   include_archived=include_archived)
        fresh = [h for h in hits if not already_in_context(h, seen)]
        chosen = worth_notes(fresh, k)
        taken = {h.key for h in chosen}
        return chosen, worth_notes([h for h in fresh if h.key not in taken], k)

    async def render(self, engram: Kernel, place: str, hits: Sequence[Hit], now: datetime, *,
                     before: datetime | None = None, audience: Audience | None = None,
                     person: tuple[str, str] = ("", ""), abilities: bool = False) -> tuple[str, list[int]]:
        """The block for ``hits`` in ``place`` and the indexes of the hits that fit.

        ``person``: (id, name) of who wrote the message being answered, for the sense of time;
        ``abilities``: whether the abilities line goes in (the plugin decides, see ``plugin.service``).
        """
        names = await hit_names(engram, place, hits)
        lines = notes(hits, names, now, self.tz)
        extras = self.selfhood.extras(now, owner_private=bool(audience and audience.owner_private),
                                      abilities=abilities)
        time = await self.time_line(engram, place, now, before or now, audience, person)
        return build_block(lines, time, self.selfhood.identity_line(), self.budget, extras,
                           {i for i, h in enumerate(hits) if asks(h)})

    async def time_line(self, engram: Kernel, place: str, now: datetime, before: datetime,
                        audience: Audience | None, person: tuple[str, str]) -> str:
        if not self.selfhood.settings.time_enabled:
            return ""
        last = await engram.last_episode_time(place, before=before)
        actor, name = person
        if not actor:
            return time_line(now, last, self.tz)
        # in a group, only this place's lines count (a person's private chat is not the group's business)
        private = audience is not None and (audience.owner_private or ":private:" in place)
        last_person = await engram.last_time_with(actor, before=before, place=None if private else place)
        return time_line(now, last, self.tz, last_person, name or "This person")

    async def explain(self, engram: Kernel, audience: Audience, query: str, *,
                      abilities: bool = False) -> Composed:
        """What the next message saying ``query`` in the audience's place would have injected (by the
        audience's first person, when given): a message that starts a conversation, so no earlier
        turns. Showing it changes nothing."""
        person = audience.people[0] if audience.people else ""
        names = await engram.people.names_in_place(audience.place, [person]) if person else {}
        name = names.get(person, "")
        now = now_utc()
        # the query as the injection makes it from a message saying ``query``, alone
        hits, held = await self.recall_worth(engram, audience, recall_query(query, []),
                                             self.selfhood.settings.recall_k, seen=[query])
        text, taken = await self.render(engram, audience.place, hits, now, audience=audience,
                                        person=(person, name), abilities=abilities)
        return Composed(hits, [hits[i] for i in taken], text, held)
