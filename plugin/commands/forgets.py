"""The hard forgets: ``/mem forget <id>`` at once, and the wide ones, ``/mem forget-person`` and
``/mem forget-place``, which say what they would erase and wait for ``/mem confirm`` with a code given in
the same chat (``confirmations``).

What a forget is said to erase is counted as the chat that asked may count it: outside the owner's
private chat only the lines, memories and identity proposals that chat may see, and always (so the
answer tells nothing) that what other chats hold is not counted there. The forget itself reaches what
it says.
"""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import replace
from functools import partial

from ...memory import Audience, Engram, Forgetting, UnknownIdError
from ..replies.catalogue import and_list, counted, say
from ..replies.fit import short
from .args import Refused, UsageError, parse_key
from .confirmations import ConfirmError, chat_of
from .context import CommandContext
from .exports import exports_note

FORGET_PERSON, FORGET_PLACE = "forget-person", "forget-place"


async def forget(ctx: CommandContext, args: str) -> str:
    """``/mem forget m12``: the memory with every version, the lines it came from and what else was
    drawn from them (a fact recalled from its source line is not forgotten), the reply naming each;
    ``--keep-lines``: the memory alone, the reply naming the lines left. ``e3``: the line and what was
    drawn from it. ``--with-sources`` (the old way to ask for the lines) is the default now."""
    parts = args.split()
    keep_lines = "--keep-lines" in parts
    rest = [p for p in parts if p not in ("--with-sources", "--keep-lines")]
    if len(rest) != 1 or (keep_lines and "--with-sources" in parts):
        raise UsageError("")
    kind, key = parse_key(rest[0])
    if kind == "e":
        ep = await ctx.reachable_episode(key)
        mem = await ctx.service.memory()
        async with ctx.forget_turn():  # after a diary job writing now; the diary it rewrites, in one turn
            # what was drawn from the line, counted as this chat may see it (read before it goes)
            seen = await seen_part(ctx, await mem.forget_episodes([key], dry_run=True))
            gone = await mem.forget_episodes([key])
        ctx.service.forget_injections(f"e{key}")
        return ctx.say("forgot_episode", id=key, place=ep.place, summary=erased_here(ctx, seen, gone)) \
            + exports_note(ctx, ctx.service.data_dir)
    m = await ctx.reachable(key)
    assert m.id is not None
    mem = await ctx.service.memory()
    with_sources = not keep_lines
    if with_sources and not ctx.audience.owner_private:
        # a forget here reaches no other chat: lines said elsewhere (and what was drawn from them) go
        # only from the owner's private chat
        plan = await mem.forget([m.id], with_sources=True, dry_run=True)
        lines = await mem.episodes(plan.episodes)
        if any(not ctx.sees_episode(e.place) for e in lines.values()):
            raise Refused("forget_elsewhere", id=m.id)
    async with ctx.forget_turn():  # the forget and the diary it rewrites, in one turn
        seen = await seen_part(ctx, await mem.forget([m.id], with_sources=with_sources, dry_run=True))
        done = await mem.forget([m.id], with_sources=with_sources)
    if done.episodes:
        return ctx.say("forgot_sources", id=m.id, summary=erased_here(ctx, seen, done),
                       keys=keys_of(seen or done)) + exports_note(ctx, ctx.service.data_dir)
    versions, k = counted(ctx.lang, "n_version", len(done.memories)), len((seen or done).proposals)
    said = ctx.say("forgot_memory_drawn" if k else "forgot_memory", id=m.id, versions=versions,
                   proposals=counted(ctx.lang, "n_proposal", k))
    kept = await mem.episodes(list(m.sources))  # --keep-lines: the lines that stay, as this chat sees them
    left = [i for i in m.sources if i in kept and ctx.sees_episode(kept[i].place)]
    return said + (ctx.say("lines_kept", keys=short(", ".join(f"e{i}" for i in left))) if left else "") \
        + exports_note(ctx, ctx.service.data_dir)


def keys_of(plan: Forgetting) -> str:
    """What a forget erased, by key (``e15, m4, m5``), cut to a reply's length."""
    return short(", ".join([*(f"e{i}" for i in plan.episodes), *(f"m{i}" for i in plan.memories)]))


async def _person(mem: Engram, who: str, audience: Audience) -> str:
    """The person id ``who`` names: an id as given, or the one person who went by that name.

    Outside the owner's private chat only someone who spoke in this place is found (by the name they
    went by here): a group learns no name, id or count of a person it has not seen. In the owner's
    private chat a name nobody went by is someone only talked about: the name itself is the target
    (the lines and memories that name them).
    """
    if audience.owner_private:
        people = [who] if ":" in who else await mem.people_named(who) or [who]
    elif ":" in who:
        seen = await mem.last_time_with(who, place=audience.place) is not None
        people = [who] if seen else []
    else:
        people = await mem.people_named_in(audience.place, who)
    if not people:
        raise Refused("no_person" if audience.owner_private else "no_person_here", who=repr(short(who)))
    if len(people) > 1:
        raise Refused("several_people", who=repr(short(who)), ids=short(", ".join(people)))
    return people[0]


async def _plan(forget: Awaitable[Forgetting], nothing: str, **values: object) -> Forgetting:
    """What a wide forget erases (would erase); ``Refused(nothing)`` when nothing of it is remembered."""
    try:
        return await forget
    except UnknownIdError:
        raise Refused(nothing, **values) from None


def _ask(ctx: CommandContext, action: str, target: str, summary: str) -> str:
    code = ctx.service.confirmations.ask(chat_of(ctx.event), str(ctx.event.get_sender_id()), action,
                                         target, summary)
    minutes = round(ctx.service.confirmations.seconds / 60)
    return ctx.say("ask_confirm", what=summary, code=code, minutes=minutes)


async def forget_person(ctx: CommandContext, args: str) -> str:
    if not args.strip():
        raise UsageError("")
    mem = await ctx.service.memory()
    person = await _person(mem, args.strip(), ctx.audience)
    plan = await _plan(mem.forget_person(person, dry_run=True), "nothing_of_person",
                       person=repr(short(person)))
    summary = erased_here(ctx, await seen_part(ctx, plan), plan)
    return _ask(ctx, FORGET_PERSON, person, ctx.say("erase_person", person=short(person), summary=summary))


async def forget_place(ctx: CommandContext, args: str) -> str:
    place = args.strip() or ctx.audience.place
    if place != ctx.audience.place and not ctx.audience.owner_private:
        raise Refused("no_place_here", place=repr(short(place)))
    plan = await _plan((await ctx.service.memory()).forget_place(place, dry_run=True), "nothing_of_place",
                       place=repr(short(place)))
    summary = erased_here(ctx, await seen_part(ctx, plan), plan)
    return _ask(ctx, FORGET_PLACE, place, ctx.say("erase_place", place=short(place), summary=summary))


async def confirm(ctx: CommandContext, args: str) -> str:
    if not args.strip():
        raise UsageError("")
    await ctx.service.flush()  # messages kept while the store could not take them go in first, so
    if kept := ctx.service.recording.pending:  # the forget reaches them; else it waits (code kept)
        return ctx.say("confirm_kept", n=kept)
    try:
        pending = ctx.service.confirmations.take(args, chat_of(ctx.event), str(ctx.event.get_sender_id()))
    except ConfirmError as e:
        return ctx.say("confirm_failed", error=e.text(ctx.lang))
    mem = await ctx.service.memory()
    async with ctx.forget_turn():  # after a diary or self-image job writing now (told so); the
        if pending.action == FORGET_PERSON:  # diary and self-image it rewrites in the same turn
            forget, nothing = partial(mem.forget_person, pending.target), "nothing_of_person"
            what = {"person": repr(short(pending.target))}
        else:
            forget, nothing = partial(mem.forget_place, pending.target), "nothing_of_place"
            what = {"place": repr(short(pending.target))}
        # counted as this chat may see it, read before it goes (after, the erased lines tell no place)
        seen = await seen_part(ctx, await _plan(forget(dry_run=True), nothing, **what))
        done = await _plan(forget(), nothing, **what)
    return ctx.say("forgot_target", target=short(pending.target), summary=erased_here(ctx, seen, done)) \
        + exports_note(ctx, ctx.service.data_dir)


async def seen_part(ctx: CommandContext, plan: Forgetting) -> Forgetting | None:
    """The part of a forget's ``plan`` ``ctx``'s chat may count (None in the owner's private chat,
    which counts all). Read before the forget runs: after it, the erased lines tell no place."""
    if ctx.audience.owner_private:
        return None
    mem = await ctx.service.memory()
    lines, kept = await mem.episodes(plan.episodes), await mem.memories(plan.memories)
    places = {p.id: p.place for p in ctx.service.selfhood.proposals.all()}
    return replace(plan,
                   episodes=[i for i in plan.episodes if i in lines and ctx.sees_episode(lines[i].place)],
                   memories=[i for i in plan.memories if i in kept and ctx.sees_memory(kept[i].scope)],
                   proposals=[i for i in plan.proposals if i in places and ctx.sees_episode(places[i])])


def erased_here(ctx: CommandContext, seen: Forgetting | None, done: Forgetting) -> str:
    """What a forget erased, counted as ``seen_part`` found."""
    if seen is None:
        return erased(ctx.lang, done)
    left = ctx.say("files_left") if done.files_left else ""
    return erased(ctx.lang, replace(seen, files_left=False)) + ctx.say("not_counted_elsewhere") + left


def erased(lang: str, plan: Forgetting) -> str:
    """What a forget erased (``Forgetting.summary`` in ``lang``): ``2 lines and 1 memory``."""
    parts = [counted(lang, "n_line", len(plan.episodes)), counted(lang, "n_memory", len(plan.memories))]
    if plan.proposals:
        parts.append(counted(lang, "n_proposal", len(plan.proposals)))
    return and_list(lang, parts) + (say(lang, "files_left") if plan.files_left else "")
