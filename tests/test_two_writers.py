"""The bot and the command line on one store file at once, each its own process: what one applies
the other does not apply again (no duplicate), and neither loses the other's writes."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import TypeVar

import pytest

from astrbot_plugin_engram.memory import Engram, Episode, NoEmbedder, OpenAIChat, StoreError
from astrbot_plugin_engram.memory.consolidation import ConsolidationSettings, Consolidator
from astrbot_plugin_engram.memory.self.diary import write_diary
from astrbot_plugin_engram.memory.store.sqlite import transactions

from .fake_openai import FakeOpenAI

ROOT = Path(__file__).resolve().parents[1]
SPACE = "qq:group:1"
T = TypeVar("T")


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



async def while_the_cli_waits(child: subprocess.Popen[str], server: FakeOpenAI,
                              work: Callable[[OpenAIChat], Awaitable[T]]) -> tuple[T, str, str]:
    """``work`` by the bot while ``child`` (the command line) waits for the model's answer; then the
    child's output once it ends (killed also when the test fails here)."""
    try:
        await wait_for_chat_requests(server, 1, child)  # the CLI waits for its answer now
        chat = OpenAIChat("m", server.base_url)
        try:
            done = await work(chat)
        finally:
            await chat.close()
        out, err = await asyncio.to_thread(child.communicate, timeout=60)
        return done, out, err
    finally:
        child.kill()
        child.wait()

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
        report, out, err = await while_the_cli_waits(
            child, fake_openai, lambda chat: Consolidator(bot, chat, ConsolidationSettings()).run(force=True))
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
        mine, out, err = await while_the_cli_waits(
            child, fake_openai, lambda chat: write_diary(bot, chat, day, tz=timezone.utc))
        assert mine.status == "written" and child.returncode == 0, err
        assert "diary exists" in out, out  # the CLI found the bot's entry when it came to write
        entries = await bot.memories(await bot.store.memory_ids_of_kind("diary"))
        assert [m.text for m in entries.values()] == ["The bot's entry."]
        assert (tmp_path / "diary" / "2026-05-01.md").read_text("utf-8").endswith("The bot's entry.\n")
    finally:
        await bot.close()


LOCKER = """
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
db.execute("COMMIT")
"""


async def test_messages_recorded_while_another_process_holds_the_file_longer_than_the_busy_timeout(
        tmp_path: Path) -> None:
    """Another process writing for longer than SQLite's busy timeout (5 s: a forget of a big place
    from the command line, a reindex): the bot's messages of that moment failed with "database is
    locked" and were dropped. They wait for the file now, and are all written."""
    path = tmp_path / "engram.db"
    bot = await Engram.open(path, NoEmbedder(), background=False)
    try:
        await bot.record(Episode(SPACE, "before"))
        locker = subprocess.Popen(  # noqa: ASYNC220  (waited for in a thread below)
            [sys.executable, "-c", LOCKER, str(path), "7"], stdout=subprocess.PIPE, text=True)
        try:
            assert locker.stdout is not None
            assert (await asyncio.to_thread(locker.stdout.readline)).strip() == "locked"
            ids = await asyncio.gather(*(bot.record(Episode(SPACE, f"said while locked {i}"))
                                         for i in range(3)))
            assert await asyncio.to_thread(locker.wait, 30) == 0
        finally:
            locker.kill()
            locker.wait()
        found = await bot.store.get_episodes(list(ids))
        assert sorted(e.content for e in found.values()) == [f"said while locked {i}" for i in range(3)]
    finally:
        await bot.close()


async def test_a_file_locked_for_too_long_is_a_clear_error_not_a_hang(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(transactions, "BUSY_WAIT", 1.0)
    path = tmp_path / "engram.db"
    bot = await Engram.open(path, NoEmbedder(), background=False)
    try:
        locker = subprocess.Popen(  # noqa: ASYNC220  (waited for in a thread below)
            [sys.executable, "-c", LOCKER, str(path), "60"], stdout=subprocess.PIPE, text=True)
        try:
            assert locker.stdout is not None
            assert (await asyncio.to_thread(locker.stdout.readline)).strip() == "locked"
            with pytest.raises(StoreError, match="locked by another writer"):
                await asyncio.wait_for(bot.record(Episode(SPACE, "said while locked")), 30)
        finally:
            locker.kill()
            locker.wait()
        assert await bot.record(Episode(SPACE, "said after")) > 0  # the file is usable again
    finally:
        await bot.close()
