"""The bot's self, decided by its owner: ``/mem proposals``, ``/mem approve <id>``, ``/mem reject <id>``
(changes to the core identity the model proposed with the tool ``identity_propose``) and ``/mem diary
[date] [--force]``."""

from __future__ import annotations

import re
from datetime import date

from ...memory.clock import day_of
from ...memory.render import quoted
from ...memory.text.display import cut
from ...memory.wording import EN, word
from ..events import platform_of, sender_of
from ..replies.catalogue import TEXTS, say
from ..replies.fit import WHOLE_CHARS, fit_lines, short
from .args import Refused, UsageError
from .context import CommandContext

NOT_OWNER = say(EN, "not_owner")


def is_owner(ctx: CommandContext) -> bool:
    return ctx.service.settings.is_owner(platform_of(ctx.event), sender_of(ctx.event),
                                         ctx.service.providers.platforms())


def _proposal_id(ctx: CommandContext, args: str) -> int:
    """A proposal's number (``3`` or ``#3``) that names one waiting for the owner; else the reply says why."""
    m = re.fullmatch(r"#?(\d{1,9})", args.strip())
    if not m:
        raise UsageError("not_proposal_id", arg=repr(short(args.strip()))) if args.strip() else UsageError()
    pid = int(m.group(1))
    p = next((p for p in ctx.service.selfhood.proposals.all() if p.id == pid), None)
    if p is None:
        raise Refused("no_proposal", id=pid)
    if p.status != "pending":
        key = f"status_{p.status}"
        raise Refused("proposal_decided", id=pid, status=say(ctx.lang, key) if key in TEXTS else p.status)
    return pid


def _not_owner(ctx: CommandContext) -> str:
    return ctx.say("not_owner") + ctx.owner_hint()


def _elsewhere(ctx: CommandContext) -> str | None:
    """The answer outside the owner's private chat (None there): the proposals, whichever chat they
    were made in, are shown and decided only in that chat. A group hears neither them nor how many
    there are, nor (by an approve or a reject that worked) that one with a given number exists."""
    if not is_owner(ctx):
        return _not_owner(ctx)
    return None if ctx.audience.owner_private else ctx.say("proposals_private")


async def proposals(ctx: CommandContext, args: str) -> str:
    if (refused := _elsewhere(ctx)) is not None:
        return refused
    waiting = ctx.service.selfhood.proposals.pending()
    if not waiting:
        return ctx.say("no_proposals")
    lines = [ctx.say("proposal", id=p.id, day=p.at[:10], place=p.place, change=quoted(short(p.change)))
             + (ctx.say("proposal_reason", reason=quoted(short(p.reason))) if p.reason else "")
             for p in waiting]
    return fit_lines([ctx.say("proposals_head"), *lines], ctx.lang, ctx.say("rest_dashboard"))


async def approve(ctx: CommandContext, args: str) -> str:
    if (refused := _elsewhere(ctx)) is not None:
        return refused
    p = ctx.service.selfhood.proposals.approve(_proposal_id(ctx, args))
    return ctx.say("approved", id=p.id)


async def reject(ctx: CommandContext, args: str) -> str:
    if (refused := _elsewhere(ctx)) is not None:
        return refused
    p = ctx.service.selfhood.proposals.reject(_proposal_id(ctx, args))
    return ctx.say("rejected", id=p.id)


async def diary(ctx: CommandContext, args: str) -> str:
    if not is_owner(ctx) or not ctx.audience.owner_private:
        hint, s = ctx.owner_hint(), ctx.service.settings
        if hint and not s.owner_ids and not s.owner_private_spaces:  # an admin's private chat, no owner
            return ctx.say("diary_no_owner") + hint
        return ctx.say("diary_not_owner") + hint
    jobs = ctx.service.self_jobs
    if jobs is None:
        return ctx.say("diary_off")
    words = args.split()
    force = "--force" in words
    rest = [w for w in words if w != "--force"]
    if len(rest) > 1:
        raise UsageError("diary_one_date", dates=repr(short(" ".join(rest))))
    try:
        day = date.fromisoformat(rest[0]) if rest else None
    except ValueError:
        raise UsageError("diary_not_date", arg=repr(short(rest[0]))) from None
    if day is not None and not 1 < day.year < 9999:  # its bounds, a day on, would overflow
        raise UsageError("diary_range", arg=repr(rest[0]))
    settings = jobs.day_settings()
    if day is not None and day >= day_of(jobs.clock(), settings.tz, settings.boundary_hour):
        # written now, it would stand for the whole day: the end-of-day job finds it there and stops
        return ctx.say("diary_not_ended", day=day, hour=settings.boundary_hour)
    r = await jobs.diary_now(day, force=force)
    if r.status == "empty":
        return ctx.say("diary_empty", day=r.day)
    head = ctx.say("diary_head", day=r.day, status=word(ctx.lang, "diary", r.status), id=r.memory_id)
    return f"{head}\n{diary_text(ctx.lang, r.text, r.day, WHOLE_CHARS - len(head) - 1)}"


def diary_text(lang: str, text: str, day: object, limit: int) -> str:
    """A diary as ``/mem diary`` shows it: its lines as written, or its beginning and where it is whole."""
    if len(text) <= limit:
        return text
    note = say(lang, "diary_cut", n=f"{len(text):,}", day=day)
    return f"{cut(text, limit - len(note) - 1)}\n{note}"
