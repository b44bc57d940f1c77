"""/mem as a newcomer types it into a real AstrBot: options written with a Chinese input method's or a
phone's dashes ("——scope", "—page"), full-width spaces and a full-width slash ("／mem"), and the
owner-only commands telling an admin who has not set owner_ids yet how to become the owner.
"""

from __future__ import annotations

import re

import pytest

from .harness import ADMIN, episodes

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]


@pytest.mark.parametrize(("dashes", "cat"), [("——", "咪咪"), ("—", "花花"), ("－－", "豆豆"), ("–", "球球")])
async def test_an_option_typed_with_ime_or_phone_dashes_is_the_option(bot, dashes: str, cat: str) -> None:
    said = (await bot.send(f"/mem remember 我的猫叫{cat} {dashes}scope self", ADMIN)).text
    assert said.startswith("记住了") and "（范围 self）" in said, said  # a Chinese command: a Chinese reply
    mid = re.search(r"m(\d+)", said)
    assert mid
    shown = (await bot.send(f"/mem show m{mid.group(1)}", ADMIN)).text
    assert f"我的猫叫{cat}" in shown and "scope" not in shown.split("\n")[1], shown


async def test_list_page_and_recall_archived_take_the_ime_dashes_too(bot) -> None:
    for n in range(11):
        await bot.send(f"/mem remember Quill note {n}", ADMIN)
    second = (await bot.send("/mem list ——page 2", ADMIN)).text
    assert "page 2 of" in second, second
    archived = (await bot.send("/mem recall ——archived Quill", ADMIN)).text
    assert "Quill note" in archived and "——archived" not in archived, archived


async def test_an_em_dash_inside_a_remembered_text_is_kept(bot) -> None:
    said = (await bot.send("/mem remember Tea—especially green—is Ola's favourite", ADMIN)).text
    mid = re.search(r"m(\d+)", said)
    assert mid, said
    shown = (await bot.send(f"/mem show m{mid.group(1)}", ADMIN)).text
    assert "Tea—especially green—is Ola's favourite" in shown, shown


async def test_full_width_places_separate_the_words(bot) -> None:
    await bot.send("/mem remember Ivo's 猫 is called Bao", ADMIN)
    said = (await bot.send("/mem\u3000recall\u3000猫", ADMIN)).text
    assert "Bao" in said, said


async def test_a_full_width_slash_is_the_command_not_a_message_to_the_model(bot) -> None:
    before = len(episodes(bot.data))
    reply = await bot.send("／mem stats", ADMIN)
    assert reply.text.startswith("Engram here (e2e:private:owner1)"), reply.text
    assert not reply.requests  # the model was not asked
    await bot.settle()
    assert not [e for e in episodes(bot.data)[before:] if "mem stats" in e["content"]]


@pytest.mark.parametrize("command", ["/mem dashboard", "/mem diary"])
async def test_owner_only_commands_tell_an_admin_without_owner_ids_how_to_become_the_owner(
        bot, command: str) -> None:
    said = (await bot.send(command, ADMIN)).text
    assert "owner_ids" in said and "e2e:owner1" in said, said
    in_group = (await bot.send(command, ADMIN, "g-owner-hint")).text
    assert "e2e:owner1" not in in_group  # in a group, no id to copy
