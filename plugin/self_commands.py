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
from ..memory.proposals import ProposalFlood
from ..memory.render import quoted
from .command_args import UsageError
from .command_text import short
from .commands import COMMANDS, CommandContext
from .events import actor_of, audience_of, platform_of, sender_of
from .service import EngramService
from .tools import ToolArgError, text_arg

log = logging.getLogger("engram.plugin")

NOT_OWNER = "Engram: only the bot's owner decides about its identity (config key owner_ids)."


def is_owner(ctx: CommandContext) -> bool:
    return ctx.service.settings.is_owner(platform_of(ctx.event), sender_of(ctx.event),
                                         ctx.service.providers.platforms())


def _proposal_id(args: str) -> int:
    m = re.fullmatch(r"#?(\d{1,9})", args.strip())
    if not m:
        raise UsageError(f"{args.strip()!r} is not a proposal number" if args.strip() else "")
    return int(m.group(1))


@COMMANDS.command("proposals", "proposals", "changes to its identity the bot proposed, waiting for the owner")
async def _proposals(ctx: CommandContext, args: str) -> str:
    if not is_owner(ctx):
        return NOT_OWNER + ctx.owner_hint()
    waiting = ctx.service.selfhood.proposals.pending()
    if not waiting:
        return "No identity proposal waits for you."
    # a proposal and its reason tell of the chat it was made in: elsewhere only the owner's private
    # chat shows it, like that chat's lines
    shown = [p for p in waiting if ctx.sees_episode(p.place)]
    lines = [f"#{p.id} ({p.at[:10]}, from {p.place}): {quoted(short(p.change))}"
             + (f" — because {quoted(short(p.reason))}" if p.reason else "") for p in shown]
    if len(shown) < len(waiting):
        n = len(waiting) - len(shown)
        lines.append(f"({n} more wait{'s' if n == 1 else ''}, made in other chats: "
                     "/mem proposals in your private chat with the bot shows them)")
    head = "Proposed changes to identity/self.md (/mem approve <id> or /mem reject <id>):"
    return "\n".join([head, *lines])


@COMMANDS.command("approve", "approve <id>", "append a proposed change to identity/self.md (old one kept)")
async def _approve(ctx: CommandContext, args: str) -> str:
    if not is_owner(ctx):
        return NOT_OWNER + ctx.owner_hint()
    p = ctx.service.selfhood.proposals.approve(_proposal_id(args))
    return f"Approved #{p.id}: identity/self.md ends with it now; the old version is in identity/history/."


@COMMANDS.command("reject", "reject <id>", "turn a proposed identity change down")
async def _reject(ctx: CommandContext, args: str) -> str:
    if not is_owner(ctx):
        return NOT_OWNER + ctx.owner_hint()
    p = ctx.service.selfhood.proposals.reject(_proposal_id(args))
    return f"Rejected #{p.id}; identity/self.md is unchanged."


@COMMANDS.command("diary", "diary [YYYY-MM-DD] [--force]", "write or show a day's diary (default: yesterday)")
async def _diary(ctx: CommandContext, args: str) -> str:
    if not is_owner(ctx) or not ctx.audience.owner_private:
        return "Engram: the diary is the owner's; ask in your private chat with the bot." + ctx.owner_hint()
    jobs = ctx.service.self_jobs
    if jobs is None:
        return "Engram: the diary job is not running (diary_enabled is off, or the jobs did not start)."
    words = args.split()
    force = "--force" in words
    rest = [w for w in words if w != "--force"]
    if len(rest) > 1:
        raise UsageError(f"one date at most, not {' '.join(rest)!r}")
    try:
        day = date.fromisoformat(rest[0]) if rest else None
    except ValueError:
        raise UsageError(f"{rest[0]!r} is not a date like 2026-11-30") from None
    if day is not None and not 1 < day.year < 9999:  # its bounds, a day on, would overflow
        raise UsageError(f"{rest[0]!r} is out of range (years 2 to 9998)")
    settings = jobs.day_settings()
    if day is not None and day >= day_of(jobs.clock(), settings.tz, settings.boundary_hour):
        # written now, it would stand for the whole day: the end-of-day job finds it there and stops
        return (f"Engram: {day} has not ended yet (a day ends at {settings.boundary_hour}:00 the next "
                "morning); its diary is written once it has.")
    r = await jobs.diary_now(day, force=force)
    if r.status == "empty":
        return f"{r.day}: nothing was lived that day; no diary."
    return f"Diary of {r.day} ({r.status}, m{r.memory_id}):\n{r.text}"


async def identity_propose(service: EngramService, event: Any, change: Any, reason: Any) -> str:
    """The model proposes a change to its core identity; only the owner can approve it."""
    if not service.settings.proposals_enabled:
        return "Identity proposals are switched off by the owner."
    try:
        c = text_arg("change", change, 1000)
        r = text_arg("reason", reason, 500, required=False)
    except ToolArgError as e:
        return str(e)
    try:
        p = service.selfhood.proposals.propose(c, r, audience_of(event, service.settings).space,
                                               person=actor_of(event))
    except ProposalFlood as e:
        return f"Not proposed: {e}."
    except InvalidInputError as e:
        return f"error: {e}"
    except OSError:
        log.exception("Engram: saving an identity proposal failed")
        return "error: the proposal could not be saved right now"
    return (f"Proposed (#{p.id}). Your identity changes only if the owner approves it; "
            "until then, nothing about you changes.")
