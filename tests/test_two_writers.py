"""The bot and the command line on one store file at once, each its own process: what one applies
the other does not apply again (no duplicate), and neither loses the other's writes."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

from astrbot_plugin_engram.memory import Engram, Episode, NoEmbedder, OpenAIChat
from astrbot_plugin_engram.memory.consolidation import ConsolidationSettings, Consolidator
from astrbot_plugin_engram.memory.diary import write_diary

from .fake_openai import FakeOpenAI

ROOT = Path(__file__).resolve().parents[1]
SPACE = "qq:group:1"


def cli(path: Path, *argv: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "astrbot_plugin_engram.memory", "--db", str(path),
                             "--embedder", "none", *argv], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "ENGRAM_CHAT_API_KEY": "k"})


async def wait_for_chat_requests(server: FakeOpenAI, n: int, child: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while len(server.chat_requests()) < n:
        assert child.poll() is None, child.communicate()
        assert time.monotonic() < deadline, "the child never asked the model"
        await asyncio.sleep(0.05)


async def test_a_batch_consolidated_by_the_cli_while_the_bot_does_it_is_applied_once(
        tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    """Both read the place's cursor, both ask the model; the second to commit used to apply the same
    batch again (every memory twice, each citing the same lines)."""
    path = tmp_path / "engram.db"
    bot = await Engram.open(path, NoEmbedder(), background=False)
    try:
        await bot.record_many([Episode(SPACE, f"line {i}: Ming likes oolong tea", actor="qq:ming",
                                       actor_name="Ming") for i in range(5)])
        answer = json.dumps({"actions": [{"op": "add", "text": "Ming likes oolong tea", "about": ["Ming"],
                                          "sources": ["e1"], "scope": None}]})
        fake_openai.replies += [{"delay": 4, "content": answer}, answer]  # the CLI's answer comes last
        child = cli(path, "consolidate", "--chat-base-url", fake_openai.base_url, "--chat-model", "m")
        try:
            await wait_for_chat_requests(fake_openai, 1, child)  # the CLI waits for its answer now
            chat = OpenAIChat("m", fake_openai.base_url)
            try:
                report = await Consolidator(bot, chat, ConsolidationSettings()).run(force=True)
            finally:
                await chat.close()
            out, err = await asyncio.to_thread(child.communicate, timeout=60)
        finally:
            child.kill()
            child.wait()
        assert report.added == 1 and child.returncode == 0, err
        assert "0 added" in out, out  # the CLI saw the batch taken meanwhile and applied nothing
        found = await bot.memories(await bot.store.memory_ids_of_kind("fact"))
        assert [m.text for m in found.values()] == ["Ming likes oolong tea"]
    finally:
        await bot.close()


async def test_a_day_written_by_the_cli_while_the_bot_writes_it_has_one_diary(
        tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    """Both found no diary of the day and asked the model; both used to add one: two diary
    entries of one day, each recalled in the owner's chat, the file holding whichever came last."""
    path = tmp_path / "engram.db"
    day = date(2026, 5, 1)
    bot = await Engram.open(path, NoEmbedder(), background=False)
    try:
        morning = datetime(2026, 5, 1, 10, tzinfo=timezone.utc)
        await bot.record_many([Episode(SPACE, f"line {i}: Ming likes oolong tea", actor="qq:ming",
                                       actor_name="Ming", time=morning + timedelta(minutes=i))
                               for i in range(5)])
        fake_openai.replies += [{"delay": 4, "content": json.dumps({"entry": "The CLI's entry."})},
                                json.dumps({"entry": "The bot's entry."})]
        child = cli(path, "diary", "--date", day.isoformat(), "--timezone", "UTC",
                    "--chat-base-url", fake_openai.base_url, "--chat-model", "m")
        try:
            await wait_for_chat_requests(fake_openai, 1, child)
            chat = OpenAIChat("m", fake_openai.base_url)
            try:
                mine = await write_diary(bot, chat, day, tz=timezone.utc)
            finally:
                await chat.close()
            out, err = await asyncio.to_thread(child.communicate, timeout=60)
        finally:
            child.kill()
            child.wait()
        assert mine.status == "written" and child.returncode == 0, err
        assert "diary exists" in out, out  # the CLI found the bot's entry when it came to write
        entries = await bot.memories(await bot.store.memory_ids_of_kind("diary"))
        assert [m.text for m in entries.values()] == ["The bot's entry."]
        assert (tmp_path / "diary" / "2026-05-01.md").read_text("utf-8").endswith("The bot's entry.\n")
    finally:
        await bot.close()
