"""Serving the dashboard: an AppRunner and a TCPSite started and stopped by the host; the token."""

from __future__ import annotations

import ipaddress
import logging
import secrets
from pathlib import Path

from aiohttp import web

from ..memory.self.identity import atomic_write

log = logging.getLogger("engram.dashboard")

DEFAULT_HOST, DEFAULT_PORT = "127.0.0.1", 8765
TOKEN_FILE = "dashboard_token"
MIN_TOKEN = 16  # characters: shorter could be guessed over the network (401s are not rate-limited)


def new_token() -> str:
    return secrets.token_urlsafe(24)


def stored_token(folder: Path) -> str:
    """The token kept in ``folder`` (created on first start, readable by its owner only)."""
    path = Path(folder) / TOKEN_FILE
    try:
        token = path.read_text("utf-8").strip()
        if len(token) >= MIN_TOKEN:
            return token
    except FileNotFoundError:
        pass
    token = new_token()
    atomic_write(path, token + "\n")  # whole or not at all; private from the start (mkstemp: 0600)
    return token


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class DashboardServer:
    """One dashboard on ``host:port``; ``start`` never raises for a port in use: it logs and returns False."""

    def __init__(self, app: web.Application, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT):
        self.app, self.host, self.port = app, host, port
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"

    @property
    def running(self) -> bool:
        return self._runner is not None

    async def start(self) -> bool:
        runner = web.AppRunner(self.app, access_log=None, handle_signals=False)
        await runner.setup()
        try:
            await web.TCPSite(runner, self.host, self.port, reuse_address=True).start()
        except OSError as e:
            log.error(
                "Engram dashboard: cannot listen on %s:%s (%s); the port is taken or not allowed. "
                "The bot goes on without the dashboard; set dashboard_port to a free port.",
                self.host,
                self.port,
                e.strerror or e,
            )
            await runner.cleanup()
            return False
        if self.port == 0:  # an ephemeral port (tests): learn which
            server = runner.addresses[0] if runner.addresses else None
            self.port = server[1] if server else self.port
        self._runner = runner
        log.info("Engram dashboard on %s", self.url)
        return True

    async def stop(self) -> None:
        """Close the listening socket and every connection; the port is free when this returns."""
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()
