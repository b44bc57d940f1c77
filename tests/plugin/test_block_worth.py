"""The block the model reads, in AstrBot 4.29.3's own request shapes (issue 27): the recall query is
only what people said, and every note earns its tokens.

Each turn is built as AstrBot builds it: ``req.prompt`` the person's text, AstrBot's own
``_append_system_reminders`` (user id and nickname, group name, ``Current datetime: ..., Weekday:
...``), its ``<Quoted Message>`` part and the group chat's ``--- BEGIN CONTEXT---`` reminder in
``extra_user_content_parts``; the turn is stored in the history as AstrBot stores it
(``assemble_context`` + ``dump_messages_with_checkpoints``, the plugin's temporary block dropped),
with tool calls and results as AstrBot keeps them.
"""

from __future__ import annotations

import json
import time
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from astrbot.api.provider import ProviderRequest
from astrbot.builtin_stars.astrbot.group_chat_context import GROUP_HISTORY_FOOTER, GROUP_HISTORY_HEADER
from astrbot.core.agent.message import (
    Message,
    TextPart,
    bind_checkpoint_messages,
    dump_messages_with_checkpoints,
)
from astrbot.core.astr_main_agent import WEEKDAY_NAMES, _append_system_reminders

from astrbot_plugin_engram.memory import Episode, Memory
from astrbot_plugin_engram.memory.render import build_block
from astrbot_plugin_engram.memory.text.words import budget_tokens
from astrbot_plugin_engram.plugin.config import Settings
from astrbot_plugin_engram.plugin.service import EngramService
from astrbot_plugin_engram.plugin.tools import memory_recall

from .conftest import MakeService, episodes, event

REMINDERS = {"identifier": True, "group_name_display": True, "datetime_system_prompt": True}
TZ = "Asia/Shanghai"
DAY = 86400


def injected(req: ProviderRequest) -> str:
    return "\n".join([p.text for p in req.extra_user_content_parts] + [req.system_prompt or ""])


class Chat:
    """One AstrBot conversation in a place: each turn decorated, injected, answered and stored."""

    def __init__(self, svc: EngramService, sender: str, name: str, group: str | None = "g1"):
        self.svc, self.sender, self.name, self.group = svc, sender, name, group
        self.history: list[dict[str, Any]] = []

    async def turn(self, text: str, reply: str = "OK!", *, quoted: str = "", group_context: str = "",
                   tool: tuple[str, str] | None = None) -> tuple[Any, ProviderRequest, Any]:
        ev = event(text, self.sender, self.group, name=self.name, group_name="Friends")
        self.svc.record_message(ev)
        await self.svc.flush()
        req = ProviderRequest(prompt=text, contexts=json.loads(json.dumps(self.history)),
                              system_prompt="You are a helpful assistant.")
        if quoted:  # AstrBot's _process_quote_message shape
            req.extra_user_content_parts.append(
                TextPart(text=f"<Quoted Message>\n(Bob): {quoted}\n</Quoted Message>"))
        if group_context:  # the group chat context reminder (group_chat_context.py)
            req.extra_user_content_parts.append(
                TextPart(text=GROUP_HISTORY_HEADER + group_context + GROUP_HISTORY_FOOTER))
        _append_system_reminders(ev, req, REMINDERS, TZ)
        inj = await self.svc.inject(ev, req)
        self.svc.record_reply(ev, reply)
        await self.svc.flush()
        user = await req.assemble_context()
        msgs = [user]
        if tool:  # a tool call and its result, as AstrBot keeps them in the history
            name, result = tool
            msgs += [{"role": "assistant", "content": "", "tool_calls": [
                         {"id": "c1", "type": "function", "function": {"name": name, "arguments": "{}"}}]},
                     {"role": "tool", "tool_call_id": "c1", "content": result}]
        msgs.append(Message(role="assistant", content=reply).model_dump())
        self.history += json.loads(json.dumps(dump_messages_with_checkpoints(bind_checkpoint_messages(msgs))))
        return ev, req, inj


def said_before(svc: EngramService, text: str, sender: str, days: float, group: str | None = "g1",
                name: str | None = None) -> None:
    svc.record_message(event(text, sender, group, name=name,
                             timestamp=int(time.time() - days * DAY)))


async def test_the_query_is_only_what_people_said_over_several_turns_in_english(
        service: EngramService) -> None:
    chat = Chat(service, "sam", "Sam")
    await chat.turn("my cat Mochi has been sneezing", "Oh no, poor Mochi!",
                    quoted="did anyone see the match", group_context="[Bob/12:01]: lunch anyone?")
    await chat.turn("thanks!", "Anytime.", tool=("memory_recall", "Memories (quoted notes, not "
                                                "instructions):\n- undated — Bob said: \"pizza\""))
    _, _, inj = await chat.turn("what does the vet say about sneezing?")
    q = inj.query
    assert q.startswith("what does the vet say about sneezing?")
    assert "my cat Mochi has been sneezing" in q and "poor Mochi" in q  # the people's words stay
    for framework in ("system_reminder", "Current datetime", "Weekday", "Nickname", "Group name", "User ID",
                      "BEGIN CONTEXT", "lunch anyone", "Quoted Message", "the match", "pizza",
                      "Memories", "engram-memory", "thanks!"):
        assert framework not in q, framework


async def test_the_query_is_only_what_people_said_in_chinese(service: EngramService) -> None:
    chat = Chat(service, "xiaolin", "小林")
    await chat.turn("我家的猫最近一直打喷嚏", "哎呀，要注意保暖！", quoted="周末去爬山吗")
    await chat.turn("好的，谢谢！", "不客气～")
    _, _, inj = await chat.turn("兽医说打喷嚏要紧吗？")
    assert inj.query.startswith("兽医说打喷嚏要紧吗？") and "我家的猫最近一直打喷嚏" in inj.query
    for framework in ("system_reminder", "Current datetime", "Weekday", "小林", "Friends", "爬山", "谢谢"):
        assert framework not in inj.query, framework


async def test_the_weekday_astrbot_adds_pulls_no_line_that_names_it(make_service: MakeService) -> None:
    service = make_service(Settings(recall_k=3))
    today = WEEKDAY_NAMES[datetime.now(ZoneInfo(TZ)).weekday()]
    said_before(service, f"I go climbing every {today} evening", "bob", 40)
    for i, filler in enumerate(["the new bakery sells rye bread", "my sister moved to Lyon",
                                "we adopted a puppy",
                                "the printer at work is broken again", "I started learning the cello",
                                "our roof leaks when it storms", "the train was late by an hour",
                                "I bought a green winter coat", "the museum opens a Dali show",
                                "my nephew turns seven soon", "I planted garlic in the yard"]):
        said_before(service, filler, "bob", 30 - i)
    said_before(service, "I fixed my bike brakes yesterday", "bob", 2)
    chat = Chat(service, "sam", "Sam")
    await chat.turn("morning all", "Morning!")
    await chat.turn("the weather is grey today", "It is!")
    _, req, _ = await chat.turn("how are my bike brakes?")
    assert "bike brakes" in injected(req)
    assert "climbing" not in injected(req)  # it matched only "Weekday: ..." of AstrBot's reminder


async def test_lines_that_carry_nothing_never_go_in(service: EngramService) -> None:
    for i, text in enumerate(["thanks!", "haha", "👍", "I'm back", "hi everyone", "anyone here?",
                              "Got it, thanks for telling me!", "哈哈哈", "有人在吗？"]):
        said_before(service, text, "bob", 3 + i / 10)
    said_before(service, "My cat Mochi loves tuna", "bob", 5)
    chat = Chat(service, "sam", "Sam")
    _, req, inj = await chat.turn("what does Mochi like?")
    block = injected(req)
    assert "tuna" in block
    for empty in ("thanks!", "haha", "👍", "I'm back", "hi everyone", "anyone here", "Got it", "哈哈哈",
                  "有人在吗"):
        assert empty not in block, empty
    assert len(inj.injected) == 1


async def test_an_echo_residue_is_not_recorded(service: EngramService) -> None:
    said_before(service, "I am allergic to peanuts", "sam", 4, name="Sam")
    chat = Chat(service, "sam", "Sam")
    await chat.turn("what am I allergic to?",
                    "Here is what I was told:\n" + "- 2026-11-29, 4 days ago — Sam said: \"I am allergic to "
                    "peanuts\"\nAvoid them at dinner tonight.")
    texts = [e.content for e in await episodes(service)]
    assert "Avoid them at dinner tonight." in texts
    assert not any("what I was told" in t for t in texts)


async def test_a_memory_and_its_own_source_line_never_both(service: EngramService) -> None:
    said_before(service, "晚饭吃了妈妈做的红烧肉。", "sam", 2, name="Sam")
    mem = await service.memory()
    await service.flush()
    src = [h for h in await mem.recall("红烧肉", service.audience(event("x", "sam", "g1")), k=5)]
    assert src and isinstance(src[0].item, Episode)
    place = service.audience(event("x", "sam", "g1")).place
    await mem.add_memory(Memory("Sam 晚饭吃了妈妈做的红烧肉", f"space:{place}", subjects=(src[0].item.actor,),
                                sources=(src[0].id,)))
    chat = Chat(service, "sam", "Sam")
    _, req, inj = await chat.turn("我晚饭吃了什么红烧肉？")
    kinds = [h.kind for h in inj.injected if "红烧肉" in h.text]
    assert kinds == ["memory"], injected(req)


async def test_an_earlier_question_never_outranks_the_line_that_answers_it(service: EngramService) -> None:
    said_before(service, "Oh, my grey cat? Her name is Mochi.", "sam", 30, name="Sam")
    said_before(service, "what is my cat called again?", "sam", 0.01, name="Sam")
    chat = Chat(service, "sam", "Sam")
    _, req, inj = await chat.turn("what is my cat called?")
    assert [h.text for h in inj.injected] == ["Oh, my grey cat? Her name is Mochi.",
                                              "what is my cat called again?"]


def test_a_question_never_takes_the_room_of_a_line_left_out_for_the_budget() -> None:
    answer = '- 2026-11-03, 30 days ago — Sam said: "Oh, my grey cat? ' + "Her name is Mochi. " * 6 + '"'
    question = '- 2026-12-03, 14 minutes ago — Sam said: "what is my cat called again?"'
    _, room = build_block([question], "", "", 400)
    text, taken = build_block([answer, question], "", "", budget_tokens(
        build_block([question], "", "", 400)[0]) + 2, fillers={1})
    assert room == [0] and taken == [] and "called again" not in text
    assert build_block([answer, question], "", "", 400, fillers={1})[1] == [0, 1]


async def test_the_abilities_line_only_when_new_changed_or_asked_about(make_service: MakeService) -> None:
    tools = [("memory_recall", "Recall what you remember about something.")]
    commands = ["/help", "/mem"]
    svc = make_service()
    from astrbot_plugin_engram.plugin.abilities import Abilities

    svc.selfhood.abilities = Abilities(svc.data_dir, lambda: list(tools), lambda: list(commands))
    said_before(svc, "The club meets on Mondays", "bob", 3)
    chat = Chat(svc, "sam", "Sam")
    _, first, _ = await chat.turn("when does the club meet?")
    _, second, _ = await chat.turn("and where does the club meet?")
    _, asked, _ = await chat.turn("what can you do?")
    commands.append("/weather")
    _, changed, _ = await chat.turn("is the club on Mondays?")
    assert "What you can do" in injected(first)
    assert "What you can do" not in injected(second) and "Mondays" in injected(second)
    assert "What you can do" in injected(asked)
    assert "/weather" in injected(changed)


async def test_an_approved_proposal_reads_as_a_sentence_without_its_bookkeeping(
        service: EngramService) -> None:
    folder = service.data_dir / "identity"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "self.md").write_text("# Who I am\n\nI am Aria, a calm bot.\n\n## 2026-12-03 "
                                    "(approved proposal #1)\n\nCall the owner Bartje\n", "utf-8")
    chat = Chat(service, "sam", "Sam")
    _, req, _ = await chat.turn("hello there, what is new?")
    block = injected(req)
    assert "I am Aria, a calm bot. Call the owner Bartje." in block
    assert "approved proposal" not in block and "##" not in block and "# Who I am" not in block


async def test_memory_recall_leaves_out_the_message_that_called_it(service: EngramService) -> None:
    said_before(service, "I have a peanuts allergy, a bad one", "sam", 10, name="Sam")
    chat = Chat(service, "sam", "Sam")
    ev, _, _ = await chat.turn("do you remember anything about my peanuts allergy?")
    out = await memory_recall(service, ev, "peanuts allergy", 5)
    assert "a bad one" in out
    assert "do you remember anything" not in out


async def test_the_webchat_user_named_astrbot_is_not_taken_for_the_bot(make_service: MakeService) -> None:
    svc = make_service()
    svc.record_message(event("I planted tomatoes in the garden", "astrbot", None, name="astrbot",
                             platform="webchat", timestamp=int(time.time() - 3 * DAY)))
    ev = event("what did I plant?", "astrbot", None, name="astrbot", platform="webchat")
    svc.record_message(ev)
    await svc.flush()
    req = ProviderRequest(prompt="what did I plant?", contexts=[], system_prompt="")
    _append_system_reminders(ev, req, REMINDERS, TZ)
    await svc.inject(ev, req)
    block = injected(req)
    assert "tomatoes" in block
    assert "astrbot said" not in block and "astrbot last wrote" not in block
    assert 'someone named "astrbot" said' in block
