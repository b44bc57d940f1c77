"""The suite's network guard (``tests/_network_guard.py``) catches a reach beyond 127.0.0.1."""

from __future__ import annotations

import socket

import pytest

from . import _network_guard


def taken_back(before: int) -> list[str]:
    """What was tried since ``before``, taken out of the record (this test's own tries are on purpose)."""
    tried = _network_guard.ours(_network_guard.attempts[before:])
    del _network_guard.attempts[before:]
    return tried


def test_a_lookup_elsewhere_fails_at_once_and_is_caught() -> None:
    before = len(_network_guard.attempts)
    with pytest.raises(socket.gaierror, match="only to 127.0.0.1"):
        socket.getaddrinfo("example.com", 443)
    assert taken_back(before) == ["look up 'example.com'"]


def test_a_connection_to_an_address_elsewhere_is_caught() -> None:
    before = len(_network_guard.attempts)
    with socket.socket() as s:
        s.setblocking(False)
        s.connect_ex(("192.0.2.1", 9))  # TEST-NET-1: nothing answers there
    assert taken_back(before) == ["connect 192.0.2.1:9"]


def test_loopback_and_astrbots_own_fetches_do_not_count() -> None:
    before = len(_network_guard.attempts)
    assert socket.getaddrinfo("127.0.0.1", 80) and socket.getaddrinfo("localhost", 80)
    with pytest.raises(socket.gaierror):
        socket.getaddrinfo("models.dev", 443)  # refused, as offline, but AstrBot's, not ours
    assert taken_back(before) == []
