"""A sense of self inside the real AstrBot: the abilities line lists what AstrBot really offers,
the model proposes an identity change through its tool, and only the owner may decide it."""

from __future__ import annotations

import pytest

from ..fake_openai import FakeOpenAI
from .harness import ADMIN, injected_text, tool_results

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]


async def test_the_injected_block_says_what_the_bot_can_do_and_what_time_it_is(bot) -> None:
    asked = await bot.send("what can you do?", "judy")
    block = injected_text(asked.requests[-1])
    offered = [t["function"]["name"] for t in asked.requests[-1].get("tools", [])]
    assert "What you can do" in block and "identity_propose" in offered
    for name in ("memory_recall", "memory_remember", "identity_propose"):
        assert f"{name} (" in block
    assert "/mem" in block  # the commands of the activated plugins
    assert block.count("Now: ") == 1 and "This is the first time" in block


async def test_the_model_proposes_and_a_non_owner_admin_cannot_decide(bot, server: FakeOpenAI) -> None:
    args = {"change": "I love thunderstorms.", "reason": "we talked about storms"}
    server.replies += [
        {"tool_calls": [{"name": "identity_propose", "arguments": args}]},
        "I have proposed it to my owner.",
    ]
    reply = await bot.send("You seem to love storms!", "ken")
    assert reply.text == "I have proposed it to my owner."
    results = [r for req in reply.requests for r in tool_results(req)]
    assert results and results[-1].startswith("Proposed (#")
    refused = await bot.send("/mem approve 1", ADMIN)  # an AstrBot admin, but owner_ids is empty
    assert "only the bot's owner" in refused.text
    assert not (bot.data / "plugin_data" / "astrbot_plugin_engram" / "identity" / "self.md").exists()


async def test_a_person_asks_the_bot_itself_to_forget_and_no_later_block_holds_it(
        bot, server: FakeOpenAI) -> None:
    """Issue 27: "Forget what I told you about my ex" is how people say it. The model calls
    memory_forget in a real AstrBot request; after it, the fact is in no block injected later."""
    group = "g-forget"
    await bot.overhear("my ex is called Marcus and he still texts me every week", "lena", group)
    await bot.overhear("the quiz night moved to Thursday", "olga", group)
    await bot.settle()
    before = await bot.send("what do you know about lena's ex who texts her?", "olga", group)
    assert "Marcus" in injected_text(before.requests[0])  # it is recalled: the test can fail
    server.replies += [
        {"tool_calls": [{"name": "memory_forget", "arguments": {"what": "my ex Marcus"}}]},
        "Done: I have forgotten what you told me about him.",
    ]
    asked = await bot.send("Forget what I told you about my ex Marcus", "lena", group)
    assert asked.text == "Done: I have forgotten what you told me about him."
    [result] = [r for req in asked.requests for r in tool_results(req)]
    assert result.startswith("Forgotten for good") and "my ex is called Marcus" in result, result
    assert "quiz night" not in result  # Olga's line is not Lena's to erase
    await bot.settle()
    for question, who in (("what do you know about lena's ex who texts her?", "olga"),
                          ("who texts me every week?", "lena"), ("前任 每周 发消息", "olga")):
        later = await bot.send(question, who, group)
        assert "Marcus" not in injected_text(later.requests[0]), question
    quiz = await bot.send("when is the quiz night?", "olga", group)
    assert "Thursday" in injected_text(quiz.requests[0])  # what she did not name stays
