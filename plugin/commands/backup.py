"""``/mem backup``: a backup of the store now, in the owner's private chat only (the daily one is a
background job, ``backup_keep``; ``memory/backups.py`` says how)."""

from __future__ import annotations

from ...memory.backups import KEEP, backups, take_backup
from .context import CommandContext


async def backup(ctx: CommandContext, args: str) -> str:
    if not ctx.audience.owner_private:
        return ctx.say("backup_not_owner") + ctx.owner_hint()
    if ctx.service.settings.database_url:
        return ctx.say("backup_postgres")
    store = ctx.service.path
    await ctx.service.flush()  # what was said before the command is in it
    path = await take_backup(store, keep=ctx.service.settings.backup_keep or KEEP)
    return ctx.say("backup_done", path=str(path), n=len(backups(store)))
