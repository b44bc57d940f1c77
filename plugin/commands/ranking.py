"""``/mem ranking`` (the weights this bot learned against the shipped ones, how much feedback moved
them, whether they are served), ``/mem ranking reset``, and the owner's ``/mem good`` / ``/mem bad`` on
the last injection in this chat (``memory/recall/ranking.py``; issue 32)."""

from __future__ import annotations

from .args import UsageError
from .context import CommandContext

SHOWN = 6  # weights listed, the ones that moved most


async def ranking(ctx: CommandContext, args: str) -> str:
    mem = await ctx.service.memory()
    learned = ctx.service.ranking
    if learned is None:
        return ctx.say("ranking_off")
    what = args.strip().lower()
    if what == "reset":
        await learned.reset(mem.ranking_store())
        ctx.service.serve_ranking(mem)
        return ctx.say("ranking_reset")
    if what:
        raise UsageError("")
    v = learned.view()
    c = v["counts"]
    lines = [ctx.say("ranking_served" if v["serving"] else "ranking_shipped"),
             ctx.say("ranking_feedback", replies=c["replies"], used=c["used"], good=c["good"], bad=c["bad"],
                     steps=v["steps"], judged=v["judged"], gain=f"{v['gain']:+.3f}")]
    moved = list(v["moved"].items())[:SHOWN]
    if moved:
        lines.append(ctx.say("ranking_moved", largest=f"{v['largest_move']:.2f}", rms=f"{v['rms_move']:.2f}"))
        lines += [f"  {name}: {a:+.2f} -> {b:+.2f}" for name, (a, b) in moved]
    else:
        lines.append(ctx.say("ranking_unmoved"))
    lines.append(ctx.say("ranking_how"))
    return "\n".join(lines)


async def good(ctx: CommandContext, args: str) -> str:
    return await _judge(ctx, args, True)


async def bad(ctx: CommandContext, args: str) -> str:
    return await _judge(ctx, args, False)


async def _judge(ctx: CommandContext, args: str, is_good: bool) -> str:
    if args.strip():
        raise UsageError("")
    await ctx.service.memory()
    learned = ctx.service.ranking
    if learned is None:
        return ctx.say("ranking_off")
    r = learned.judge_last(ctx.audience.place, is_good)
    return ctx.say("judged_good" if is_good else "judged_bad", n=r.injected, held=len(r.keys) - r.injected)
