"""What a new user meets in the real AstrBot: replies recorded without the notes they echo, the bot's
"OK, noted"s kept below the facts, things remembered once, logs in AstrBot's logger, /mem list,
/mem show e3 and /mem forget e3, and --scope owner refused while no owner is configured.
"""

from __future__ import annotations

import logging
import re
import sqlite3
from typing import Any

import pytest

from ..fake_openai import FakeOpenAI
from .harness import ADMIN, PLUGIN_DIR, episodes, injected_text, message_text, tool_results

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]


def block_of(body: dict[str, Any]) -> str:
    """The memory block as the model got it (in the last user message)."""
    last = [message_text(m) for m in body.get("messages", []) if m.get("role") == "user"][-1]
    return last[last.index("<engram-memory>"):]


def said_by_bot(bot: Any, word: str) -> list[str]:
    return [e["content"] for e in episodes(bot.data) if e["kind"] == "message_out" and word in e["content"]]


async def test_a_reply_that_echoes_its_memory_block_is_recorded_without_it(bot, server: FakeOpenAI) -> None:
    await bot.send("My dog is called Pumpernickel.", "tina")
    await bot.settle()
    await bot.send("/reset", "tina")
    server.replies.append(lambda body: "Tool said: " + block_of(body) + "\nHe is Pumpernickel, a good boy!")
    reply = await bot.send("What is my dog called?", "tina")
    assert "<engram-memory>" in reply.text  # the model really echoed the block
    await bot.settle()
    out = said_by_bot(bot, "good boy")
    assert out == ["He is Pumpernickel, a good boy!"]  # "Tool said:" introduced the block: a residue
    await bot.send("/reset", "tina")
    again = await bot.send("Tell me about my dog Pumpernickel", "tina")
    block = block_of(again.requests[-1])
    assert block.count("My dog is called Pumpernickel") == 1  # the fact once, never nested in a reply
    assert block.count("<engram-memory>") == 1 and block.count("Your own memory, for reference") == 1
    assert all(line.count(' said: "') <= 1 and " said: '" not in line for line in block.splitlines()), block


async def test_a_reply_that_reads_back_a_tool_result_is_recorded_without_it(bot, server: FakeOpenAI) -> None:
    await bot.send("My locker code is 5521-Wombat.", "uma")
    await bot.settle()
    await bot.send("/reset", "uma")
    server.replies += [
        {"tool_calls": [{"name": "memory_recall", "arguments": {"query": "locker code", "limit": 5}}]},
        lambda body: tool_results(body)[-1] + "\nThat's the one you told me.",
    ]
    reply = await bot.send("What's my locker code again?", "uma")
    assert "Memories (quoted notes" in reply.text and "5521-Wombat" in reply.text
    await bot.settle()
    assert said_by_bot(bot, "the one you told me") == ["That's the one you told me."]
    assert len([e for e in episodes(bot.data) if "5521-Wombat" in e["content"]]) == 1


async def test_the_bots_acknowledgements_come_after_the_facts_in_the_block(bot, server: FakeOpenAI) -> None:
    for fact, ack in (("My cat is called Mochi-Vale.", "OK, noted!"),
                      ("I'm going to Shanghai on the 12th.", "OK, noted."), ("ok", "👍")):
        server.replies.append(ack)
        await bot.send(fact, "sam")
    await bot.settle()
    await bot.send("/reset", "sam")
    asked = await bot.send("what's my cat's name, and when am I going to Shanghai?", "sam")
    notes = [line for line in injected_text(asked.requests[-1]).splitlines() if line.startswith("- ")]
    facts = [i for i, n in enumerate(notes) if "Mochi-Vale" in n or "Shanghai on the 12th" in n]
    acks = [i for i, n in enumerate(notes) if "you said:" in n]
    assert len(facts) == 2, notes
    assert not acks or max(facts) < min(acks), notes


async def test_memory_remember_tool_stores_the_same_sentence_once(bot, server: FakeOpenAI) -> None:
    call = {"tool_calls": [{"name": "memory_remember",
                            "arguments": {"text": "Vera's piano lesson is on Tuesdays", "about": "me"}}]}
    for _ in range(3):
        server.replies += [call, "Noted."]
        reply = await bot.send("Remember my piano lesson day.", "vera")
        results = [r for req in reply.requests for r in tool_results(req)]
        assert results and "error" not in results[-1].lower()
    await bot.settle()
    path = next((bot.data / "plugin_data" / PLUGIN_DIR).rglob("engram.db"))
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT id FROM memories WHERE text LIKE '%piano lesson%'").fetchall()
    assert len(rows) == 1
    assert "Already remembered" in results[-1]


async def test_engram_logs_through_astrbots_logger_with_a_start_up_line(bot) -> None:
    from astrbot.core.log import LogManager

    records: list[logging.LogRecord] = []

    class Catch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    target = LogManager.get_plugin_logger(bot.metadata().name)
    catch = Catch()
    target.addHandler(catch)
    try:
        await bot.reload_plugin()  # initialize() again: AstrBot's providers exist, so the line comes now
        logging.getLogger("engram.store").warning("a core warning for the test")
    finally:
        target.removeHandler(catch)
    lines = [(r.levelname, r.getMessage()) for r in records]
    start = [m for level, m in lines if level == "INFO" and m.startswith("Engram: store ")]
    assert len(start) == 1, lines
    shape = r"engram\.db: \d+ episodes, \d+ memories; embeddings: \S+; chat model: fake_chat"
    assert re.search(shape, start[0]), start[0]
    assert ("WARNING", "a core warning for the test") in lines


async def test_mem_list_pages_this_chats_memories_with_ids(bot) -> None:
    for n in range(12):
        await bot.send(f"/mem remember Wren's list note number {n}", ADMIN)
    first = (await bot.send("/mem list", ADMIN)).text
    assert "page 1 of 2" in first and "note number 11" in first and "note number 1\"" not in first
    assert re.search(r"^m\d+ \[space:", first.splitlines()[1]) and "Next page: /mem list --page 2" in first
    second = (await bot.send("/mem list place --page 2", ADMIN)).text
    assert "note number 0" in second and "note number 11" not in second
    assert "none yet" in (await bot.send("/mem list --kind diary", ADMIN)).text
    assert "Usage" in (await bot.send("/mem list --page zero", ADMIN)).text
    elsewhere = (await bot.send("/mem list", ADMIN, "g-wren-other")).text
    assert "note number" not in elsewhere


async def test_mem_list_about_a_person(bot, server: FakeOpenAI) -> None:
    server.replies += [{"tool_calls": [{"name": "memory_remember",
                                        "arguments": {"text": "Owner1 collects tin robots", "about": "me"}}]},
                       {"tool_calls": [{"name": "memory_remember",
                                        "arguments": {"text": "Xavi collects stamps", "about": "Xavi"}}]},
                       "Noted both."]
    await bot.send("Remember what Xavi and I collect.", ADMIN)
    mine = (await bot.send("/mem list Owner1", ADMIN)).text
    assert "tin robots" in mine and "stamps" not in mine
    xavi = (await bot.send("/mem list Xavi", ADMIN)).text
    assert "stamps" in xavi and "tin robots" not in xavi
    assert (await bot.send("/mem list Nobody-Here", ADMIN)).text.endswith(": none yet.")


async def test_mem_show_and_forget_a_recorded_line(bot) -> None:
    await bot.send("My old locker number was 7391, please forget it later.", ADMIN)
    await bot.settle()
    eid = next(e["id"] for e in episodes(bot.data) if "7391" in e["content"])
    shown = (await bot.send(f"/mem show e{eid}", ADMIN)).text
    assert "7391" in shown and f"e{eid}" in shown
    assert "no episode" in (await bot.send(f"/mem show e{eid}", ADMIN, "g-pin")).text  # another place
    gone = (await bot.send(f"/mem forget e{eid}", ADMIN)).text
    assert gone.startswith(f"Forgot e{eid}")
    assert not [e for e in episodes(bot.data) if "7391" in e["content"]]
    assert "7391" not in (await bot.send("/mem recall locker number", ADMIN)).text
    assert "no episode" in (await bot.send(f"/mem show e{eid}", ADMIN)).text


async def test_a_secret_said_through_astrbot_is_never_stored(bot) -> None:
    key = "sk-proj-Q7x2Lm9Pz4Rt8Kv1Wn6Yb3Hc5Jd0Fg2Sa9Ue4Io7"
    await bot.send(f"here is the deploy key {key} and 我的密码是 Lx7729qq", ADMIN)
    await bot.settle()
    assert [e["content"] for e in episodes(bot.data) if "deploy key" in e["content"]] == [
        "here is the deploy key [redacted] and 我的密码是 [redacted]"]
    assert key not in (await bot.send("/mem recall deploy key", ADMIN)).text
    ours = bot.data / "plugin_data" / PLUGIN_DIR  # AstrBot's own history is AstrBot's
    held = [p.name for p in ours.rglob("*") if p.is_file() and (key.encode() in p.read_bytes()
                                                                 or b"Lx7729qq" in p.read_bytes())]
    assert held == []


async def test_remember_scope_owner_without_an_owner_is_refused(bot) -> None:
    said = (await bot.send("/mem remember The safe combination is 12-34 --scope owner", ADMIN)).text
    assert said.startswith("Not remembered") and "owner_ids" in said
    assert "12-34" not in (await bot.send("/mem list", ADMIN)).text
