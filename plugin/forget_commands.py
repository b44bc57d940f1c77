"""``/mem forget-person``, ``/mem forget-place`` and ``/mem confirm``: the wide hard forgets, which
say what they would erase and wait for a confirmation code given in the same chat (registered on
import). ``/mem forget <id>`` is in ``commands.py``."""

from __future__ import annotations

from ..memory import Audience, Engram, UnknownIdError
from .command_args import UsageError
from .commands import COMMANDS, CommandContext
from .confirm import ConfirmError, chat_of

FORGET_PERSON, FORGET_PLACE = "forget-person", "forget-place"


async def _person(mem: Engram, who: str, audience: Audience) -> str:
    """The person id ``who`` names: an id as given, or the one person who went by that name.

    Outside the owner's private chat only someone who spoke in this place is found (by the name they
    went by here): a group learns no name, id or count of a person it has not seen.
    """
    if audience.owner_private:
        people = [who] if ":" in who else await mem.people_named(who)
    elif ":" in who:
        seen = await mem.last_time_with(who, space=audience.space) is not None
        people = [who] if seen else []
    else:
        people = await mem.people_named_in(audience.space, who)
    if not people:
        where = "" if audience.owner_private else (
            " here (a person seen only elsewhere is named in the owner's private chat)")
        raise UnknownIdError(f"no one called {who!r} is remembered{where}; nothing was forgotten")
    if len(people) > 1:
        raise UnknownIdError(f"{who!r} names several people ({', '.join(people)}); give the id")
    return people[0]


def _ask(ctx: CommandContext, action: str, target: str, summary: str) -> str:
    code = ctx.service.confirmations.ask(chat_of(ctx.event), str(ctx.event.get_sender_id()), action,
                                         target, summary)
    minutes = round(ctx.service.confirmations.seconds / 60)
    return (f"This erases {summary} for good, from every place. To go on, send /mem confirm {code} "
            f"in this chat within {minutes} minutes.")


@COMMANDS.command(FORGET_PERSON, "forget-person <name or id>",
                  "erase everything said by or about a person (asks for a confirmation)")
async def _forget_person(ctx: CommandContext, args: str) -> str:
    if not args.strip():
        raise UsageError("")
    mem = await ctx.service.memory()
    person = await _person(mem, args.strip(), ctx.audience)
    plan = await mem.forget_person(person, dry_run=True)
    return _ask(ctx, FORGET_PERSON, person, f"everything by or about {person}: {plan.summary()}")


@COMMANDS.command(FORGET_PLACE, "forget-place [place]",
                  "erase every line and memory of this place (asks for a confirmation)")
async def _forget_place(ctx: CommandContext, args: str) -> str:
    space = args.strip() or ctx.audience.space
    if space != ctx.audience.space and not ctx.audience.owner_private:
        raise UnknownIdError(f"no place {space!r} here (name another place only in the owner's private chat)")
    plan = await (await ctx.service.memory()).forget_place(space, dry_run=True)
    return _ask(ctx, FORGET_PLACE, space, f"the place {space}: {plan.summary()}")


@COMMANDS.command("confirm", "confirm <code>", "carry out the forget a code was given for")
async def _confirm(ctx: CommandContext, args: str) -> str:
    if not args.strip():
        raise UsageError("")
    try:
        pending = ctx.service.confirmations.take(args, chat_of(ctx.event), str(ctx.event.get_sender_id()))
    except ConfirmError as e:
        return f"Engram: {e}. Nothing was forgotten."
    mem = await ctx.service.memory()
    async with ctx.forget_turn():  # after a diary or self-image job writing now (told so); the
        if pending.action == FORGET_PERSON:  # diary and self-image it rewrites in the same turn
            done = await mem.forget_person(pending.target)
        else:
            done = await mem.forget_place(pending.target)
    return f"Forgot {pending.target}: {done.summary()} erased."
