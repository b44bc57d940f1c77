"""/mem in a real AstrBot answers in the language of the message it answers: reply_language auto (the
default) answers a command holding Chinese in Chinese and an English one in English, whatever the
chat said before (issue 27); zh and en, saved in the plugin's config and reloaded, fix it."""

from __future__ import annotations

import re

import pytest

from .harness import ADMIN, write_plugin_config

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]

HAN = re.compile(r"[\u4e00-\u9fff]")


async def test_auto_answers_the_commands_language_not_the_chats(bot) -> None:
    # a group of this module's own (the owner's private chat carries other modules' English turns)
    reply = await bot.send("我最喜欢的茶是乌龙茶，记住哦", ADMIN, "g-zh")  # answered: the recall read it
    assert reply.requests
    await bot.settle()
    stats = (await bot.send("/mem stats", ADMIN, "g-zh")).text  # English words: an English answer
    assert stats.startswith("Engram here (e2e:group:g-zh): "), stats
    assert (await bot.send("／mem stats", ADMIN, "g-zh")).text.startswith("Engram here ")  # its words too
    recalled = (await bot.send("/mem recall 乌龙茶", ADMIN, "g-zh")).text  # a command holding Chinese
    assert recalled.startswith(("在这里为 \"乌龙茶\" 想起：", "在这里没有想起")), recalled

    await bot.overhear("see you at the pub tonight", "bob", "g-en")
    await bot.overhear("bring the cards", "carol", "g-en")
    await bot.settle()
    group = (await bot.send("/mem stats", ADMIN, "g-en")).text
    assert group.startswith("Engram here (e2e:group:g-en): 2 lines recorded in this place"), group


async def test_auto_answers_a_command_holding_chinese_in_chinese_even_in_an_english_group(bot) -> None:
    said = (await bot.send("/mem remember 小明的猫叫咪咪", ADMIN, "g-en")).text
    assert re.fullmatch(r"记住了 m\d+（范围 space:e2e:group:g-en）。", said), said
    assert (await bot.send("/mem list --page 9", ADMIN, "g-en")).text.startswith("There are 1 page(s)")


async def test_zh_and_en_saved_in_the_config_fix_the_language(bot, dashboard_port: int) -> None:
    write_plugin_config(bot.data, {"dashboard_port": dashboard_port, "reply_language": "zh"})
    await bot.reload_plugin()
    said = (await bot.send("/mem list", ADMIN, "g-en")).text
    assert said.startswith("本聊天可见的记忆，最新的在前（第 1/1 页，共 1 条）："), said
    assert "小明的猫叫咪咪" in said  # the memory as it is
    assert (await bot.send("/mem nope", ADMIN, "g-en")).text.startswith("没有子命令 'nope'。")

    write_plugin_config(bot.data, {"dashboard_port": dashboard_port, "reply_language": "en"})
    await bot.reload_plugin()
    said = (await bot.send("/mem recall 咪咪", ADMIN)).text
    assert said.startswith(('Recalled here for "咪咪":', 'Nothing recalled here for "咪咪"')), said
    assert not HAN.search((await bot.send("/mem help", ADMIN)).text.replace(
        "回复语言：在 Engram 配置中把 reply_language 设为 zh，所有回复都用中文。", ""))
