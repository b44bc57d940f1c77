"""Consolidation inside the real AstrBot: AstrBot's own chat provider (pointed at the fake server)
answers in the contract, /mem consolidate turns a group's lines into memories, they are injected in
that group only with the date they happened, and a reload leaves one scheduler running."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from ..fake_openai import FakeOpenAI, batch_lines
from .harness import ADMIN, PLUGIN_DIR, injected_text

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]


def model(body: dict[str, Any]) -> str:
    """The chat model: consolidation prompts get one memory per line, about its speaker; chat gets 'noted'."""
    system = next((m["content"] for m in body.get("messages", []) if m.get("role") == "system"), "")
    if "long-term memory of a chat bot" not in str(system):
        return "noted"
    actions = [{"op": "add", "text": f"{who}: {text}", "kind": "fact", "about": [who], "scope": "public",
                "sources": [f"e{i}"]} for i, who, text in batch_lines(body) if "Kiwi" in text]
    return json.dumps({"actions": actions or [{"op": "none"}]})


async def test_mem_consolidate_through_astrbots_provider(bot, server: FakeOpenAI) -> None:
    server.default_reply = model  # type: ignore[assignment]
    await bot.overhear("We adopted a parrot, his name is Kiwi!", "nora", "g-birds", name="Nora")
    await bot.overhear("He says hello to everyone", "nora", "g-birds", name="Nora")
    await bot.settle()
    done = await bot.send("/mem consolidate", ADMIN, "g-birds")
    assert "1 added, 0 updated, from 2 lines, 1 model call; refused wider scope 1" in done.text, done.text
    assert "[space:e2e:group:g-birds]" in done.text and "Kiwi" in done.text
    sent = server.chat_requests()[-1]
    assert sent["messages"][0]["role"] == "system" and "e2e:group:g-birds" in sent["messages"][-1]["content"]

    await bot.send("/reset", "nora", "g-birds")
    asked = await bot.send("What is our parrot called?", "nora", "g-birds")
    notes = [line for line in injected_text(asked.requests[-1]).splitlines() if "about Nora" in line]
    assert notes and "Kiwi" in notes[0]
    elsewhere = await bot.send("What is Nora's parrot called?", "nora", "g-cats")
    assert "Kiwi" not in elsewhere.seen()

    stats = (await bot.send("/mem stats", ADMIN)).text  # no owner is configured: not the owner's chat
    assert "job consolidate: last run" in stats and "(ok)" in stats
    assert "added" not in stats and "refused" not in stats  # what the jobs did counts every place


async def test_a_reload_leaves_one_scheduler(bot) -> None:
    old = bot.metadata().star_cls.jobs.scheduler
    assert old.running
    await bot.reload_plugin()
    assert not old.running
    runner = sys.modules[f"data.plugins.{PLUGIN_DIR}.scheduler.runner"]
    live = list(runner.LIVE.values())
    assert len(live) == 1 and live[0].running
    assert live[0] is bot.metadata().star_cls.jobs.scheduler
