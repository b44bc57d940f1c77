"""The dashboard inside AstrBot: started with the plugin, stopped with it (``/mem dashboard``, in
``commands/dashboard.py``, gives its link).

The token is generated on first start and kept in the data folder; only ``/mem dashboard`` in the
owner's private chat shows it. A port in use is logged once and the bot goes on without it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from ..dashboard import DEFAULT_HOST, DashboardServer, DashboardSettings, make_app, stored_token
from .events import place_audience
from .service import EngramService

log = logging.getLogger("engram.plugin")


def owner_place(service: EngramService) -> Callable[[str], bool]:
    """Whether a place is the owner's private chat, as ``events.audience_of`` decides it (a bare owner
    id counts only on the bot's one chat platform, see ``Settings.is_owner``)."""

    def check(place: str) -> bool:
        return place_audience(place, service.settings, service.providers.platforms()).owner_private

    return check


def job_names(service: EngramService):  # type: ignore[no-untyped-def]
    """The jobs the plugin schedules (none until ``Jobs`` starts, just after the dashboard)."""

    def names() -> list[str]:
        jobs = service.jobs
        return [job.name for job in jobs.registry] if jobs is not None else []

    return names


def dashboard_settings(service: EngramService, token: str = "") -> DashboardSettings:
    """What the pages are told by the plugin, on its own port and in AstrBot's WebUI alike: recall
    explained shows the plugin's own injection (``service.explain``)."""
    s = service.settings
    return DashboardSettings(
        token=token,
        block=s,
        identity=service.identity,
        tz=service.tz,
        chat_model=s.chat_provider_id or "the chat's current provider",
        owner_places=owner_place(service),
        jobs=job_names(service),
        data_dir=service.data_dir,
        explain=service.explain,
    )


async def start_dashboard(service: EngramService) -> DashboardServer | None:
    """Serve the dashboard on 127.0.0.1 if enabled; None when disabled or it could not start."""
    s = service.settings
    if not s.dashboard_enabled:
        return None
    try:
        settings = dashboard_settings(service, stored_token(service.data_dir))
        server = DashboardServer(make_app(service.memory, settings), DEFAULT_HOST, s.dashboard_port)
        if not await server.start():
            return None
    except Exception:  # the bot must work without its dashboard
        log.exception("Engram dashboard: could not start; the bot goes on without it")
        return None
    service.dashboard = server
    return server


async def stop_dashboard(service: EngramService) -> None:
    """Stop the dashboard; the port is free when this returns."""
    server, service.dashboard = service.dashboard, None
    if server is not None:
        await server.stop()
