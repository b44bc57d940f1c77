"""Tests talk only to 127.0.0.1. In this process a name lookup of anything else fails at once, as on a
machine without network, and is recorded with every connection elsewhere (``sys.addaudithook``:
Python's ``socket.connect`` event); the test during which Engram's code tried fails
(``tests/conftest.py``). AstrBot's own fetches (model metadata at start, release notes, the notice of
its /help) are refused the same way but do not fail a test: they are not ours to change. Child
processes are not seen here: the live AstrBot (``tests/e2e/live.py``) gets a closed proxy instead."""

from __future__ import annotations

import ipaddress
import socket
import sys
from typing import Any

ASTRBOTS_OWN = frozenset({"models.dev", "models.opencode.ai", "api.soulter.top", "t2i.soulter.top",
                          "astrbot.app"})
_LOCAL_NAMES = {"localhost", "localhost.localdomain"}
attempts: list[tuple[str, str]] = []  # (what was tried, the host)
_lookup = socket.getaddrinfo


def _local(host: object) -> bool:
    if host is None or not isinstance(host, str | bytes):
        return True  # no host (a local bind) or a Unix socket path
    name = host.decode() if isinstance(host, bytes) else host
    if name.lower() in _LOCAL_NAMES or not name:
        return True
    try:
        return ipaddress.ip_address(name.split("%")[0]).is_loopback
    except ValueError:
        return False  # a name to look up elsewhere


def ours(tried: list[tuple[str, str]]) -> list[str]:
    """What of ``tried`` was not AstrBot's own fetching."""
    return sorted({what for what, host in tried if host not in ASTRBOTS_OWN})


def _getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
    if not _local(host):
        name = host.decode() if isinstance(host, bytes) else str(host)
        attempts.append((f"look up {name!r}", name))
        raise socket.gaierror(socket.EAI_NONAME, f"tests talk only to 127.0.0.1, not {name}")
    return _lookup(host, *args, **kwargs)


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event == "socket.connect":
        address = args[1]
        if isinstance(address, tuple) and address and not _local(address[0]):
            attempts.append((f"connect {address[0]}:{address[1]}", str(address[0])))


socket.getaddrinfo = _getaddrinfo
sys.addaudithook(_audit)
