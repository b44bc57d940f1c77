"""Chinese all the way through: every /mem subcommand and refusal, run against a real store that has
lived a little (memories of several kinds and versions, lines, jobs run, proposals, a diary), says no
English word in a Chinese reply but ids, numbers, names, places and command words, and no Chinese in
an English one (``reply_words``); data words (kinds, statuses, job names and results, recall's
features) and the core's errors (``memory.errors`` codes) are said in the reply's language."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from astrbot_plugin_engram.memory import Memory
from astrbot_plugin_engram.memory.store.sqlite.store import SQLiteStore
from astrbot_plugin_engram.plugin import tools as self_commands  # identity_propose, the model's tool
from astrbot_plugin_engram.plugin.commands.registry import COMMANDS
from astrbot_plugin_engram.plugin.config import Settings
from astrbot_plugin_engram.plugin.jobs.background import Jobs
from astrbot_plugin_engram.plugin.jobs.self_jobs import SelfJobs
from astrbot_plugin_engram.plugin.service import EngramService

from .conftest import OWNER, FakeProvider, MakeService, event
from .reply_words import chinese_left, english_left
from .test_inject import ask
from .test_jobs import ScriptedContext

# what the test itself put in the store (memory text, names, the scripted model's notes), shown as it is
KEPT = ["Alice's tea is oolong", "Bob likes tea", "shall we have tea?", "I talked about tea.", "said",
        "I adore rainy days.", "rain came up", "Alice", "alice", "Owner1", "owner1", "tea", "hash-32",
        "nowhere", "nope", "frobnicate", "zed", "Zed", "x"]


async def mem(svc: EngramService, line: str, group: str | None = None, sender: str = OWNER,
              admin: bool = True) -> str:
    return await COMMANDS.dispatch(svc, event(line, sender, group, admin=admin), line)


async def lived_in(make_service: MakeService, lang: str) -> tuple[EngramService, Jobs, ScriptedContext, Any]:
    """A bot that has lived a little, replying in ``lang``; its jobs started (stop them)."""
    ctx = ScriptedContext(chats=[FakeProvider("chat1")])
    svc = make_service(Settings(owner_ids=(OWNER,), reply_language=lang, timezone="UTC"), ctx)
    svc.tz = timezone.utc
    noon = (datetime.now(timezone.utc) - timedelta(days=2)).replace(hour=12)
    svc.record_message(event("shall we have tea?", "alice", timestamp=int(noon.timestamp())))
    svc.record_message(event("tea", "alice", "g1"))
    await svc.flush()
    jobs = Jobs(svc, catch_up_delay=3600)
    SelfJobs(jobs)
    await jobs.start()
    m = await svc.memory()
    first = await m.add_memory(Memory("Alice's tea is oolong", "public", kind="preference",
                                      subjects=("qq:alice",)))
    await m.update(first, "Alice's tea is oolong")
    for reason in ("rain came up", ""):
        await self_commands.identity_propose(svc, event("x", "alice"), "I adore rainy days.", reason)
    await ask(svc, "tea", OWNER)
    ctx.answers[:] = [json.dumps({"entry": "I talked about tea."}), json.dumps({"nope": 1})]
    await mem(svc, f"mem diary {noon.date()}")  # and the self-image after it fails: a failed job
    await jobs.scheduler.idle()
    return svc, jobs, ctx, noon


# every subcommand, the refusals and usage errors around them, in the owner's private chat and a group
LINES = ["mem", "mem help", "mem help list", "mem stats", "mem recall tea", "mem recall --archived tea",
         "mem recall", "mem why", "mem remember Bob likes tea", "mem remember Bob likes tea",
         "mem remember x --scope nowhere", "mem remember x --scope", "mem show m1", "mem show m2",
         "mem show e1", "mem show e99", "mem show x", "mem show", "mem list", "mem list --kind preference",
         "mem list --kind nope", "mem list --page x", "mem list --page", "mem list alice",
         "mem list --page 5", "mem list place", "mem consolidate", "mem consolidate here",
         "mem consolidate nowhere", "mem stats", "mem proposals", "mem approve 1", "mem reject 2",
         "mem approve 2", "mem approve 9",
         "mem approve x", "mem scope m1 owner", "mem scope m2 space:qq:group:g1", "mem scope m2 nowhere",
         "mem scope m2", "mem forget-person alice", "mem forget-person zed", "mem forget-person",
         "mem forget-place qq:group:g1", "mem forget-place nowhere", "mem confirm 123456", "mem confirm",
         "mem dashboard", "mem diary", "mem diary 2020-02-30", "mem diary 2020-01-01",
         "mem diary 2020-01-01 x", "mem forget m99", "mem forget m2 --with-sources", "mem forget e1",
         "mem forget", "mem frobnicate"]
GROUP_LINES = ["mem stats", "mem diary", "mem proposals", "mem dashboard", "mem show m1",
               "mem forget-place qq:private:owner1", "mem remember x --scope owner", "mem forget-person zed",
               "mem scope m3 space:qq:group:g2", "mem why"]


async def run_all(svc: EngramService) -> dict[str, str]:
    said = {line: await mem(svc, line) for line in LINES}
    said.update({f"{line} (in a group)": await mem(svc, line, group="g1") for line in GROUP_LINES})
    said["mem stats (not an admin)"] = await mem(svc, "mem stats", sender="mallory", admin=False)
    return said


async def test_no_english_is_left_in_a_chinese_reply(make_service: MakeService) -> None:
    svc, jobs, _, _ = await lived_in(make_service, "zh")
    try:
        said = await run_all(svc)
    finally:
        await jobs.stop()
    left = {line: (words, reply) for line, reply in said.items() if (words := english_left(reply, KEPT))}
    assert not left, "\n\n".join(f"{line}: {words}\n{reply}" for line, (words, reply) in left.items())


async def test_no_chinese_is_left_in_an_english_reply(make_service: MakeService) -> None:
    svc, jobs, _, _ = await lived_in(make_service, "en")
    try:
        said = await run_all(svc)
    finally:
        await jobs.stop()
    left = {line: reply for line, reply in said.items() if chinese_left(reply, KEPT)}
    assert not left, "\n\n".join(f"{line}:\n{reply}" for line, reply in left.items())


# ---- the core's errors ------------------------------------------------------------------------------
async def test_a_shut_down_engram_says_so_in_chinese(make_service: MakeService) -> None:
    """Was 'Engram：Engram is shut down'."""
    svc = make_service(Settings(owner_ids=(OWNER,), reply_language="zh"))
    await svc.close()
    assert await mem(svc, "mem stats") == "Engram：Engram 已经停止（插件正在关闭或已关闭）"


async def test_a_store_file_that_is_not_a_store_is_said_in_chinese_and_left_as_it_is(
        make_service: MakeService, tmp_path: Path) -> None:
    """Was 'Engram：<path> is not an Engram store (not an SQLite file); left untouched'."""
    for lang in ("zh", "en"):
        svc = make_service(Settings(owner_ids=(OWNER,), reply_language=lang), data_dir=tmp_path / lang)
        svc.data_dir.mkdir()
        svc.path.write_text("my shopping list", "utf-8")
        said = await mem(svc, "mem stats")
        assert said == {
            "zh": f"Engram：{svc.path} 不是 Engram 的存储文件（不是 SQLite 文件）；没有改动它；它没有备份",
            "en": f"Engram: {svc.path} is not an Engram store (not an SQLite file); left untouched; there is "
                  "no backup of it"}[lang]
        assert svc.path.read_text("utf-8") == "my shopping list"


async def test_an_unreadable_proposals_file_and_an_unreadable_identity_are_said_in_chinese(
        make_service: MakeService) -> None:
    svc = make_service(Settings(owner_ids=(OWNER,), reply_language="zh"))
    folder = svc.data_dir / "identity"
    folder.mkdir(parents=True)
    (folder / "proposals.json").write_text("{not json", "utf-8")
    for line in ("mem proposals", "mem approve 1"):  # was 'Engram：identity/proposals.json cannot be read
        assert await mem(svc, line) == (
            "Engram：identity/proposals.json 读不出来；什么也没有改动：请修好或移走这个文件")
    (folder / "proposals.json").unlink()
    await self_commands.identity_propose(svc, event("x", "alice"), "I adore rainy days.", "")
    (folder / "self.md").write_bytes("我是一只猫".encode("gbk"))
    # was 'Engram：not approved: <path> is not UTF-8 text (byte 0xce at offset 0); it is not used ...'
    assert await mem(svc, "mem approve 1") == (
        "Engram：没有批准：identity/self.md 无法完整读取（为了不覆盖它）；详见日志")
    assert (folder / "self.md").read_bytes() == "我是一只猫".encode("gbk")


async def diary_service(make_service: MakeService, lang: str, chats: list[FakeProvider],
                        *answers: Any) -> tuple[EngramService, Jobs, Any]:
    ctx = ScriptedContext(chats=chats, answers=list(answers))
    svc = make_service(Settings(owner_ids=(OWNER,), reply_language=lang, timezone="UTC"), ctx)
    svc.tz = timezone.utc
    noon = (datetime.now(timezone.utc) - timedelta(days=2)).replace(hour=12)
    svc.record_message(event("shall we have tea?", "alice", timestamp=int(noon.timestamp())))
    await svc.flush()
    jobs = Jobs(svc, catch_up_delay=3600)
    SelfJobs(jobs)
    await jobs.start()
    return svc, jobs, noon.date()


async def test_a_diary_the_model_wrote_too_long_is_said_in_chinese(make_service: MakeService) -> None:
    """Was "Engram：'entry' is 7000 characters, at most 6000"."""
    too_long = json.dumps({"entry": "茶" * 7000})
    svc, jobs, day = await diary_service(make_service, "zh", [FakeProvider("chat1")], too_long,
                                         json.dumps({"entry": "I talked about tea."}))
    try:
        assert await mem(svc, f"mem diary {day}") == (
            "Engram：模型写的日记有 7000 个字符，最多 6000 个；什么也没有改动，可以再试一次")
        assert await mem(svc, f"mem diary {day}") == f"{day} 的日记（新写的，m1）：\nI talked about tea."
        assert await mem(svc, f"mem diary {day}") == f"{day} 的日记（已写过，m1）：\nI talked about tea."
    finally:
        await jobs.stop()


async def test_a_diary_without_a_chat_model_is_said_in_chinese(make_service: MakeService) -> None:
    """Was 'Engram：no chat provider is configured in AstrBot'."""
    svc, jobs, day = await diary_service(make_service, "zh", [])
    try:
        assert await mem(svc, f"mem diary {day}") == "Engram：AstrBot 里没有配置对话模型"
    finally:
        await jobs.stop()


# ---- data words -----------------------------------------------------------------------------------
async def test_a_memory_its_versions_and_a_line_are_shown_with_chinese_words(
        make_service: MakeService) -> None:
    """Was 'm1（preference，superseded）', 'versions: m1 (superseded) -> m2 (active)', 'e1（message_in）'."""
    svc = make_service(Settings(owner_ids=(OWNER,), reply_language="zh"))
    svc.record_message(event("我喜欢乌龙茶", OWNER))
    await svc.flush()
    m = await svc.memory()
    first = await m.add_memory(Memory("主人喜欢乌龙茶", "public", kind="preference"))
    await m.update(first, "主人喜欢铁观音")
    shown = await mem(svc, "mem show m1")
    assert shown.startswith("m1（偏好，已被取代）范围 public，重要性 0.50\n")
    assert "版本：m1 (已被取代) -> m2 (有效)" in shown
    assert (await mem(svc, "mem show e1")).startswith("e1（收到的消息），在 qq:private:owner1，")
    listed = await mem(svc, "mem list --kind preference")
    assert listed.startswith("本聊天可见的记忆（类型 偏好），") and "m2 [public] (偏好) " in listed
    english = make_service(Settings(owner_ids=(OWNER,), reply_language="en"),
                           data_dir=svc.data_dir.parent / "en")
    await (await english.memory()).add_memory(Memory("Alice likes oolong", "public", kind="preference"))
    assert (await mem(english, "mem show m1")).startswith("m1 (preference, active) scope public")


async def test_recalls_features_are_named_in_chinese(make_service: MakeService) -> None:
    """Was 'm1 得分 8.71（both=1.00, is_memory=1.00, cov=1.00）'."""
    svc = make_service(Settings(owner_ids=(OWNER,), reply_language="zh"))
    await (await svc.memory()).add_memory(Memory("主人喜欢乌龙茶", "public"))
    said = await mem(svc, "mem recall 乌龙茶")
    features = re.search(r"m1 得分 [\d.]+（(.*?)）", said)
    assert features, said
    named = features.group(1).split(", ")
    assert all(re.fullmatch(r"[^\x00-\x7f]+(（[^\x00-\x7f]+）)?=[\d.]+", f) for f in named), named


async def test_the_job_lines_of_stats_and_a_failed_consolidation_are_said_in_chinese(
        make_service: MakeService) -> None:
    """Was '任务 fade：还没有运行过', '（ok）', '（failed: WrongShape: no JSON object ...）' and
    '失败 unavailable 1 (chat provider 'chat1' failed: boom)'."""
    svc, jobs, _ = await diary_service(make_service, "zh", [FakeProvider("chat1")], RuntimeError("boom"))
    try:
        said = await mem(svc, "mem consolidate")
    finally:
        await jobs.stop()
    assert said == ("整理完成：新增 0 条，更新 0 条，来自 0 条消息，调用模型 1 次；失败 模型不可用 1。\n"
                    "调用失败的那些消息没有丢，稍后会再试。"), said  # was: the model could not read them
    svc, jobs, _, _ = await lived_in(make_service, "zh")  # its self-image job failed: the model's answer
    try:
        stats = await mem(svc, "mem stats")
    finally:
        await jobs.stop()
    assert "任务 淡忘：还没有运行过" in stats
    # its consolidation's one model call failed: the run failed (issue 27: it showed as 成功)
    assert "任务 整理：最近一次运行 " in stats and "（失败：对话模型出错了）；共运行 1 次，失败 1 次" in stats
    assert "任务 自我形象：最近一次运行 " in stats
    assert "（失败：模型的回答格式不对）；共运行 1 次，失败 1 次" in stats
    assert not english_left(stats, ["hash-32"]), stats


async def test_a_read_only_or_damaged_store_is_said_in_chinese(make_service: MakeService,
                                                               tmp_path: Path) -> None:
    """Were "Engram：cannot open <path> for writing (attempt to write a readonly database): is the folder
    ... read-only or its disk full? ..." and "Engram：<path> is damaged (found by the check ...)"."""
    from ..small_disk import remount, small_disk

    with small_disk(tmp_path / "disk", 4096) as disk:
        svc = make_service(Settings(owner_ids=(OWNER,), reply_language="zh"), data_dir=disk)
        assert (await mem(svc, "mem remember 主人喜欢乌龙茶")).startswith("记住了 m1")
        await svc.close()
        remount(disk, "ro")
        try:
            again = make_service(Settings(owner_ids=(OWNER,), reply_language="zh"), data_dir=disk)
            assert await mem(again, "mem remember 主人喜欢铁观音") == (
                f"Engram：无法以写入方式打开 {disk / 'engram.db'}：文件夹 {disk} 是只读的，还是磁盘满了？"
                "什么也没有改动；下一条消息时会再试着打开")
        finally:
            remount(disk, "rw")
    svc = make_service(Settings(owner_ids=(OWNER,), reply_language="zh"), data_dir=tmp_path / "damaged")
    store = (await svc.memory()).store
    assert isinstance(store, SQLiteStore)  # the damage mark is the SQLite store's
    store.damage = "the store is damaged (found by the check in the background)"
    assert await mem(svc, "mem remember 主人喜欢铁观音") == (
        f"Engram：后台检查发现 {svc.path} 已损坏；不再往里写入任何内容（还能读出的记忆照常使用）。"
        "请停止机器人；恢复方法见日志；它没有备份")


@pytest.mark.parametrize("owner_ids,sender",
                         [((), "mallory"), (("qq:owner1",), "mallory"), (("alice",), "alice")])
async def test_no_english_in_a_chinese_reply_to_someone_not_the_owner_or_without_an_owner(
        make_service: MakeService, owner_ids: tuple[str, ...], sender: str) -> None:
    """Every subcommand in a private chat that is not the owner's (no owner configured, another one, or
    a bare id), before anything is recorded: the refusals and the hints on how to set an owner."""
    svc = make_service(Settings(owner_ids=owner_ids, reply_language="zh"))
    said = {line: await mem(svc, line, sender=sender) for line in [*LINES, "mem diary 2999-01-01"]}
    left = {line: (words, reply) for line, reply in said.items() if (words := english_left(reply, KEPT))}
    assert not left, "\n\n".join(f"{line}: {words}\n{reply}" for line, (words, reply) in left.items())
