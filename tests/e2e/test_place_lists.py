"""A place list written in AstrBot's own words, through a real AstrBot: ``/sid`` shows a group as its
UMO, ``qq:GroupMessage:g5`` (the platform's id, ``qq``, and AstrBot's message type), where Engram names
it ``aiocqhttp:group:g5``. Pasted into ``blacklist_spaces`` it matched nothing and the group kept
getting memories injected (issue 28); now it keeps the group out, and an entry that matches no place
is named in the start-up log and by ``/mem stats``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from ..fake_openai import FakeOpenAI
from .harness import ADMIN, Lines, astrbot_root, episodes, injected_text, write_plugin_config

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]

UNMATCHED = ("tg:GroupMessage:77", "qq:Channel:5")  # no platform with that id; no kind of place


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def qq(server: FakeOpenAI, dashboard_port: int, log_lines: Lines) -> AsyncIterator[Any]:
    astrbot_root()
    from .bot import Bot

    bot = Bot(server, platform="aiocqhttp", platform_id="qq")  # a QQ adapter its owner named "qq"
    bot.install()
    write_plugin_config(bot.data, {"dashboard_port": dashboard_port,
                                   "owner_ids": [f"qq:FriendMessage:{ADMIN}"],
                                   "blacklist_spaces": ["qq:GroupMessage:g5", *UNMATCHED]})
    await bot.start()
    yield bot
    await bot.stop()


async def test_a_group_blacklisted_as_sid_shows_it_is_kept_out(qq) -> None:
    await qq.overhear("the vault code is 9981", "u1", "g5")
    await qq.overhear("the vault code is 4242", "u1", "g6")
    await qq.settle()
    asked = await qq.send("what is the vault code?", "u1", "g5")
    assert "9981" not in injected_text(asked.requests[-1]) and "4242" not in injected_text(asked.requests[-1])
    await qq.settle()
    places = [e["space"] for e in episodes(qq.data)]
    assert "aiocqhttp:group:g5" not in places and "aiocqhttp:group:g6" in places


async def test_the_owner_written_as_sid_shows_them_is_the_owner(qq) -> None:
    stats = (await qq.send("/mem stats", ADMIN)).text
    assert stats.startswith("Engram: ") and "(the owner's private chat)" in stats, stats


async def test_entries_that_match_no_place_are_named_at_start_and_in_stats(qq, log_lines: Lines) -> None:
    errors = [m for level, m in log_lines.lines if level == "ERROR" and "match no place" in m]
    assert errors and all(entry in errors[0] for entry in UNMATCHED), log_lines.lines
    assert "qq:GroupMessage:g5" not in errors[0]
    stats = (await qq.send("/mem stats", ADMIN)).text
    assert "match no place" in stats and all(entry in stats for entry in UNMATCHED), stats
    in_group = (await qq.send("/mem stats", ADMIN, "g6")).text
    assert "match no place" not in in_group  # the config is the owner's: said in their private chat
