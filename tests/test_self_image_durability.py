"""A kill between the self-image's two writes (its file, injected into every reply, and its memory,
recalled and followed by forgets) leaves them apart; the next open puts them together again."""

from __future__ import annotations

import errno
import json
import subprocess
import sys
from datetime import date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from astrbot_plugin_engram.memory import Episode, NoEmbedder
from astrbot_plugin_engram.memory.self.diary import write_diary
from astrbot_plugin_engram.memory.self.identity import IdentityFolder
from astrbot_plugin_engram.memory.self.self_image import current_self_image, write_self_image

from .conftest import EngramOpener
from .scripted_chat import ScriptedChat

ROOT = Path(__file__).resolve().parents[1]
SH = ZoneInfo("Asia/Shanghai")
DAY = date(2026, 11, 30)
OLD, NEW = "I am a patient listener.", "I have grown fond of long walks and plans."


async def a_self_image(open_engram: EngramOpener, folder: Path) -> None:
    e = await open_engram(NoEmbedder())
    await e.record(Episode("qq:group:7", "anyone up for hiking on Saturday?", "qq:1", "Bob",
                           time=datetime(2026, 11, 30, 10, tzinfo=SH)))
    chat = ScriptedChat(json.dumps({"entry": "Bob planned a hike."}))
    await write_diary(e, chat, DAY, tz=SH, folder=folder)
    await write_self_image(e, ScriptedChat(json.dumps({"self_image": OLD})), folder=folder)
    await e.close()


def kill_between(path: Path) -> None:
    child = subprocess.Popen(  # noqa: ASYNC220  (the parent only waits for one line, then kills)
        [sys.executable, "-m", "tests._self_image_child", str(path), NEW],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert child.stdout is not None
        line = child.stdout.readline().decode().strip()
        assert line == "between", line
    finally:
        child.kill()
        child.wait()


async def test_a_kill_between_the_self_image_file_and_its_memory_is_repaired_at_the_next_open(
        db_path: Path, open_engram: EngramOpener) -> None:
    """The file was written first and the memory second: killed between, the bot injected the new
    self-image while recall and forgets saw the old memory (a forget of what the new one drew on
    left the file holding it), and nothing ever repaired that."""
    folder = db_path.parent
    await a_self_image(open_engram, folder)
    kill_between(db_path)
    e = await open_engram(NoEmbedder())
    memory = await current_self_image(e)
    on_file = IdentityFolder(folder).self_image().text
    assert memory is not None and on_file == memory.text
    assert on_file in (OLD, NEW)
    if on_file == NEW:  # the earlier version is kept in the history, once
        assert [p.read_text("utf-8").strip() for p in IdentityFolder(folder).history("self-image")] == [OLD]


async def test_a_self_image_file_that_could_not_be_written_follows_its_memory_later(
        db_path: Path, open_engram: EngramOpener, monkeypatch: pytest.MonkeyPatch) -> None:
    """A full disk when the file is written (the memory committed): the next open writes it."""
    folder = db_path.parent
    await a_self_image(open_engram, folder)
    e = await open_engram(NoEmbedder())

    def full(*_: object, **__: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as m:
        m.setattr(IdentityFolder, "replace", full)
        with pytest.raises(OSError):
            await write_self_image(e, ScriptedChat(json.dumps({"self_image": NEW})), folder=folder)
    await e.close()
    e = await open_engram(NoEmbedder())
    current = await current_self_image(e)
    assert current is not None and IdentityFolder(folder).self_image().text == NEW == current.text


async def test_a_self_image_file_edited_by_hand_is_left_as_it_is(db_path: Path,
                                                                  open_engram: EngramOpener) -> None:
    folder = db_path.parent
    await a_self_image(open_engram, folder)
    IdentityFolder(folder).image_path.write_text("I wrote this myself.\n", "utf-8")
    await open_engram(NoEmbedder())
    assert IdentityFolder(folder).self_image().text == "I wrote this myself."
