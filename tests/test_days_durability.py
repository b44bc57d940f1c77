"""The diary job killed between a day's diary and the inner state it moves: the next run moves the
state from that diary (it used to move only from a diary written in the same run, so the state
stayed where it was until the next day's diary)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

from astrbot_plugin_engram.memory import Engram, Episode, NoEmbedder
from astrbot_plugin_engram.memory.self.day_end import DaySettings, end_days
from astrbot_plugin_engram.memory.self.diary import diary_of, write_diary
from astrbot_plugin_engram.memory.self.inner_state import load_state

from .scripted_chat import ScriptedChat
from .test_diary import DAY, SH, at

ROOT = Path(__file__).resolve().parents[1]
NOW = at(5, 0, DAY + timedelta(days=1))
CHILD = """
import asyncio, os, signal, sys
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo
from astrbot_plugin_engram.memory import Engram, NoEmbedder
from astrbot_plugin_engram.memory.self.day_end import DaySettings, end_days
from astrbot_plugin_engram.memory.chat import ChatResult

class KilledAtTheState:
    name = "killed"
    async def complete(self, messages, *, json=False, timeout=60.0):
        if '"mood"' in messages[0]["content"]:  # the inner state's call
            print("diary written", flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
        return ChatResult('{"entry": "Ann said hello; a good day."}')

async def main(path, now):
    e = await Engram.open(path, NoEmbedder(), background=False)
    await end_days(e, KilledAtTheState(), DaySettings(tz=ZoneInfo("Asia/Shanghai")), now=now)
    print("finished", flush=True)

asyncio.run(main(sys.argv[1], datetime.fromisoformat(sys.argv[2])))
"""


async def test_a_kill_between_the_diary_and_the_inner_state_moves_it_on_the_next_run(tmp_path: Path) -> None:
    path = tmp_path / "engram.db"
    e = await Engram.open(path, NoEmbedder(), background=False)
    await e.record(Episode("web", "hello", "web:1", "Ann", time=at(12)))
    await e.close()
    done = await asyncio.to_thread(subprocess.run, [sys.executable, "-c", CHILD, str(path), NOW.isoformat()],
                                   cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode < 0 and done.stdout.split() == ["diary", "written"], done.stderr
    assert load_state(tmp_path) is None
    e = await Engram.open(path, NoEmbedder(), background=False)
    try:
        mood = {"mood": "cheerful", "valence": 0.7, "energy": 0.8, "on_mind": "the garden"}
        chat = ScriptedChat(json.dumps(mood))  # no diary call: the day's diary is there
        report = await end_days(e, chat, DaySettings(tz=SH), folder=tmp_path, now=NOW + timedelta(hours=1))
        assert not report.written and report.inner_state and "a good day" in chat.asked()
        state = load_state(tmp_path)
        assert state is not None and (state.mood, state.day) == ("cheerful", DAY.isoformat())
        again = await end_days(e, ScriptedChat(), DaySettings(tz=SH), folder=tmp_path,
                               now=NOW + timedelta(hours=2))
        assert not again.inner_state  # moved once from that diary: no call on the next runs
    finally:
        await e.close()


async def test_a_kill_after_a_forget_still_rewrites_a_diary_older_than_a_week(tmp_path: Path) -> None:
    """A forget erases the diary of each day it reaches; the day is written again from what is left
    right after (in the plugin). Killed in between (or forgotten from the command line, which has
    no model), a day older than the diary job's week of catch-up never had a diary again."""
    from .test_forget_durability import PERSON, kill_forget_at

    path, old = tmp_path / "engram.db", DAY - timedelta(days=30)
    e = await Engram.open(path, NoEmbedder(), background=False)
    await e.record_many([Episode("qq:group:7", "my code is 4417", PERSON, "Ming", time=at(10, 0, old)),
                         Episode("qq:group:7", "Bob says hello", "qq:bob", "Bob", time=at(11, 0, old))])
    await write_diary(e, ScriptedChat(json.dumps({"entry": "A code was told; Bob said hello."})), old,
                      tz=SH, folder=tmp_path)
    await e.close()
    await asyncio.to_thread(kill_forget_at, path, "committed")
    e = await Engram.open(path, NoEmbedder(), background=False)
    try:
        settings = DaySettings(tz=SH, inner_state=False)
        chat = ScriptedChat(json.dumps({"entry": "Bob said hello."}))
        report = await end_days(e, chat, settings, folder=tmp_path, now=NOW)
        diary = await diary_of(e, old, SH)
        assert diary is not None and diary.text == "Bob said hello." and len(diary.sources) == 1
        assert [r.day for r in report.written] == [old] and "4417" not in chat.asked()
        again = await end_days(e, ScriptedChat(), settings, folder=tmp_path, now=NOW)  # done: no call
        assert again.written == []
    finally:
        await e.close()
