"""``/mem dashboard``: the dashboard's link, in the owner's private chat only (the token is in it)."""

from __future__ import annotations

from ...dashboard.app import SETTINGS
from .context import CommandContext


async def dashboard(ctx: CommandContext, args: str) -> str:
    if not ctx.audience.owner_private:
        return ctx.say("dashboard_not_owner") + ctx.owner_hint()
    server = ctx.service.dashboard
    if server is None:
        off = not ctx.service.settings.dashboard_enabled
        return ctx.say("dashboard_disabled" if off else "dashboard_down")
    token = server.app[SETTINGS].token  # the one it checks (the file may have changed since it started)
    return ctx.say("dashboard_link", url=f"{server.url}?token={token}")
