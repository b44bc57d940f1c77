"""``/mem diary`` when no owner is configured: the diary is the owner's alone, so it shows in no chat;
the admin asking in their private chat is told where it is kept meanwhile and how to become the owner
(before: "ask in your private chat with the bot", said in that very chat)."""

from __future__ import annotations

from astrbot_plugin_engram.plugin.commands.registry import COMMANDS
from astrbot_plugin_engram.plugin.config import Settings

from .conftest import MakeService, event


async def mem(svc, line: str, sender: str, group: str | None = None) -> str:
    return await COMMANDS.dispatch(svc, event(line, sender, group, admin=True), line)


async def test_no_owner_the_diary_says_where_it_is_kept_and_how_to_read_it_here(
        make_service: MakeService) -> None:
    svc = make_service(Settings())
    said = await mem(svc, "mem diary", "10001")
    assert "ask in your private chat" not in said, said
    assert "diary/" in said and "dashboard" in said and "add qq:10001 to owner_ids" in said, said
    svc = make_service(Settings(reply_language="zh"))
    said = await mem(svc, "mem diary 2026-11-30", "10001")
    assert "ask in your private chat" not in said and "diary/" in said and "owner_ids" in said, said


async def test_with_an_owner_someone_else_is_still_told_the_diary_is_the_owners(make_service: MakeService
                                                                               ) -> None:
    svc = make_service(Settings(owner_ids=("qq:20002",)))
    said = await mem(svc, "mem diary", "10001")
    assert "the diary is the owner's" in said
    assert "owner_ids" not in said.replace("(config key owner_ids)", "")
    said = await mem(svc, "mem diary", "10001", "g1")  # a group: nothing about the owner's configuration
    assert "owner_ids" not in said and "10001" not in said
