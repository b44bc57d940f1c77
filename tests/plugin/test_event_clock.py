"""A message taken in while this server's clock reads a time too early to be right (a machine at 1970
before NTP): it is dated by the platform's timestamp, and the bot's reply with it."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from astrbot_plugin_engram.plugin import events
from astrbot_plugin_engram.plugin.events import incoming_episodes, parse_message, reply_episode

from .conftest import event

BOOT = datetime(1970, 1, 1, 0, 3, tzinfo=timezone.utc)
SENT = 1_780_000_000  # 2026-05-28, as the platform's server stamped it


def at(monkeypatch: pytest.MonkeyPatch, now: datetime) -> None:
    """This server's clock reads ``now`` (however the module reads it)."""

    class Stopped(datetime):
        @classmethod
        def now(cls, tz: object = None) -> Stopped:  # type: ignore[override]
            return now  # type: ignore[return-value]

    monkeypatch.setattr(events, "now_utc", lambda: now, raising=False)
    monkeypatch.setattr(events, "datetime", Stopped)


def test_at_1970_a_message_and_the_reply_take_the_platforms_time(monkeypatch: pytest.MonkeyPatch) -> None:
    at(monkeypatch, BOOT)
    ev = event("what time is it?", "u1", "g7", timestamp=SENT)
    [ep] = incoming_episodes(ev, parse_message(ev))
    reply = reply_episode(ev, "almost noon")
    assert ep.time is not None and ep.time.timestamp() == SENT  # not 1970: its diary day, its "ago"
    assert reply is not None and reply.time is not None and reply.time.timestamp() == SENT


def test_with_a_right_clock_a_platform_ahead_is_still_held_to_now(monkeypatch: pytest.MonkeyPatch) -> None:
    now = datetime.fromtimestamp(SENT - 600, timezone.utc)
    at(monkeypatch, now)
    ev = event("what time is it?", "u1", "g7", timestamp=SENT)
    [ep] = incoming_episodes(ev, parse_message(ev))
    assert ep.time == now


def test_with_this_servers_clock_years_ahead_the_reply_stays_by_the_question(
        monkeypatch: pytest.MonkeyPatch) -> None:
    at(monkeypatch, datetime(2031, 6, 1, tzinfo=timezone.utc))
    ev = event("what time is it?", "u1", "g7", timestamp=SENT)
    [ep] = incoming_episodes(ev, parse_message(ev))
    reply = reply_episode(ev, "almost noon")
    assert ep.time is not None and ep.time.timestamp() == SENT
    assert reply is not None and reply.time is not None  # not in 2031: its diary day, its "ago"
    assert SENT <= reply.time.timestamp() <= SENT + 86400
