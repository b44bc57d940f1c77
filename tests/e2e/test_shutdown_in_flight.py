"""AstrBot stopped while twenty chats wait for the model: every line the plugin saw before the stop is
in the file once the shutdown returns, and the shutdown does not hang on the waiting replies."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from ..fake_openai import FakeOpenAI
from .harness import astrbot_root, episodes, free_port, write_plugin_config

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]


def wait_writable(db: Path) -> None:
    """Wait until nothing holds ``db``'s write lock (the next module's AstrBot migrates it at start)."""
    con = sqlite3.connect(db, timeout=60)
    try:
        con.execute("BEGIN IMMEDIATE")
        con.rollback()
    finally:
        con.close()


async def test_lines_in_flight_at_shutdown_are_all_written(server: FakeOpenAI) -> None:
    astrbot_root()
    from .bot import Bot

    bot = Bot(server)
    bot.install()
    write_plugin_config(bot.data, {"dashboard_port": free_port()})
    await bot.start()
    server.chat_delay = 3.0  # every reply is waiting for the model when the stop comes
    try:
        # twenty private chats: AstrBot runs one message of a chat at a time, so each has its own
        talks = [asyncio.create_task(bot.send(f"in flight {n}", f"p{n}")) for n in range(20)]
        for _ in range(200):  # until the plugin has seen all twenty (recording is queued, not written)
            await asyncio.sleep(0.05)
            if len(server.chat_requests()) >= 20:
                break
        assert len(server.chat_requests()) >= 20
        await bot.stop()
        await asyncio.wait_for(asyncio.gather(*talks, return_exceptions=True), 30)
    finally:
        server.chat_delay = 0.0
        for talk in talks:
            talk.cancel()
        await bot.stop()
        # the failed replies' conversation writes may still hold AstrBot's own database
        await asyncio.to_thread(wait_writable, bot.data / "data_v4.db")
    lines = [e["content"] for e in episodes(bot.data) if e["content"].startswith("in flight")]
    assert sorted(lines) == sorted(f"in flight {n}" for n in range(20))
