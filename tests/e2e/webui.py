"""AstrBot's own WebUI (its dashboard server, FastAPI on hypercorn) served in this process on 127.0.0.1,
over the test's AstrBot core, with a known login: what a user of a real install logs in to."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import aiohttp

from .harness import free_port

USER, PASSWORD = "astrbot", "engram-webui-Test-2026!"


async def serve_webui(core: Any) -> tuple[str, asyncio.Event, asyncio.Task[Any]]:
    """Start AstrBot's WebUI for ``core`` on a free port of 127.0.0.1 with the test's password; returns
    its base URL, the event that stops it and its task."""
    from astrbot.core import db_helper
    from astrbot.dashboard.password_state import (
        set_dashboard_password_hashes,
        set_password_change_required,
        set_password_storage_upgraded,
    )
    from astrbot.dashboard.server import AstrBotDashboard

    port = free_port()
    config = core.astrbot_config
    config["dashboard"].update({"enable": True, "host": "127.0.0.1", "port": port, "username": USER})
    set_dashboard_password_hashes(config, PASSWORD)
    await set_password_storage_upgraded(db_helper, config, True)
    await set_password_change_required(db_helper, config, False)
    stop = asyncio.Event()
    server = AstrBotDashboard(core, db_helper, stop)
    task = asyncio.ensure_future(server.run())
    for _ in range(200):
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        await asyncio.sleep(0.05)
    else:
        raise AssertionError("AstrBot's WebUI did not start listening")
    return f"http://127.0.0.1:{port}", stop, task


async def log_in(base: str) -> str:
    """Log in as a user does (AstrBot's login API); returns the WebUI's token."""
    async with aiohttp.ClientSession() as http:
        r = await http.post(f"{base}/api/v1/auth/login", json={"username": USER, "password": PASSWORD})
        body = await r.json()
    assert r.status == 200 and body["status"] == "ok", body
    return str(body["data"]["token"])
