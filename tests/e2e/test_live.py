"""Live smoke test: ``astrbot run`` for real, the plugin installed, one fact through the webchat API."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ..fake_openai import FakeOpenAI
from .harness import injected_text
from .live import LiveAstrBot

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


@pytest.fixture
def live(server: FakeOpenAI, tmp_path: Path) -> Iterator[LiveAstrBot]:
    bot = LiveAstrBot(tmp_path, server.base_url)
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
    try:
        first = live.new_session()
        live.chat(first, "My favourite mountain is Mount Ossa-Veltrin, I climbed it in June.")
        # A new webchat session is a new conversation: only a memory can bring the mountain back.
        # (Both sessions belong to the same dashboard user, i.e. the same private space.)
        before = len(server.chat_requests())
        answer = live.chat(live.new_session(), "Which mountain do I like best?")
        asked = [r for r in server.chat_requests()[before:] if "Which mountain" in injected_text(r)]
        assert '"type": "end"' in answer or "plain" in answer
        assert asked, "the question never reached the model"
        assert "Ossa-Veltrin" in injected_text(asked[-1])
        assert first  # the first session existed and was used
        # Engram's lines are AstrBot's: with time and level, in its log (and so in its WebUI console)
        start = [line for line in live.log_tail(100_000).splitlines() if "Engram: store " in line]
        assert len(start) == 1 and "[INFO]" in start[0] and "engram.db" in start[0], start
    except BaseException:
        print(f"---- astrbot run log (tail) ----\n{live.log_tail()}")
        raise
