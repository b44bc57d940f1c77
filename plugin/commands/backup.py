"""``/mem backup``: a backup of the store now, in the owner's private chat only (the daily one is a
background job, ``backup_keep``; ``memory/backups.py`` says how): of the SQLite file, or with
``database_url`` a snapshot of the database as a SQLite store file, into the data folder's ``backups/``."""

from __future__ import annotations

from ...memory.backups import KEEP, backups, take_backup
from ...memory.store.opening import store_path
from .context import CommandContext


async def backup(ctx: CommandContext, args: str) -> str:
    if not ctx.audience.owner_private:
        return ctx.say("backup_not_owner") + ctx.owner_hint()
    settings = ctx.service.settings
    store = store_path(ctx.service.location, ctx.service.data_dir)
    await ctx.service.flush()  # what was said before the command is in it
    path = await take_backup(store, keep=settings.backup_keep or KEEP, url=settings.database_url or None)
    return ctx.say("backup_done", path=str(path), n=len(backups(store)))
