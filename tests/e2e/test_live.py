"""Live smoke test: ``astrbot run`` for real, the plugin installed, one fact through the webchat API."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ..fake_openai import FakeOpenAI
from .harness import injected_text
from .live import LiveAstrBot

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


@pytest.fixture
def live(server: FakeOpenAI, tmp_path: Path, dashboard_port: int) -> Iterator[LiveAstrBot]:
    bot = LiveAstrBot(tmp_path, server.base_url, dashboard_port=dashboard_port)
    try:
        bot.setup()
        bot.start()
        bot.check_loaded()
        bot.login()
        yield bot
    except BaseException:
        print(f"---- astrbot run log (tail) ----\n{bot.log_tail()}")
        raise
    finally:
        bot.stop()


def test_fact_told_over_webchat_is_injected_into_a_later_request(live: LiveAstrBot,
                                                                  server: FakeOpenAI) -> None:
    def model(body: dict[str, Any]) -> str:
        """A model that knows the mountain only from what Engram injected into its request."""
        if "Which mountain" not in json.dumps(body.get("messages", [])):
            return "Noted."
        return "You like Mount Ossa-Veltrin best." if "Ossa-Veltrin" in injected_text(body) else "No idea."

    server.default_reply, default = model, server.default_reply  # type: ignore[assignment]
    try:
        told = live.chat(live.new_session(), "My favourite mountain is Mount Ossa-Veltrin, climbed in June.")
        assert '"data": "Noted."' in told  # the user reads the bot's answer
        # A new webchat session is a new conversation: only a memory can bring the mountain back.
        # (Both sessions belong to the same dashboard user, i.e. the same private space.)
        answer = live.chat(live.new_session(), "Which mountain do I like best?")
        assert '"data": "You like Mount Ossa-Veltrin best."' in answer, answer
        # Engram's lines are AstrBot's: with time and level, in its log (and so in its WebUI console)
        start = [line for line in live.log_tail(100_000).splitlines() if "Engram: store " in line]
        assert len(start) == 1 and "[INFO]" in start[0] and "engram.db" in start[0], start
        # the plugin's dashboard on the port picked for this run, not the default 8765
        assert f"Engram dashboard on http://127.0.0.1:{live.dashboard_port}/" in live.log_tail(100_000)
    except BaseException:
        print(f"---- astrbot run log (tail) ----\n{live.log_tail()}")
        raise
    finally:
        server.default_reply = default
