"""The plugin's config as AstrBot really loads it (``data/config/<plugin>_config.json`` through its
schema check: missing keys get their defaults, unknown keys are dropped, values are NOT type-checked)
with what a hand edit or an older save leaves there: wrong types, empty, negative and huge values.
The plugin loads, each bad key is named in one log line and falls back to its default, and no
fallback widens privacy: a place listed to opt out stays out even when the list is written wrongly.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from ..fake_openai import FakeOpenAI
from .harness import ADMIN, PLUGIN_DIR, Lines, astrbot_root, episodes, write_plugin_config

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]

BAD = {
    "recall_k": "12",  # a number as text
    "inject_budget_tokens": -5,
    "consolidate_every_minutes": 10**20,
    "inject_mode": ["user"],
    "embedding_provider_id": ["fake_embed"],
    "timezone": 8,
    "baseline_mood": "",
    "identity_enabled": "yes",
    "owner_ids": "e2e:owner1",  # a string, not a list: not taken as an owner (narrower, logged)
    "blacklist_spaces": "e2e:group:g-secret",  # a string, not a list: still the place that opted out
    "public_spaces": ["e2e:group:g-town", {"id": "g-x"}],
    "a_key_from_an_older_version": True,
}
SAVED = {**BAD, "dashboard_enabled": False}  # keys of a later version missing: AstrBot adds them


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def conf_bot(server: FakeOpenAI, log_lines: Lines) -> AsyncIterator[Any]:
    astrbot_root()
    from .bot import Bot

    bot = Bot(server)
    bot.install()
    write_plugin_config(bot.data, SAVED)
    await bot.start()  # fails with AstrBot's traceback if the plugin did not load
    yield bot
    await bot.stop()


async def test_the_plugin_loads_and_astrbot_fills_in_the_missing_keys(conf_bot) -> None:
    saved = json.loads((conf_bot.data / "config" / f"{PLUGIN_DIR}_config.json").read_text("utf-8-sig"))
    assert "a_key_from_an_older_version" not in saved and saved["proposals_enabled"] is True
    reply = await conf_bot.send("hi, I am Noor", "u1")
    assert reply.text == "noted"


async def test_each_bad_key_is_named_once_with_the_default_it_falls_back_to(conf_bot, log_lines: Lines
                                                                            ) -> None:
    errors = [m for level, m in log_lines.lines if level == "ERROR" and "config key" in m]
    for key in set(BAD) - {"blacklist_spaces", "public_spaces", "a_key_from_an_older_version"}:
        named = [m for m in errors if f"'{key}'" in m]
        assert len(named) == 1 and "using the default" in named[0], (key, errors)
    stats = (await conf_bot.send("/mem stats", ADMIN)).text
    assert stats.startswith("Engram here (e2e:private:owner1)"), stats


async def test_a_place_that_opted_out_in_a_string_instead_of_a_list_stays_out(conf_bot,
                                                                               log_lines: Lines) -> None:
    await conf_bot.send("the launch code is 0000", "u2", "g-secret")
    await conf_bot.send("the picnic is on Sunday", "u2", "g-open")
    await conf_bot.settle()
    said = [e["content"] for e in episodes(conf_bot.data)]
    assert "the picnic is on Sunday" in said
    assert "the launch code is 0000" not in said
    named = [m for level, m in log_lines.lines if level in ("WARNING", "ERROR") and "'blacklist_spaces'" in m]
    assert len(named) == 1 and "e2e:group:g-secret" in named[0], named


async def test_a_bad_item_in_a_widening_list_drops_the_whole_list(conf_bot, log_lines: Lines) -> None:
    named = [m for level, m in log_lines.lines if level == "ERROR" and "'public_spaces'" in m]
    assert len(named) == 1 and "using the default ('webchat:private:astrbot',)" in named[0], named
