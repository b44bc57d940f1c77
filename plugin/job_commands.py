"""``/mem consolidate [place]``: consolidation now, reporting what it did (registered on import)."""

from __future__ import annotations

from ..memory.render import quoted
from .command_text import short
from .commands import COMMANDS, CommandContext

SHOWN_NEW = 8  # new memories listed after /mem consolidate


@COMMANDS.command("consolidate", "consolidate [place|here]",
                  "turn new messages into memories now (all places, or one)")
async def _consolidate(ctx: CommandContext, args: str) -> str:
    jobs = ctx.service.jobs
    if jobs is None:
        return "Engram: background jobs are not running."
    place = args.strip()
    places = None if not place else [ctx.audience.space if place == "here" else place]
    mem = await ctx.service.memory()
    if places and not await mem.has_space(places[0]):  # a typo: not 'Consolidated ...' as if done
        return (f"Engram: no place {places[0]!r} has any lines; nothing was consolidated "
                f"(this place is {ctx.audience.space}).")
    report = await jobs.consolidate_now(places)
    lines = [f"Consolidated{' ' + places[0] if places else ''}: {report.summary()}."]
    if report.failed and not report.skipped_batches:
        lines.append("The lines the model could not read are kept and tried again later.")
    found = await mem.memories(report.new_ids[-50:])
    shown = [m for m in found.values() if ctx.sees_memory(m.scope)]
    lines += [f"m{m.id} [{m.scope}] {quoted(short(m.text))}" for m in shown[-SHOWN_NEW:]]
    if len(found) > len(shown):
        lines.append(f"({len(found) - len(shown)} new memories of other places not shown here)")
    return "\n".join(lines)
