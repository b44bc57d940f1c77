"""The dashboard inside the real AstrBot: started with the plugin, its link only in the owner's
private chat, the same port again after a reload, the port free after shutdown."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
import pytest_asyncio

from ..fake_openai import FakeOpenAI
from .harness import ADMIN, astrbot_root, listening, write_plugin_config

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def dash_bot(server: FakeOpenAI, dashboard_port: int) -> AsyncIterator[tuple[Any, int]]:
    """The plugin configured with its owner and the module's free dashboard port."""
    astrbot_root()
    from .bot import Bot

    bot = Bot(server)
    bot.install()
    port = dashboard_port
    write_plugin_config(bot.data, {"owner_ids": [ADMIN], "dashboard_port": port})
    await bot.start()
    yield bot, port
    await bot.stop()
    assert not listening(port)  # a shutdown leaves the port free


async def open_link(link: str) -> str:
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        r = await http.get(link)
        assert r.status == 200
        return await r.text()


async def test_the_owner_gets_the_link_and_it_shows_what_the_bot_recorded(dash_bot) -> None:
    bot, port = dash_bot
    await bot.send("The spare key is under the blue flowerpot.", "zoe", "g-dash", at_bot=False)
    await bot.settle()
    reply = (await bot.send("/mem dashboard", ADMIN)).text
    assert reply.startswith(f"Engram dashboard (this machine only): http://127.0.0.1:{port}/?token=")
    link = reply.split(": ", 1)[1].split()[0]
    assert "g-dash" in await open_link(link)
    async with aiohttp.ClientSession() as http:
        r = await http.get(f"http://127.0.0.1:{port}/api/overview")
        assert r.status == 401


async def test_the_link_is_refused_in_a_group(dash_bot) -> None:
    bot, _ = dash_bot
    reply = (await bot.send("/mem dashboard", ADMIN, "g-dash")).text
    assert reply == "Engram: /mem dashboard answers only in the owner's private chat."


async def test_a_reload_serves_the_same_port_again(dash_bot) -> None:
    bot, port = dash_bot
    before = (await bot.send("/mem dashboard", ADMIN)).text
    await bot.reload_plugin()
    after = (await bot.send("/mem dashboard", ADMIN)).text
    assert after == before  # same port, same token
    assert "Engram" in await open_link(after.split(": ", 1)[1].split()[0])
