"""A person asks the bot itself to forget ("forget what I told you about my ex"): what they may have
erased of themselves, in one place, and nothing else (the model's ``memory_forget`` tool).

Their reach, in the place they ask from: their own lines there; the bot's reply right after one of
them (it answers that line and often repeats it); and the memories of that place about them or drawn
only from those lines (kept for the place, or public ones learned only from its lines). Never another
person's line, another place's, or a memory the owner keeps (scope owner or self). A memory drawn from
their line that also draws on someone else's words and is not about them is not theirs to erase: the
line it came from stays, and the answer says so (the owner can ``/mem forget`` it). A diary or
self-image that drew on what goes is rewritten from what is left, as after any forget
(``forgetting.execute``), and an identity proposal holding a piece of their words goes with them.

Erased at once, not hidden until the owner confirms: the words are the person's own and they asked;
a fact hidden for later would stay in the store (and its copies) while they are told it is gone, and
an owner who does not answer would keep it for ever. What could go wrong is the model choosing the
wrong lines: the tool reaches only this person's own words, takes only lines that share a word with
what they named, and says each one it removed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..errors import InvalidInputError
from ..kernel import Kernel
from ..model import Episode, Memory, possible_ids
from ..scopes import PUBLIC, place_scope
from .forgetting import DIARY, SELF_IMAGE, Forgetting, items_plan

REBUILT = (DIARY, SELF_IMAGE)  # drawn from everything: rewritten from what is left, not the person's to keep
MAX_ITEMS = 50  # lines and memories one request may name


@dataclass
class OwnForget:
    """What a person's own forget erases (``plan``), and their lines it leaves (``left``: a memory
    drawn from each also holds someone else's words)."""

    plan: Forgetting
    left: list[int] = field(default_factory=list)


async def own_plan(engram: Kernel, person: str, place: str, lines: Sequence[int],
                   memories: Sequence[int]) -> OwnForget:
    """What ``person`` may erase in ``place`` of the ``lines`` and ``memories`` named (others' ids are
    left out, as if not named); ``InvalidInputError`` without a person or a place, or past
    ``MAX_ITEMS``."""
    if not person.strip() or not place.strip():
        raise InvalidInputError("a person's own forget needs the person and the place", code="own_forget")
    if len(lines) + len(memories) > MAX_ITEMS:
        raise InvalidInputError(f"at most {MAX_ITEMS} lines and memories at a time", code="own_forget_many",
                                n=MAX_ITEMS)
    store = engram.store
    found = await store.get_episodes(possible_ids(list(lines)))
    own = {i for i, e in found.items() if _said_by(e, person, place)}
    named = await store.get_memories(possible_ids(list(memories)))
    versions = await store.get_memories(await store.all_versions(list(named)))
    sources = await store.get_episodes(sorted({s for m in versions.values() for s in m.sources}))
    theirs = {i for i, e in sources.items() if _said_by(e, person, place)}
    about: set[int] = set()
    for i in named:  # every version of it must be theirs (a memory moved here keeps its history)
        chain = [versions[v] for v in await store.all_versions([i]) if v in versions]
        if chain and all(_about(v, person, place, sources, theirs) for v in chain):
            about.add(i)  # and the lines it came from, theirs: else the fact comes back from them
            own |= {s for v in chain for s in v.sources if s in theirs}
    replies = await _answers(engram, place, [found.get(i) or sources[i] for i in own])
    left: set[int] = set()
    while True:
        going = own | replies
        plan = await items_plan(engram, going, about)
        drawn = await store.get_memories(plan.memories)
        wider = [m for m in drawn.values()
                 if m.kind not in REBUILT and not _drawn_ok(m, person, place, going)]
        if not wider:
            plan.episodes = sorted(set(plan.episodes))
            return OwnForget(plan, sorted(left))
        cited = {s for m in wider for s in m.sources} & going
        if not cited:  # a version of a named memory reaches wider (moved since): that memory stays
            about -= set(await store.all_versions([m.id for m in wider if m.id is not None]))
        left |= cited & own
        own -= cited
        replies -= cited


def _said_by(e: Episode, person: str, place: str) -> bool:
    return e.actor == person and e.place == place and e.kind != "message_out"


def _about(m: Memory, person: str, place: str, sources: dict[int, Episode], theirs: set[int]) -> bool:
    """Whether ``m`` is ``person``'s to erase in ``place``: kept for the place (or public and learned
    only from its lines), and about them or drawn only from their lines."""
    if m.kind in REBUILT:
        return False
    here = [s for s in m.sources if s in sources and sources[s].place == place]
    if m.scope == PUBLIC:
        placed = bool(m.sources) and len(here) == len(m.sources)
    else:
        placed = m.scope == place_scope(place)
    return placed and (person in m.subjects or (bool(m.sources) and set(m.sources) <= theirs))


def _drawn_ok(m: Memory, person: str, place: str, going: set[int]) -> bool:
    """Whether a memory drawn from the lines that go may go with them: of the place (or public), and
    about the person or drawn only from what goes."""
    placed = m.scope in (PUBLIC, place_scope(place))
    return placed and (person in m.subjects or set(m.sources) <= going)


async def _answers(engram: Kernel, place: str, lines: list[Episode]) -> set[int]:
    """The bot's reply right after each of ``lines`` (the next line of the place, when it is the bot's)."""
    out = set()
    for e in lines:
        if e.id is None:
            continue
        after = await engram.store.episodes_after(place, e.id, 1)
        if after and after[0].kind == "message_out" and after[0].id is not None:
            out.add(after[0].id)
    return out
