"""/mem replies in the owner's language: one catalogue (English, Chinese), ``reply_language`` zh, en
or auto (Chinese when the command or this chat's recent lines are Chinese), through ``COMMANDS.dispatch``."""

from __future__ import annotations

import logging
import re
import string

import pytest

from astrbot_plugin_engram.memory import Memory
from astrbot_plugin_engram.plugin.commands.registry import COMMANDS
from astrbot_plugin_engram.plugin.config import Settings, parse_settings
from astrbot_plugin_engram.plugin.replies.catalogue import TEXTS, and_list, counted, say
from astrbot_plugin_engram.plugin.replies.language import has_chinese
from astrbot_plugin_engram.plugin.service import EngramService

from .conftest import OWNER, MakeService, event, request

HAN = re.compile(r"[\u4e00-\u9fff]")


def placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


# ---- the catalogue ------------------------------------------------------------------------------
def test_every_key_has_both_languages_with_the_same_placeholders() -> None:
    for key, (en, zh) in TEXTS.items():
        assert en.strip() and zh.strip(), key
        for english in en.split("|"):  # a counted noun: singular|plural, each with the Chinese's values
            assert placeholders(english) == placeholders(zh), key
        if not key.startswith("usage_"):  # a usage line may be the subcommand's name alone
            assert HAN.search(zh) or zh != en, f"{key}: its Chinese is its English"
        if key != "help_lang":  # the English help tells a Chinese reader how to get Chinese replies
            assert not HAN.search(en), f"{key}: its English holds Chinese"


def test_every_subcommand_has_its_usage_and_summary_in_both_languages() -> None:
    for name in COMMANDS.names():
        assert f"usage_{name}" in TEXTS and f"sub_{name}" in TEXTS, name
        assert TEXTS[f"usage_{name}"][0].split()[0] == TEXTS[f"usage_{name}"][1].split()[0] == name


def test_counts_and_lists_read_naturally_in_both_languages() -> None:
    assert counted("en", "n_memory", 1) == "1 memory" and counted("en", "n_memory", 3) == "3 memories"
    assert counted("zh", "n_memory", 3) == "3 条记忆"
    assert and_list("en", ["1 line", "2 memories", "1 identity proposal"]) == (
        "1 line, 2 memories and 1 identity proposal")
    assert and_list("zh", ["1 条消息", "2 条记忆"]) == "1 条消息和 2 条记忆"
    assert say("zh", "moved", id=3, scope="public", old="self") == "m3 的范围现在是 public（原来是 self）。"


# ---- the setting --------------------------------------------------------------------------------
def test_reply_language_is_auto_by_default_and_a_bad_value_falls_back_to_auto_with_a_log(
        caplog: pytest.LogCaptureFixture) -> None:
    assert Settings().reply_language == "auto"
    for good in ("zh", "en", "auto", " zh "):
        settings, errors = parse_settings({"reply_language": good})
        assert settings.reply_language == good.strip() and not errors
    with caplog.at_level(logging.ERROR, "engram.plugin"):
        settings, errors = parse_settings({"reply_language": "chinese"})
    assert settings.reply_language == "auto"
    assert "reply_language" in caplog.text and "expected one of auto, zh, en, got 'chinese'" in caplog.text


def test_the_auto_rule_looks_for_chinese_in_the_command() -> None:
    assert has_chinese("/mem recall 奶茶") and not has_chinese("/mem recall tea")


# ---- through the command path -------------------------------------------------------------------
async def mem(svc: EngramService, line: str, group: str | None = None, admin: bool = True,
              sender: str = OWNER) -> str:
    return await COMMANDS.dispatch(svc, event(line, sender, group, admin=admin), line)


async def add(svc: EngramService, text: str, scope: str = "public") -> int:
    return await (await svc.memory()).add_memory(Memory(text, scope))


# every subcommand, and the refusals and usage errors around them (no Chinese in any of the lines)
LINES = ["mem", "mem help", "mem help recall", "mem stats", "mem recall tea", "mem why",
         "mem remember Bob likes tea", "mem show m1", "mem show e99", "mem list", "mem list --page x",
         "mem list --kind nope", "mem scope m1 self", "mem scope m1 nowhere", "mem forget m99",
         "mem forget-person Zed", "mem forget-place", "mem confirm 123456", "mem consolidate",
         "mem proposals", "mem approve 7", "mem reject x", "mem diary", "mem dashboard", "mem frobnicate",
         "mem show"]


@pytest.mark.parametrize("line", LINES)
async def test_under_zh_every_reply_is_chinese_and_under_en_english(make_service: MakeService,
                                                                     line: str) -> None:
    zh = make_service(Settings(owner_ids=(OWNER,), reply_language="zh"))
    en = make_service(Settings(owner_ids=(OWNER,), reply_language="en"), data_dir=zh.data_dir.parent / "en")
    for svc in (zh, en):
        await add(svc, "Alice's tea is oolong")
    said_zh, said_en = await mem(zh, line), await mem(en, line)
    assert HAN.search(said_zh), said_zh
    assert not HAN.search(said_en.replace(say("en", "help_lang"), "")), said_en


async def test_a_refusal_is_said_in_the_chats_language_too(make_service: MakeService) -> None:
    svc = make_service(Settings(owner_ids=(OWNER,), reply_language="zh"))
    refused = await mem(svc, "mem forget 1", sender="stranger", admin=False)
    assert refused == "Engram：/mem 仅限机器人的管理员使用。"


async def test_auto_answers_in_the_language_of_the_command_not_of_the_chat(
        service: EngramService) -> None:
    """Issue 27: an English ``/mem stats`` was answered in Chinese in a chat whose recent lines were
    Chinese, and after a forget the language fell back to the chat's last lines. A reply is in the
    language of the message it answers, whatever the chat said before and whatever a forget dropped."""
    for text in ("今天去喝奶茶吗", "好啊，三点见", "ok"):
        service.record_message(event(text, OWNER))
        service.record_message(event(text, "alice", "g-zh"))
    await service.flush()
    assert (await mem(service, "mem stats")).startswith("Engram: ")
    assert (await mem(service, "mem stats", group="g-zh")).startswith("Engram here (qq:group:g-zh)")
    assert "Remembered m1" in await mem(service, "mem remember Alice likes tea", group="g-zh")
    assert "记住了 m2" in await mem(service, "mem remember 小红喜欢奶茶", group="g-zh")
    assert (await mem(service, "mem recall 奶茶", group="g-zh")).startswith("在这里")
    await service.inject(event("我喜欢什么茶？", "alice", "g-zh"), request("我喜欢什么茶？"))
    assert (await mem(service, "mem why", group="g-zh")).startswith("Last injection here ")
    await mem(service, "mem forget m1")
    assert (await mem(service, "mem stats", group="g-zh")).startswith("Engram here (qq:group:g-zh)")


async def test_auto_answers_a_command_holding_chinese_in_chinese(service: EngramService) -> None:
    await add(service, "Alice likes oolong 乌龙茶")
    assert (await mem(service, "mem recall 乌龙茶")).startswith("在这里为 \"乌龙茶\" 想起：")
    assert (await mem(service, "mem recall oolong")).startswith("Recalled here for \"oolong\":")
    said = await mem(service, "mem remember 小明的猫叫咪咪 --scope self")
    assert re.fullmatch(r"记住了 m\d+（范围 self）。", said), said


async def test_chinese_help_explains_the_options_and_keeps_their_names(make_service: MakeService) -> None:
    svc = make_service(Settings(owner_ids=(OWNER,), reply_language="zh"))
    text = await mem(svc, "mem help")
    assert text.startswith("Engram 记忆指令（仅限管理员）：")
    assert "/mem remember <内容> [--scope 范围] — 记下一条记忆" in text
    assert "/mem list [place|<人>] [--kind 类型] [--page 页码]" in text
    assert "仅主人私聊可见" in text and "--keep-lines：只忘记这条记忆" in text
    en = make_service(Settings(reply_language="en"), data_dir=svc.data_dir.parent / "e")
    english = await mem(en, "mem help")
    assert "reply_language 设为 zh" in english  # the one Chinese line of the English help: how to switch


async def test_times_are_said_in_the_replys_language(make_service: MakeService) -> None:
    svc = make_service(Settings(owner_ids=(OWNER,), reply_language="zh"))
    mid = await add(svc, "Alice's tea is oolong")
    shown = await mem(svc, f"mem show m{mid}")
    assert re.search(r"创建于 \d{4}-\d\d-\d\d（刚刚）", shown), shown
    assert "Alice's tea is oolong" in shown  # memory text as it is


async def test_a_forget_is_reported_in_chinese(make_service: MakeService) -> None:
    svc = make_service(Settings(owner_ids=(OWNER,), reply_language="zh"))
    svc.record_message(event("我的储物柜密码是 4512", OWNER))
    svc.record_message(event("明天见", OWNER))
    await svc.flush()
    assert await mem(svc, "mem forget e1") == (
        "已忘记 e1（qq:private:owner1 里的一条消息）以及由它得出的内容：共删除 1 条消息和 0 条记忆。")
    asked = await mem(svc, "mem forget-place")
    code = re.search(r"/mem confirm (\d+)", asked)
    assert code and asked.startswith("这会从所有地方永久删除：地点 qq:private:owner1 的一切："), asked
    assert await mem(svc, "mem confirm 000000") == "Engram：没有等待确认的验证码 '000000'。什么也没有忘记。"
    assert (await mem(svc, f"mem confirm {code.group(1)}")).startswith("已忘记 qq:private:owner1：共删除")


async def test_a_consolidation_and_the_job_lines_of_stats_are_reported_in_chinese(
        make_service: MakeService) -> None:
    from .test_jobs import context, jobs_for
    from .test_jobs import say as said_in

    svc, jobs = await jobs_for(make_service, context(), reply_language="zh")
    try:
        await said_in(svc, "I just adopted a kitten named Miso")
        await said_in(svc, "My birthday is on June 3rd", "bob")
        reply = await mem(svc, "mem consolidate", group="g1")
        assert reply.startswith("整理完成：新增 2 条，更新 0 条，来自 2 条消息，调用模型 1 次。"), reply
        assert "kitten named Miso" in reply and "[space:qq:group:g1]" in reply
        stats = await mem(svc, "mem stats")  # the owner's private chat: what the jobs did, counted
        assert "任务 整理：最近一次运行 " in stats and "（成功）；共运行 1 次，失败 0 次" in stats
        assert "累计新增 2 条、更新 0 条，调用模型 1 次" in stats and "任务 淡忘：还没有运行过" in stats
    finally:
        await jobs.stop()


async def test_identity_proposals_are_decided_in_chinese(make_service: MakeService) -> None:
    from astrbot_plugin_engram.plugin import tools as self_commands  # identity_propose, the model's tool

    svc = make_service(Settings(owner_ids=(OWNER,), reply_language="zh"))
    answer = await self_commands.identity_propose(svc, event("x", "alice"), "I adore rainy days.",
                                                  "rain all week")
    assert answer.startswith("Proposed (#1)")  # the tool's answer goes to the model: English
    listed = await mem(svc, "mem proposals")
    assert listed.startswith("对 identity/self.md 的修改提议") and "，来自 qq:private:alice）" in listed
    assert "\"I adore rainy days.\" —— 理由：\"rain all week\"" in listed
    assert (await mem(svc, "mem approve 1")).startswith("已批准 #1：")
    assert await mem(svc, "mem reject 1") == "Engram：提议 #1 已经批准过了"
    assert await mem(svc, "mem approve 9") == "Engram：没有提议 #9"
    assert await mem(svc, "mem approve x") == "'x' 不是提议编号\n用法：/mem approve <编号>"
