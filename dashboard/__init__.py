"""The read-only web dashboard: what the bot remembers, where it came from, why it came up."""

from .app import make_app
from .server import DEFAULT_HOST, DEFAULT_PORT, DashboardServer, is_loopback, new_token, stored_token
from .settings import DashboardSettings

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "DashboardServer",
    "DashboardSettings",
    "is_loopback",
    "make_app",
    "new_token",
    "stored_token",
]
