"""``/mem export``: the soul bundle (``memory/bundle``, ``SPEC.md``) of everything Engram knows, written
into the plugin's data folder (``exports/<time>/``), in the owner's private chat only: it holds every
chat's lines. The reply says where it is and how large. A later forget says which exports still hold
what it erased (``exports_note``)."""

from __future__ import annotations

from pathlib import Path

from ...memory.bundle import export_bundle, known_exports
from ...memory.model import now_utc
from .args import UsageError
from .context import CommandContext

EXPORTS = "exports"  # under the data folder


async def export(ctx: CommandContext, args: str) -> str:
    if not ctx.audience.owner_private:
        return ctx.say("export_not_owner") + ctx.owner_hint()
    if args.strip():
        raise UsageError("")
    await ctx.service.flush()  # the lines waiting to be written go into the bundle too
    mem = await ctx.service.memory()
    folder = ctx.service.data_dir / EXPORTS / now_utc().strftime("%Y%m%d-%H%M%S")
    r = await export_bundle(mem, folder)
    return ctx.say("export_done", path=str(r.folder), size=f"{r.size / 2**20:.1f}", files=r.files,
                   episodes=r.counts["episodes"], memories=r.counts["memories"],
                   documents=r.counts["documents"])


def exports_note(ctx: CommandContext, data_folder: Path) -> str:
    """What a forget adds when bundles were written before it: they still hold what it erased (it
    cannot reach files outside the store). Their folders only in the owner's private chat."""
    found = known_exports(data_folder)
    if not found:
        return ""
    if not ctx.audience.owner_private:
        return ctx.say("exports_hold_elsewhere", n=len(found))
    return ctx.say("exports_hold", n=len(found), paths="\n".join(str(x.path) for x in found))
