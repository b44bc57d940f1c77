"""Engram inside the real AstrBot: recording, scoped injection, /mem, the model's tools, restarts.

Every test talks to the bot as a platform would (events through AstrBot's pipeline) and looks at
what the fake OpenAI server was sent. Each test uses its own people and groups, so the shared core
of this module does not let one test's memories satisfy another's assertions.
"""

from __future__ import annotations

import re
import time

import aiohttp
import pytest

from ..fake_openai import FakeOpenAI
from .harness import ADMIN, episodes, injected_text, listening, tool_results

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]


async def test_private_fact_reaches_only_its_own_chat(bot, server: FakeOpenAI) -> None:
    await bot.send("My cat is called Zorblax and she hates the vacuum.", "alice")
    await bot.settle()
    await bot.send("/reset", "alice")  # a new conversation: only Engram can bring the cat back
    asked = await bot.send("What is my cat called?", "alice")
    assert "Zorblax" in injected_text(asked.requests[-1])

    in_group = await bot.send("What is Alice's cat called?", "alice", "g-alice")
    elsewhere = await bot.send("What is Alice's cat called?", "bob")
    assert in_group.requests and elsewhere.requests
    assert "Zorblax" not in in_group.seen() + elsewhere.seen()


async def test_group_fact_reaches_only_that_group(bot) -> None:
    await bot.overhear("Heads up: the standup moved to Thursday, room Kestrel.", "carol", "g-team")
    await bot.settle()
    here = await bot.send("Where is the standup now?", "dave", "g-team")
    assert "Kestrel" in injected_text(here.requests[-1])

    other_group = await bot.send("Where is the standup now?", "carol", "g-other")
    carol_private = await bot.send("Where is the standup now?", "carol")
    assert other_group.requests and carol_private.requests
    assert "Kestrel" not in other_group.seen() + carol_private.seen()


async def test_bot_reply_is_recorded_as_message_out(bot, server: FakeOpenAI) -> None:
    server.replies.append("Noted: the Pelican code is safe with me.")
    reply = await bot.send("Please keep the Pelican code in mind.", "erin")
    assert reply.text == "Noted: the Pelican code is safe with me."
    await bot.settle()
    rows = [e for e in episodes(bot.data) if "Pelican" in e["content"]]
    said = [e for e in rows if e["kind"] == "message_in"]
    out = [e for e in rows if e["kind"] == "message_out"]
    assert len(said) == 1 and len(out) == 1
    assert out[0]["content"] == "Noted: the Pelican code is safe with me."
    assert out[0]["space"] == said[0]["space"]
    assert "erin" not in out[0]["actor"] and out[0]["actor"] != said[0]["actor"]


async def test_admin_remembers_and_recalls(bot) -> None:
    done = await bot.send("/mem remember The garden gate code is 4417", ADMIN)
    assert re.search(r"\bm\d+\b", done.text), done.text
    found = await bot.send("/mem recall garden gate code", ADMIN)
    assert "4417" in found.text
    assert not done.requests and not found.requests  # commands never reach the model


async def test_non_admin_cannot_forget(bot) -> None:
    done = await bot.send("/mem remember The spare key is under the blue pot", ADMIN)
    mid = re.search(r"\bm(\d+)\b", done.text)
    assert mid, done.text
    refused = await bot.send(f"/mem forget {mid.group(1)}", "mallory")
    assert "admin" in refused.text.lower()
    assert "Forgot" not in refused.text
    still = await bot.send("/mem recall spare key", ADMIN)
    assert "blue pot" in still.text


async def test_mem_help_and_bad_arguments_get_usage_not_tracebacks(bot) -> None:
    helped = (await bot.send("/mem help", ADMIN)).text
    for sub in ("stats", "recall", "why", "remember", "show", "forget", "scope", "help"):
        assert sub in helped
    for line in ("/mem frobnicate", "/mem forget", "/mem show banana", "/mem scope 1"):
        text = (await bot.send(line, ADMIN)).text
        assert "Usage" in text or "usage" in text, (line, text)
        assert "Traceback" not in text


async def test_memory_recall_tool_returns_only_what_this_chat_may_see(bot, server: FakeOpenAI) -> None:
    await bot.send("My passport number is XK-5591, keep it private.", "frank")
    await bot.overhear("The picnic is at Lakeside Park on Sunday.", "frank", "g-picnic")
    await bot.settle()
    server.replies += [
        {"tool_calls": [{"name": "memory_recall", "arguments": {"query": "frank passport picnic",
                                                                   "limit": 5}}]},
        "Frank mentioned the picnic.",
    ]
    reply = await bot.send("What do you remember about Frank?", "grace", "g-picnic")
    assert reply.text == "Frank mentioned the picnic."
    tools = [t["function"]["name"] for t in reply.requests[0].get("tools", [])]
    assert "memory_recall" in tools
    results = [r for req in reply.requests for r in tool_results(req)]
    assert results and "Lakeside" in results[-1]
    assert "XK-5591" not in reply.seen()


async def test_memory_remember_tool_stores_in_this_place_only(bot, server: FakeOpenAI) -> None:
    server.replies += [
        {"tool_calls": [{"name": "memory_remember",
                         "arguments": {"text": "Heidi's allergist is Dr. Quillfeather", "about": "me"}}]},
        "I'll remember that.",
    ]
    reply = await bot.send("Remember who my allergist is, please.", "heidi")
    assert reply.text == "I'll remember that."
    results = [r for req in reply.requests for r in tool_results(req)]
    assert results and "error" not in results[-1].lower()
    await bot.settle()
    other = await bot.send("Who is Heidi's allergist?", "ivan")
    assert other.requests and "Quillfeather" not in other.seen()
    await bot.send("/reset", "heidi")
    again = await bot.send("Who is my allergist?", "heidi")
    assert "Quillfeather" in injected_text(again.requests[-1])


async def test_embedding_provider_down_reply_still_goes_through(bot, server: FakeOpenAI) -> None:
    await bot.send("My bike is a green Gazelle.", "judy")
    await bot.settle()
    await bot.send("/reset", "judy")
    server.embed_status = 500
    try:
        embeds = len(server.embed_requests())
        server.replies.append("You ride a bike.")
        reply = await bot.send("Which bike do I ride?", "judy")
        assert reply.text == "You ride a bike."
        assert len(server.embed_requests()) > embeds  # the outage was really hit
        assert "Gazelle" in injected_text(reply.requests[-1])  # keyword recall carries on
        assert (await bot.send("Thanks!", "judy")).texts
    finally:
        server.embed_status = 200


async def test_slow_embedding_provider_does_not_hold_up_the_reply(bot, server: FakeOpenAI) -> None:
    await bot.send("My umbrella is the yellow Fulton one.", "liam")
    await bot.settle()
    await bot.send("/reset", "liam")
    server.embed_delay = 15.0  # far beyond any sane wait for a query embedding
    try:
        server.replies.append("The yellow one.")
        started = time.monotonic()
        reply = await bot.send("Which umbrella is mine?", "liam")
        took = time.monotonic() - started
    finally:
        server.embed_delay = 0.0
    assert reply.text == "The yellow one."
    assert took < 12.0, f"the reply waited {took:.1f} s for a hanging embedding provider"
    assert "Fulton" in injected_text(reply.requests[-1])  # keyword recall carries on


async def test_restart_keeps_everything(bot) -> None:
    await bot.send("/mem remember The boiler was serviced in March", ADMIN)
    await bot.send("My locker number is 5150.", "kim")
    await bot.settle()
    before = episodes(bot.data)

    await bot.reload_plugin()  # terminate + load, as the dashboard's reload does
    assert episodes(bot.data) == before  # nothing lost, nothing duplicated
    assert "March" in (await bot.send("/mem recall boiler serviced", ADMIN)).text

    await bot.stop()  # the whole AstrBot shuts down and starts again on the same root
    await bot.start()
    assert [e["id"] for e in episodes(bot.data)][: len(before)] == [e["id"] for e in before]
    assert "March" in (await bot.send("/mem recall boiler serviced", ADMIN)).text
    await bot.send("/reset", "kim")
    asked = await bot.send("What is my locker number?", "kim")
    assert "5150" in injected_text(asked.requests[-1])


async def test_commands_to_the_bot_are_not_recorded_as_conversation(bot) -> None:
    await bot.send("/help", "henry")
    await bot.send("/reset", "henry")
    await bot.send("/mem stats", ADMIN)
    await bot.send("could you pick a date for the reset", "henry")
    await bot.settle()
    said = [e["content"] for e in episodes(bot.data) if e["actor"].endswith(":henry")]
    assert said == ["could you pick a date for the reset"]


async def test_the_dashboard_answers_on_this_modules_own_port(bot, dashboard_port: int) -> None:
    """Each module's plugin serves its dashboard on a port picked free for it, not the default 8765
    (test runs side by side would find it taken and log "port in use")."""
    assert dashboard_port != 8765 and listening(dashboard_port)
    async with aiohttp.ClientSession() as http:
        r = await http.get(f"http://127.0.0.1:{dashboard_port}/api/overview")
    assert r.status == 401  # the plugin's dashboard, asking for its token


async def test_a_tool_call_with_nan_or_odd_digits_for_a_number_gets_a_readable_error(
        bot, server: FakeOpenAI) -> None:
    """Python's json reads NaN and Infinity in a model's arguments: the limit raised out of the tool."""
    server.replies += [
        {"tool_calls": [{"name": "memory_recall", "arguments": {"query": "bike", "limit": float("nan")}}]},
        {"tool_calls": [{"name": "memory_recall", "arguments": {"query": "bike", "limit": "\u00b2"}}]},
        "I could not look that up.",
    ]
    reply = await bot.send("What bike do I have?", "karl")
    assert reply.text == "I could not look that up."
    results = [r for req in reply.requests for r in tool_results(req)]
    assert results[-2:] == ["error: limit must be a whole number from 1 to 20, not nan",
                            "error: limit must be a whole number from 1 to 20, not '\u00b2'"]
