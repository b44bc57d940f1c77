"""Regression tests for what the fuzzer (tests/fuzzing.py, bench/fuzz.py) found, one per finding."""

from __future__ import annotations

import json
from datetime import date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from astrbot_plugin_engram.memory import Engram, Episode
from astrbot_plugin_engram.memory.self.diary import diary_of, write_diary
from astrbot_plugin_engram.memory.self.identity import IdentityFolder
from astrbot_plugin_engram.memory.self.proposals import Proposals
from astrbot_plugin_engram.memory.self.self_image import write_self_image

from .scripted_chat import ScriptedChat

SH = ZoneInfo("Asia/Shanghai")
DAY = date(2026, 11, 30)


async def test_a_diary_answer_with_half_an_emoji_is_written_not_crashed(engram: Engram,
                                                                        tmp_path: Path) -> None:
    """A model's JSON may hold ``"\\ud83d"`` (a lone surrogate: half an emoji). Before: the diary's memory
    was stored and writing its file raised UnicodeEncodeError out of the job; the day's file missing."""
    await engram.record(Episode("qq:group:7", "we hiked to the lake", "qq:1", "Bob",
                                time=datetime(2026, 11, 30, 10, tzinfo=SH)))
    answer = '{"entry": "A good day at the lake \\ud83d with Bob."}'
    assert "\\ud83d" in answer and json.loads(answer)["entry"].count("\ud83d") == 1
    r = await write_diary(engram, ScriptedChat(answer), DAY, tz=SH, folder=tmp_path)
    kept = await diary_of(engram, DAY, SH)
    assert kept is not None and kept.text == "A good day at the lake \ufffd with Bob." == r.text
    files = list(tmp_path.rglob("2026-11-30*.md"))  # noqa: ASYNC240 (the test reads what was written)
    assert len(files) == 1 and "A good day at the lake \ufffd with Bob." in files[0].read_text("utf-8")


async def test_a_self_image_answer_with_half_an_emoji_is_written(engram: Engram, tmp_path: Path) -> None:
    await engram.record(Episode("qq:group:7", "we hiked to the lake", "qq:1", "Bob",
                                time=datetime(2026, 11, 30, 10, tzinfo=SH)))
    await write_diary(engram, ScriptedChat(json.dumps({"entry": "A day at the lake."})), DAY, tz=SH,
                      folder=tmp_path)
    answer = '{"self_image": "I like lakes \\udc00."}'
    r = await write_self_image(engram, ScriptedChat(answer), folder=tmp_path)
    assert r.text == "I like lakes \ufffd."
    assert "I like lakes \ufffd." in (tmp_path / "identity" / "self-image.md").read_text("utf-8")


async def test_a_mem_reply_never_carries_half_an_emoji(tmp_path: Path) -> None:
    """``/mem recall`` echoes its query: a lone surrogate in it (half an emoji) went back in a reply no
    platform can send (encoding it to UTF-8 raised)."""
    from astrbot_plugin_engram.plugin.commands.registry import COMMANDS
    from astrbot_plugin_engram.plugin.config import Settings
    from astrbot_plugin_engram.plugin.providers import Providers
    from astrbot_plugin_engram.plugin.service import EngramService

    from .conftest import HashEmbedder
    from .plugin.conftest import OWNER, FakeContext, event

    s = Settings(owner_ids=(OWNER,))
    svc = EngramService(s, tmp_path / "data", Providers(FakeContext(), s.embedding_provider_id,
                                                        s.chat_provider_id), embedder=HashEmbedder())
    try:
        line = "mem recall tea \udc00"
        said = await COMMANDS.dispatch(svc, event("mem recall tea", OWNER, admin=True), line)
        said.encode("utf-8")
        assert "tea \ufffd" in said
    finally:
        await svc.close()


async def test_a_name_with_half_an_emoji_is_looked_up_not_a_crash(tmp_path: Path) -> None:
    """bench/fuzz.py, tools, 2026-12-03 (trust3): ``memory_remember`` about "\\ud83d" (the model's broken
    emoji) reached SQLite through ``people.named_in``: UnicodeEncodeError, the tool answered "failed"."""
    from .conftest import HashEmbedder

    e = await Engram.open(tmp_path / "engram.db", HashEmbedder(), background=False)
    try:
        assert await e.people.named_in("qq:group:1", "\ud83d") == []
        assert await e.people.named("a\udc00") == []
        assert await e.people.mentioned_in("qq:group:1\ud83d", "hi \ud83d") == []
    finally:
        await e.close()


def test_an_identity_proposal_with_half_an_emoji_is_kept_not_a_crash(tmp_path: Path) -> None:
    """The model's ``identity_propose`` may carry a lone surrogate (half an emoji). Before: writing the
    proposals file raised UnicodeEncodeError out of the tool (found by bench/fuzz.py at 64k inputs)."""
    proposals = Proposals(IdentityFolder(tmp_path))
    p = proposals.propose("Call the owner Bart \udc00", "he asked \ud83d", "qq:group:g1", person="qq:1\udc00")
    kept = proposals.all()
    assert [(k.id, k.change, k.reason) for k in kept] == [
        (p.id, "Call the owner Bart \ufffd", "he asked \ufffd")]
    assert "\\udc00" not in proposals.path.read_text("utf-8") and p.person == "qq:1\ufffd"
