"""``/mem consolidate [place]``: consolidation now, reporting what it did (registered on import)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..memory.errors import ChatError
from ..memory.render import quoted
from .command_args import Refused
from .command_text import fit_lines, short
from .commands import COMMANDS, CommandContext
from .reply_catalogue import say
from .reply_words import error_text, word

SHOWN_NEW = 8  # new memories listed after /mem consolidate


def run_summary(lang: str, report: Any) -> str:
    """What a consolidation did (``ConsolidationReport.summary`` in ``lang``): ``2 added, 1 updated,
    from 40 lines, 1 model calls; refused ...; failed ...``."""
    def counts(c: Any) -> str:
        return ", ".join(f"{word(lang, 'count', k)} {v}" for k, v in sorted(c.items()))
    parts = [say(lang, "run_counts", added=report.added, updated=report.updated, episodes=report.episodes,
                 calls=report.calls)]
    if report.refused:
        parts.append(say(lang, "run_refused", counts=counts(report.refused)))
    if report.failed:
        parts.append(say(lang, "run_failed", counts=counts(report.failed))
                     + (f" ({short(report.error)})" if report.error and lang != "zh" else ""))
    if report.skipped_batches:
        parts.append(say(lang, "run_skipped", n=report.skipped_batches))
    return say(lang, "run_sep").join(parts)


@COMMANDS.command("consolidate", "usage_consolidate", "sub_consolidate")
async def _consolidate(ctx: CommandContext, args: str) -> str:
    jobs = ctx.service.jobs
    if jobs is None:
        return ctx.say("jobs_off")
    place = args.strip()
    places = None if not place else [ctx.audience.place if place == "here" else place]
    if places and places[0] != ctx.audience.place and not ctx.audience.owner_private:
        # another chat is named (and counted) only from the owner's private chat: its lines are its own
        raise Refused("no_place_here", place=repr(short(places[0])))
    mem = await ctx.service.memory()
    if places and not await mem.has_place(places[0]):  # a typo: not 'Consolidated ...' as if done
        return ctx.say("no_lines_place", place=repr(short(places[0])), here=ctx.audience.place)
    # outside the owner's private chat only this place, and only what it may see is counted: a memory
    # drawn from its lines for the owner is neither shown nor counted there
    mine = ctx.audience.owner_private
    report = await jobs.consolidate_now(places or (None if mine else [ctx.audience.place]))
    found = await mem.memories(report.new_ids if not mine else report.new_ids[-50:])
    shown = [m for m in found.values() if ctx.sees_memory(m.scope)]
    hidden = len(found) - len(shown)
    if not mine:
        report = replace(report, added=report.added - hidden)
    summary = run_summary(ctx.lang, report)
    lines = [ctx.say("consolidated_place", place=places[0], summary=summary) if places
             else ctx.say("consolidated", summary=summary)]
    if report.failed and not report.skipped_batches:
        lines.append(ctx.say("kept_for_later"))
    elif not report.calls and not await ctx.service.providers.resolve_chat(None):  # nothing was due here
        providers = ctx.service.providers
        why = ChatError(providers.missing_chat(), **providers.missing_chat_code())
        lines.append(ctx.say("no_chat_model", why=error_text(ctx.lang, why)))
    lines += [f"m{m.id} [{m.scope}] {quoted(short(m.text))}" for m in shown[-SHOWN_NEW:]]
    if hidden and mine:
        lines.append(ctx.say("new_elsewhere", n=hidden))
    return fit_lines(lines, ctx.lang, ctx.say("rest_dashboard"))
