"""Every /mem reply fits a chat message (REPLY_CHARS, 3,000 characters; QQ carries about 4,500), in
English and Chinese, on a store with long memories, many places and long names; a cut reply says how
many lines are left out and where to see them."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone

import pytest

from astrbot_plugin_engram.memory import Episode, Memory
from astrbot_plugin_engram.memory.model import PERSON_CHARS
from astrbot_plugin_engram.memory.text.words import MAX_TEXT
from astrbot_plugin_engram.plugin import tools as self_commands  # identity_propose, the model's tool
from astrbot_plugin_engram.plugin.commands.registry import COMMANDS
from astrbot_plugin_engram.plugin.config import Settings
from astrbot_plugin_engram.plugin.replies.fit import REPLY_CHARS
from astrbot_plugin_engram.plugin.service import EngramService

from .conftest import OWNER, FakeProvider, MakeService, event, request
from .test_self import DiaryContext, diary_jobs

LANGS = ["en", "zh"]
CUT = {"en": re.compile(r"\((\d+) more lines not shown: a chat message carries about 3,000 characters; "),
       "zh": re.compile(r"（还有 (\d+) 行没有显示：一条聊天消息大约只能放 3,000 个字符；")}
LONG_NAME = "小" * 300  # a display name as long as a platform lets through


def long_text(n: int, size: int = MAX_TEXT) -> str:
    return (f"memory {n} 记忆 " + "很长的一段话，讲了很多事情。" * 400)[:size]


async def mem(svc: EngramService, line: str) -> str:
    return await COMMANDS.dispatch(svc, event(line, OWNER, admin=True), line)


def service(make_service: MakeService, lang: str, **settings: object) -> EngramService:
    return make_service(Settings(owner_ids=(OWNER,), reply_language=lang, **settings))  # type: ignore[arg-type]


def fits(said: str, lang: str, cut: bool = True) -> int:
    """The reply fits; when ``cut``, it says how many lines are left out (returned)."""
    assert len(said) <= REPLY_CHARS, (len(said), said[-300:])
    found = CUT[lang].search(said)
    assert bool(found) == cut, said[-400:]
    return int(found.group(1)) if found else 0


async def many_memories(svc: EngramService, n: int, size: int = MAX_TEXT) -> list[int]:
    """``n`` memories of ``size`` characters, half of them public, half of the owner's chat."""
    mem_ = await svc.memory()
    scopes = ("public", "space:qq:private:owner1")
    return [await mem_.add_memory(Memory(long_text(i, size), scopes[i % 2])) for i in range(n)]


@pytest.mark.parametrize("lang", LANGS)
async def test_help_fits(make_service: MakeService, lang: str) -> None:

    said = await mem(service(make_service, lang), "mem help")
    assert len(said) <= REPLY_CHARS and "/mem diary" in said and "/mem forget-person" in said


@pytest.mark.parametrize("lang", LANGS)
async def test_a_list_page_of_long_memories_in_long_places_fits(make_service: MakeService, lang: str) -> None:
    svc = service(make_service, lang)
    await many_memories(svc, 12)
    said = await mem(svc, "mem list")
    assert fits(said, lang, cut=False) == 0 and said.count("\nm") == 10 and "--page 2" in said
    named = await mem(svc, f"mem list {LONG_NAME} --kind fact")
    assert len(named) <= REPLY_CHARS and named.count(LONG_NAME) == 0  # the name as typed, cut


@pytest.mark.parametrize("lang", LANGS)
async def test_recall_of_fifty_long_memories_is_cut_and_says_where_the_rest_is(
        make_service: MakeService, lang: str) -> None:
    svc = service(make_service, lang, recall_k=50)
    await many_memories(svc, 50)
    said = await mem(svc, "mem recall memory 记忆")
    left = fits(said, lang)
    assert left > 0 and said.count(" score " if lang == "en" else " 得分 ") + left >= 20
    assert ("the dashboard shows them all" if lang == "en" else "仪表盘里可以看到全部") in said


@pytest.mark.parametrize("lang", LANGS)
async def test_why_after_an_injection_of_many_memories_fits(make_service: MakeService, lang: str) -> None:
    svc = service(make_service, lang, recall_k=50, inject_budget_tokens=8000)
    await many_memories(svc, 50, size=300)
    inj = await svc.inject(event("memory 记忆", OWNER), request("memory 记忆"))
    assert inj is not None and len(inj.injected) > 10
    fits(await mem(svc, "mem why"), lang)


@pytest.mark.parametrize("lang", LANGS)
async def test_show_of_a_long_memory_with_many_long_sources_fits(make_service: MakeService,
                                                                 lang: str) -> None:
    svc = service(make_service, lang)
    engram = await svc.memory()
    now = datetime.now(timezone.utc)
    long_id = f"qq:{LONG_NAME}"[:PERSON_CHARS]  # as long as a person id may be
    sources = [await engram.record(Episode("qq:private:owner1", long_text(i), long_id, LONG_NAME,
                                           time=now - timedelta(minutes=i))) for i in range(30)]
    people = tuple(f"qq:{i}" * 20 for i in range(30))
    mid = await engram.add_memory(Memory(long_text(99), "public", subjects=people, sources=tuple(sources)))
    said = await mem(svc, f"mem show m{mid}")
    assert fits(said, lang) > 0  # sources left out, counted
    assert "memory 99 记忆" in said and ("created" in said if lang == "en" else "创建于" in said)
    assert ("(cut: " if lang == "en" else "（已截断：") in said  # the text itself cut, and where it is whole
    episode = await mem(svc, f"mem show e{sources[0]}")
    assert len(episode) <= REPLY_CHARS and ("/mem forget e" in episode)


@pytest.mark.parametrize("lang", LANGS)
async def test_twenty_long_proposals_fit(make_service: MakeService, lang: str) -> None:
    svc = service(make_service, lang)
    for i in range(20):
        answer = await self_commands.identity_propose(svc, event("x", OWNER), f"change {i} " + "变" * 990,
                                                      "because " + "因" * 480)
        assert answer.startswith("Proposed")
    fits(await mem(svc, "mem proposals"), lang)


@pytest.mark.parametrize("lang", LANGS)
async def test_a_long_diary_is_cut_and_says_where_it_is_whole(make_service: MakeService, lang: str) -> None:
    entry = "今天和朋友聊了很久的茶。" * 450  # 5,400 characters (a diary takes up to 6,000)
    answer = json.dumps({"entry": entry}, ensure_ascii=False)
    ctx = DiaryContext(chats=[FakeProvider("c")], answers=[answer] * 3)
    svc = make_service(Settings(owner_ids=(OWNER,), timezone="UTC", reply_language=lang), ctx)
    async with diary_jobs(svc, "tea this afternoon?") as (_, noon):
        said = await mem(svc, f"mem diary {noon.date()}")
    assert len(said) <= REPLY_CHARS and "今天和朋友聊了很久的茶。" in said
    assert f"diary/{noon.date()}.md" in said and (
        "(cut: " if lang == "en" else "（已截断：") in said


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("line", ["mem show " + "x" * 5000, "mem list --page " + "9" * 5000,
                                  "mem " + "y" * 5000, "mem scope m1 space:" + "z" * 5000,
                                  "mem forget-place " + "p" * 5000, "mem consolidate " + "c" * 5000,
                                  "mem diary " + "d" * 5000])
async def test_a_pasted_page_as_an_argument_gets_a_short_answer(make_service: MakeService, lang: str,
                                                                  line: str) -> None:
    svc = service(make_service, lang)
    await (await svc.memory()).add_memory(Memory("Alice's tea is oolong", "public"))
    assert len(await mem(svc, line)) < 600
