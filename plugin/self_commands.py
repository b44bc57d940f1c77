"""``/mem proposals``, ``/mem approve <id>``, ``/mem reject <id>`` (the owner decides changes to the
core identity), ``/mem diary [date] [--force]``, and the model's tool ``identity_propose``
(registered on import, like ``job_commands``)."""

from __future__ import annotations

import logging
import re
from datetime import date
from typing import Any

from ..memory.clock import day_of
from ..memory.errors import InvalidInputError
from ..memory.render import quoted
from ..memory.self.proposals import ProposalFlood
from ..memory.text.display import cut
from .command_args import Refused, UsageError
from .command_text import WHOLE_CHARS, fit_lines, short
from .commands import COMMANDS, CommandContext
from .events import actor_of, audience_of, platform_of, sender_of
from .reply_catalogue import TEXTS, counted, say
from .reply_lang import EN
from .reply_words import word
from .service import EngramService
from .tools import OPTED_OUT, ToolArgError, text_arg

log = logging.getLogger("engram.plugin")

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


@COMMANDS.command("proposals", "usage_proposals", "sub_proposals")
async def _proposals(ctx: CommandContext, args: str) -> str:
    if not is_owner(ctx):
        return _not_owner(ctx)
    waiting = ctx.service.selfhood.proposals.pending()
    if not waiting:
        return ctx.say("no_proposals")
    # a proposal and its reason tell of the chat it was made in: elsewhere only the owner's private
    # chat shows it, like that chat's lines
    shown = [p for p in waiting if ctx.sees_episode(p.place)]
    lines = [ctx.say("proposal", id=p.id, day=p.at[:10], place=p.place, change=quoted(short(p.change)))
             + (ctx.say("proposal_reason", reason=quoted(short(p.reason))) if p.reason else "")
             for p in shown]
    if len(shown) < len(waiting):
        lines.append(counted(ctx.lang, "proposals_hidden", len(waiting) - len(shown)))
    return fit_lines([ctx.say("proposals_head"), *lines], ctx.lang, ctx.say("rest_dashboard"))


@COMMANDS.command("approve", "usage_approve", "sub_approve")
async def _approve(ctx: CommandContext, args: str) -> str:
    if not is_owner(ctx):
        return _not_owner(ctx)
    p = ctx.service.selfhood.proposals.approve(_proposal_id(ctx, args))
    return ctx.say("approved", id=p.id)


@COMMANDS.command("reject", "usage_reject", "sub_reject")
async def _reject(ctx: CommandContext, args: str) -> str:
    if not is_owner(ctx):
        return _not_owner(ctx)
    p = ctx.service.selfhood.proposals.reject(_proposal_id(ctx, args))
    return ctx.say("rejected", id=p.id)


@COMMANDS.command("diary", "usage_diary", "sub_diary")
async def _diary(ctx: CommandContext, args: str) -> str:
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


async def identity_propose(service: EngramService, event: Any, change: Any, reason: Any) -> str:
    """The model proposes a change to its core identity; only the owner can approve it."""
    if not service.settings.proposals_enabled:
        return "Identity proposals are switched off by the owner."
    try:
        c = text_arg("change", change, 1000)
        r = text_arg("reason", reason, 500, required=False)
    except ToolArgError as e:
        return str(e)
    place = audience_of(event, service.settings).place
    if service.settings.is_blacklisted(place):  # an opted-out place: nothing of what is said there is kept
        return "Not proposed: " + OPTED_OUT
    try:
        p = service.selfhood.proposals.propose(c, r, place, person=actor_of(event))
    except ProposalFlood as e:
        return f"Not proposed: {e}."
    except InvalidInputError as e:
        return f"error: {e}"
    except OSError:
        log.exception("Engram: saving an identity proposal failed")
        return "error: the proposal could not be saved right now"
    return (f"Proposed (#{p.id}). Your identity changes only if the owner approves it; "
            "until then, nothing about you changes.")
