"""An admin refused an owner's command in their private chat is told the id to write in owner_ids:
when no owner is configured, or when owner_ids holds their id without its platform on a bot with
two chat platforms. Nobody else is told anything (a group, a chat of someone who is not the owner)."""

from __future__ import annotations

from astrbot_plugin_engram.plugin.commands.registry import COMMANDS
from astrbot_plugin_engram.plugin.config import Settings

from .conftest import FakeContext, MakeService, event


async def mem(svc, line: str, sender: str, group: str | None = None, platform: str = "qq") -> str:
    return await COMMANDS.dispatch(svc, event(line, sender, group, admin=True, platform=platform), line)


async def test_a_bare_owner_id_on_two_platforms_is_named_with_the_form_to_write(make_service: MakeService
                                                                                ) -> None:
    two = FakeContext(platforms=["qq", "tg"])
    svc = make_service(Settings(owner_ids=("10001",)), context=two)
    for line in ("mem dashboard", "mem diary", "mem proposals"):
        said = await mem(svc, line, "10001", platform="tg")
        assert "write tg:10001" in said, said
        assert "tg:" not in await mem(svc, line, "10001", "g1", platform="tg")  # a group: no hint
        assert "owner_ids" not in (await mem(svc, line, "20002", platform="tg")).replace(
            "(config key owner_ids)", "")  # someone else's private chat: nothing about the owner's id


async def test_no_owner_configured_names_this_chats_id(make_service: MakeService) -> None:
    svc = make_service(Settings())
    said = await mem(svc, "mem dashboard", "10001")
    assert "No owner is configured yet" in said and "add qq:10001 to owner_ids" in said, said
