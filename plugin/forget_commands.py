"""``/mem forget-person``, ``/mem forget-place`` and ``/mem confirm``: the wide hard forgets, which
say what they would erase and wait for a confirmation code given in the same chat (registered on
import). ``/mem forget <id>`` is in ``commands.py``."""

from __future__ import annotations

from collections.abc import Awaitable

from ..memory import Audience, Engram, Forgetting, UnknownIdError
from .command_args import Refused, UsageError
from .command_text import short
from .commands import COMMANDS, CommandContext
from .confirm import ConfirmError, chat_of
from .forget_counts import erased_here, seen_part

FORGET_PERSON, FORGET_PLACE = "forget-person", "forget-place"


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


@COMMANDS.command(FORGET_PERSON, "usage_forget-person", "sub_forget-person")
async def _forget_person(ctx: CommandContext, args: str) -> str:
    if not args.strip():
        raise UsageError("")
    mem = await ctx.service.memory()
    person = await _person(mem, args.strip(), ctx.audience)
    plan = await _plan(mem.forget_person(person, dry_run=True), "nothing_of_person",
                       person=repr(short(person)))
    summary = erased_here(ctx, await seen_part(ctx, plan), plan)
    return _ask(ctx, FORGET_PERSON, person, ctx.say("erase_person", person=short(person), summary=summary))


@COMMANDS.command(FORGET_PLACE, "usage_forget-place", "sub_forget-place")
async def _forget_place(ctx: CommandContext, args: str) -> str:
    place = args.strip() or ctx.audience.place
    if place != ctx.audience.place and not ctx.audience.owner_private:
        raise Refused("no_place_here", place=repr(short(place)))
    plan = await _plan((await ctx.service.memory()).forget_place(place, dry_run=True), "nothing_of_place",
                       place=repr(short(place)))
    summary = erased_here(ctx, await seen_part(ctx, plan), plan)
    return _ask(ctx, FORGET_PLACE, place, ctx.say("erase_place", place=short(place), summary=summary))


@COMMANDS.command("confirm", "usage_confirm", "sub_confirm")
async def _confirm(ctx: CommandContext, args: str) -> str:
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
            forget, nothing = mem.forget_person, "nothing_of_person"
            what = {"person": repr(short(pending.target))}
        else:
            forget, nothing = mem.forget_place, "nothing_of_place"
            what = {"place": repr(short(pending.target))}
        # counted as this chat may see it, read before it goes (after, the erased lines tell no place)
        seen = await seen_part(ctx, await _plan(forget(pending.target, dry_run=True), nothing, **what))
        done = await _plan(forget(pending.target), nothing, **what)
    return ctx.say("forgot_target", target=short(pending.target), summary=erased_here(ctx, seen, done))
