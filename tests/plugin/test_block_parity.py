"""Recall explained from the command line (no plugin running) shows the block the plugin injects: the
same code (``memory.compose``), the same budget, the identity, self-image and inner state read from
the data folder, character for character; only the abilities line, which lists AstrBot's tools, is
left out, and the page says so."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from aiohttp.test_utils import TestClient, TestServer

from astrbot_plugin_engram.dashboard import make_app
from astrbot_plugin_engram.dashboard.__main__ import build_parser, command_line_settings
from astrbot_plugin_engram.memory import Engram
from astrbot_plugin_engram.memory.self.identity import IdentityFolder, atomic_write
from astrbot_plugin_engram.memory.self.inner_state import state_path
from astrbot_plugin_engram.memory.self.selfhood import BlockDefaults
from astrbot_plugin_engram.plugin.config import Settings
from astrbot_plugin_engram.plugin.service import EngramService

from ..conftest import HashEmbedder
from .conftest import OWNER, MakeService, event, request

TOKEN = "parity-token-0123456789"
PLACE, BOB = "qq:group:g1", "qq:bob"
QUESTION = "What does Bob bake on Sundays?"


def seed_self(data_dir: Path) -> None:
    """The self's files as the self jobs and the owner leave them."""
    folder = IdentityFolder(data_dir)
    folder.root.mkdir(parents=True, exist_ok=True)
    atomic_write(folder.self_path, "I am Crumb, the bakery club's helper.\n")
    atomic_write(folder.image_path, "I like slow mornings and the smell of rye. 我喜欢慢悠悠的早晨。\n")
    state = {"mood": "content", "valence": 0.5, "energy": 0.7, "on_mind": "the rye starter",
             "updated_at": (datetime.now(timezone.utc) - timedelta(hours=1)).isoformat(), "day": ""}
    atomic_write(state_path(data_dir), json.dumps(state))


async def recorded(svc: EngramService) -> None:
    for text in ("Bob bakes sourdough every Sunday.", "The bakery on Elm street sells rye.",
                 "Bob's starter is called Doughbert.", "Is the rye any good?",
                 "Alice prefers croissants to any bread."):
        svc.record_message(event(text, "bob" if "Bob" in text else "alice", "g1",
                                 name="Bob" if "Bob" in text else "Alice"))
    await svc.flush()
    await (await svc.memory()).embed_pending()  # the vectors in the file, as the indexer leaves them


async def command_line_recall(svc: EngramService, block: BlockDefaults, person: str) -> dict[str, Any]:
    """What ``python -m ...dashboard --db`` answers for recall explained over the plugin's store."""
    engram = await Engram.open(svc.path, HashEmbedder(), read_only=True)
    client = TestClient(TestServer(make_app(engram, command_line_settings(svc.path, TOKEN, block))))
    await client.start_server()
    try:
        url = f"/api/recall?q={quote(QUESTION)}&space={quote(PLACE)}&person={quote(person)}"
        d = await (await client.get(url, headers={"Authorization": f"Bearer {TOKEN}"})).json()
        page = await (await client.get(url.replace("/api", ""), headers={
            "Authorization": f"Bearer {TOKEN}", "Accept-Language": "zh-CN"})).text()
        return {**d, "page": page}
    finally:
        await client.close()
        await engram.close()


async def within_one_minute() -> None:
    if datetime.now().second > 45:  # the block says the time to the minute: both within one
        await asyncio.sleep(61 - datetime.now().second)


async def test_the_command_lines_block_is_the_plugins_to_the_character(make_service: MakeService) -> None:
    settings = Settings(owner_ids=(OWNER,), inject_budget_tokens=420, recall_k=5, abilities_enabled=False)
    svc = make_service(settings)
    seed_self(svc.data_dir)
    await recorded(svc)
    await within_one_minute()
    # first the pages (showing changes nothing), then the reply's injection (which strengthens what it
    # recalled: the next recall may rank differently, in the plugin and in the file alike)
    shown = await command_line_recall(svc, BlockDefaults(inject_budget_tokens=420, recall_k=5), BOB)
    explained = (await svc.explain(PLACE, QUESTION, person=BOB)).text
    req = request(QUESTION)
    await svc.inject(event(QUESTION, "bob", "g1", name="Bob", timestamp=int(time.time()) + 1), req)
    injected = "\n".join(p.text for p in req.extra_user_content_parts)
    assert shown["block"] == explained == injected  # the same code, budget and k: the same characters
    for line in ("I am Crumb", "How you see yourself lately (your own words): I like slow mornings",
                 "content", "sourdough"):
        assert line in shown["block"]
    assert shown["budget"] == 420 and shown["recall_k"] == 5


async def test_the_command_line_says_the_abilities_line_is_only_in_the_plugin(
        make_service: MakeService) -> None:
    svc = make_service()
    seed_self(svc.data_dir)
    await recorded(svc)
    shown = await command_line_recall(svc, BlockDefaults(), "")
    assert shown["left_out"] == ["abilities"] and shown["budget"] == Settings().inject_budget_tokens
    assert "不含“能力”一行" in shown["page"] and "预算 800 词元" in shown["page"]


def test_the_command_lines_defaults_are_the_plugins() -> None:
    plugin, defaults = Settings(), BlockDefaults()
    for key in ("inject_budget_tokens", "recall_k", "identity_enabled", "time_enabled", "self_image_enabled",
                "inner_state_enabled", "abilities_enabled", "baseline_mood"):
        assert getattr(defaults, key) == getattr(plugin, key), key
    args = build_parser().parse_args(["--db", "x.db"])
    assert (args.budget, args.recall_k) == (plugin.inject_budget_tokens, plugin.recall_k)


def test_a_budget_out_of_the_plugins_bounds_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    for bad in ("--budget=10", "--budget=lots", "--recall-k=0"):
        with pytest.raises(SystemExit):
            build_parser().parse_args(["--db", "x.db", bad])
    assert "10 is not from 50 to 8000" in capsys.readouterr().err
