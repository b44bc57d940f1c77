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
from hypothesis import given, settings
from hypothesis import strategies as st

from astrbot_plugin_engram.dashboard import make_app
from astrbot_plugin_engram.dashboard.__main__ import block_from, build_parser, command_line_settings
from astrbot_plugin_engram.dashboard.__main__ import main as dashboard_main
from astrbot_plugin_engram.memory import Engram
from astrbot_plugin_engram.memory.self.identity import IdentityFolder, atomic_write
from astrbot_plugin_engram.memory.self.inner_state import state_path
from astrbot_plugin_engram.memory.self.selfhood import BlockDefaults, block_settings
from astrbot_plugin_engram.plugin.config import Settings, parse_settings
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


BLOCK_KEYS = ("inject_budget_tokens", "recall_k", "identity_enabled", "time_enabled", "self_image_enabled",
              "inner_state_enabled", "abilities_enabled", "baseline_mood")


def test_the_command_lines_defaults_are_the_plugins(tmp_path: Path) -> None:
    plugin, defaults = Settings(), BlockDefaults()
    for key in BLOCK_KEYS:
        assert getattr(defaults, key) == getattr(plugin, key), key
    block, said = block_from(build_parser().parse_args(["--db", str(tmp_path / "x.db")]))  # no config near
    assert block == defaults and said == []


def astrbot_layout(root: Path, config: Any) -> Path:
    """A store where AstrBot keeps it, and the plugin's config where AstrBot saves it; the store's path."""
    folder = root / "data" / "plugin_data" / "astrbot_plugin_engram"
    folder.mkdir(parents=True)
    (root / "data" / "config").mkdir()
    text = config if isinstance(config, str) else json.dumps(config)
    (root / "data" / "config" / "astrbot_plugin_engram_config.json").write_text(text, encoding="utf-8")
    return folder / "engram.db"


def test_the_dashboard_from_the_command_line_uses_the_plugins_saved_config(tmp_path: Path) -> None:
    """An owner who switched the self-image off and halved the budget sees recall explained's block
    as the bot makes it; a bad value keeps its default and is said; the command line overrides."""
    db = astrbot_layout(tmp_path, {"self_image_enabled": False, "inject_budget_tokens": 400,
                                   "recall_k": "lots", "baseline_mood": " curious ", "owner_ids": ["42"]})
    block, said = block_from(build_parser().parse_args(["--db", str(db)]))
    assert (block.self_image_enabled, block.inject_budget_tokens) == (False, 400)
    assert block.baseline_mood == "curious"
    assert block.recall_k == BlockDefaults().recall_k  # "lots": the default kept, as the plugin keeps it
    assert "astrbot_plugin_engram_config.json" in said[0] and any("'recall_k'" in s for s in said)
    assert command_line_settings(db, "t" * 32, block).block.self_image_enabled is False
    block, _ = block_from(build_parser().parse_args(["--db", str(db), "--budget", "900", "--recall-k", "3"]))
    assert (block.inject_budget_tokens, block.recall_k, block.self_image_enabled) == (900, 3, False)


def test_a_plugin_config_that_cannot_be_read_stops_the_dashboard_with_a_clear_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for i, broken in enumerate(("{not json", "[1, 2]")):
        db = astrbot_layout(tmp_path / str(i), broken)
        assert dashboard_main(["--db", str(db)]) == 2
        err = capsys.readouterr().err
        assert "the plugin's config" in err and "astrbot_plugin_engram_config.json" in err
    assert dashboard_main(["--db", str(db), "--config", str(tmp_path / "missing.json")]) == 2
    assert "cannot read the plugin's config" in capsys.readouterr().err


_VALUES = st.one_of(st.booleans(), st.integers(-10, 10_000), st.floats(allow_nan=False, allow_infinity=False),
                    st.text(max_size=50), st.none(), st.lists(st.integers(), max_size=2),
                    st.sampled_from([" calm ", "", "   ", 8.0, 800.0, 50, 8000, 8001, 49, True]))


_EDGES: tuple[Any, ...] = (True, False, 0, 1, 8, 49, 50, 51, 800, 8000, 8001, -1, 8.0, 8.5, 800.0, None,
                           "", "   ", " calm ", "x" * 40, " " + "x" * 40 + " ", "x" * 41, [], {}, "8")


def test_every_edge_value_of_every_block_key_is_read_as_the_plugin_reads_it() -> None:
    for key in BLOCK_KEYS:
        for value in _EDGES:
            mine, my_errors = block_settings({key: value})
            plugin, plugin_errors = parse_settings({key: value})
            assert getattr(mine, key) == getattr(plugin, key), (key, value)
            assert bool(my_errors) == bool(plugin_errors), (key, value)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(BLOCK_KEYS), _VALUES))
def test_the_dashboards_reading_of_the_block_keys_is_the_plugins(raw: dict[str, Any]) -> None:
    """The dashboard may not import the plugin, so it reads the block's keys itself: every value
    the plugin takes it takes alike, every value the plugin refuses it refuses."""
    mine, my_errors = block_settings(raw)
    plugin, plugin_errors = parse_settings(raw)
    for key in BLOCK_KEYS:
        assert getattr(mine, key) == getattr(plugin, key), key
    assert {e.split("'")[1] for e in my_errors} == {e.split("'")[1] for e in plugin_errors}


def test_a_budget_out_of_the_plugins_bounds_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    for bad in ("--budget=10", "--budget=lots", "--recall-k=0"):
        with pytest.raises(SystemExit):
            build_parser().parse_args(["--db", "x.db", bad])
    assert "10 is not from 50 to 8000" in capsys.readouterr().err
