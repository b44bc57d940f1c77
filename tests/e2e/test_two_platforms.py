"""Two chat platforms in one AstrBot (a QQ adapter and a Telegram one): the same group id on both is
two places, what is said in one never reaches the other, /mem works on each, and the owner is one
person on one platform."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from ..fake_openai import FakeOpenAI
from .harness import ADMIN, astrbot_root, episodes, injected_text, write_plugin_config

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def two(server: FakeOpenAI, dashboard_port: int) -> AsyncIterator[Any]:
    astrbot_root()
    from .bot import Bot, ListedPlatform

    bot = Bot(server, platform="aiocqhttp")
    bot.install()
    write_plugin_config(bot.data, {"dashboard_port": dashboard_port, "owner_ids": [f"aiocqhttp:{ADMIN}"]})
    await bot.start()
    bot.core.platform_manager.platform_insts.append(ListedPlatform("telegram"))
    yield bot
    await bot.stop()


async def on(bot: Any, platform: str, text: str, sender: str, group: str | None = None,
             at_bot: bool | None = None) -> Any:
    bot.platform = platform
    try:
        return await bot.send(text, sender, group, at_bot=at_bot)
    finally:
        bot.platform = "aiocqhttp"


async def test_the_same_group_id_on_two_platforms_is_two_places(two) -> None:
    await on(two, "aiocqhttp", "our secret word is PAPAYA", "u1", "555", at_bot=False)  # overheard
    await two.settle()
    asked = await on(two, "telegram", "what is our secret word?", "u1", "555")
    assert "PAPAYA" not in injected_text(asked.requests[-1])
    await two.settle()
    places = {e["space"] for e in episodes(two.data)}
    assert {"aiocqhttp:group:555", "telegram:group:555"} <= places
    again = await on(two, "aiocqhttp", "what is our secret word?", "u1", "555")
    assert "PAPAYA" in injected_text(again.requests[-1])


async def test_mem_works_on_each_platform_and_keeps_to_its_place(two) -> None:
    stats = (await on(two, "telegram", "/mem stats", ADMIN)).text
    assert stats.startswith("Engram here (telegram:private:owner1)"), stats
    said = (await on(two, "telegram", "/mem remember the tg group meets on Fridays", ADMIN, "555")).text
    assert "space:telegram:group:555" in said, said
    assert "Fridays" in (await on(two, "telegram", "/mem recall group meets", ADMIN, "555")).text
    assert "Fridays" not in (await on(two, "aiocqhttp", "/mem recall group meets", ADMIN, "555")).text


async def test_the_owner_is_one_person_on_one_platform(two) -> None:
    assert "token=" in (await on(two, "aiocqhttp", "/mem dashboard", ADMIN)).text
    refused = (await on(two, "telegram", "/mem dashboard", ADMIN)).text
    assert "token=" not in refused and refused.startswith("Engram: /mem dashboard answers only")
