"""Bad answers from the model: each is counted, none loses or corrupts anything.

A broken answer (not JSON, truncated, empty, an HTTP error, a timeout) applies nothing and leaves the
place's cursor where it was; JSON wrapped in prose or a code fence is still read; a broken action is
refused and counted while the rest of the answer applies.
"""

from __future__ import annotations

import json
import time
from datetime import date
from typing import Any

import pytest

from astrbot_plugin_engram.memory import Audience, Engram, Memory
from astrbot_plugin_engram.memory.chat import OpenAIChat
from astrbot_plugin_engram.memory.consolidation import ConsolidationSettings, Consolidator, Report
from astrbot_plugin_engram.memory.consolidation import run as consolidation_run
from astrbot_plugin_engram.memory.consolidation.actions import MalformedReply, parse_reply
from astrbot_plugin_engram.memory.prompts.answers import WrongShape, json_object

from .fake_openai import FakeOpenAI
from .test_consolidation import DM, GROUP, actions, add, ep, memories

GOOD = {"op": "add", "text": "Alice has a kitten called Miso", "kind": "fact", "about": ["qq:7"],
        "importance": 0.5, "scope": None, "sources": ["e1"], "when": None}


async def consolidate_once(engram: Engram, server: FakeOpenAI, reply: Any, timeout: float = 5.0) -> Report:
    await engram.record_many([ep(GROUP, "I have a kitten called Miso")])  # e1
    server.replies.append(reply)
    chat = OpenAIChat("m", server.base_url)
    con = Consolidator(engram, chat, ConsolidationSettings(backoff_seconds=0.0, timeout=timeout),
                       audience_for=lambda s: Audience(s))
    try:
        return await con.run(force=True)
    finally:  # an open client is closed by the garbage collector later, on a closed loop: noise
        await chat.close()


async def cursor(engram: Engram) -> int:
    return (await engram.store.cursors("consolidate:")).get(f"consolidate:{GROUP}", 0)


@pytest.mark.parametrize("reply, failure", [
    ("I think Alice has a kitten.", "malformed"),
    ('{"actions": [{"op": "add", "text": "Alice has a kit', "malformed"),
    ('{"memories": []}', "malformed"),
    ("", "error"),
    ({"status": 429}, "unavailable"),
    ({"status": 500}, "unavailable"),
    ({"reasoning": json.dumps({"actions": [GOOD]}), "content": ""}, "error"),
    ("<think>" + json.dumps({"actions": [GOOD]}) + "</think>", "error"),
    ('{"actions": [' + "[" * 5000 + "]" * 5000 + "]}", "malformed"),  # deeper than json reads: RecursionError
], ids=["not-json", "truncated", "no-actions", "empty", "http-429", "http-500", "only-reasoning",
        "only-think-block", "too-deep"])
async def test_a_broken_answer_applies_nothing_and_is_counted(engram: Engram, fake_openai: FakeOpenAI,
                                                              reply: Any, failure: str) -> None:
    report = await consolidate_once(engram, fake_openai, reply)
    assert report.failed[failure] == 1 and report.stats()[f"failed.{failure}"] == 1
    assert await memories(engram) == [] and await cursor(engram) == 0
    assert len(await engram.store.get_episodes([1])) == 1


async def test_a_timeout_applies_nothing_and_is_counted(engram: Engram, fake_openai: FakeOpenAI) -> None:
    slow = {"delay": 3, "content": json.dumps({"actions": [GOOD]})}
    report = await consolidate_once(engram, fake_openai, slow, timeout=0.5)
    assert report.failed["timeout"] == 1
    assert await memories(engram) == [] and await cursor(engram) == 0


@pytest.mark.parametrize("reply", [
    "Sure! Here are the actions:\n" + json.dumps({"actions": [GOOD]}) + "\nHope this helps.",
    "```json\n" + json.dumps({"actions": [GOOD]}, indent=2) + "\n```",
    "```\n" + json.dumps({"actions": [GOOD]}) + "\n```",
    json.dumps([GOOD]),
    {"reasoning": 'Maybe {"actions": [{"op": "add", "text": "WRONG", "sources": ["e1"]}]}',
     "content": json.dumps({"actions": [GOOD]})},
    "<think>the user has a cat; {\"actions\": []}</think>\n" + json.dumps({"actions": [GOOD]}),
], ids=["prose", "json-fence", "bare-fence", "bare-list", "reasoning-outside-content", "think-block"])
async def test_json_wrapped_in_prose_fences_or_reasoning_is_read(engram: Engram, fake_openai: FakeOpenAI,
                                                                 reply: Any) -> None:
    report = await consolidate_once(engram, fake_openai, reply)
    assert report.added == 1 and not report.failed
    assert [m.text for m in await memories(engram)] == ["Alice has a kitten called Miso"]
    assert await cursor(engram) == 1


@pytest.mark.parametrize("bad, reason", [
    ({"op": "add", "text": 42, "sources": ["e1"]}, "bad_field"),
    ({"op": "add", "text": "x", "sources": "nope"}, "bad_field"),
    ({"op": "add", "text": "x", "sources": ["e1"], "about": {"who": 1}}, "bad_field"),
    ({"op": "add", "text": "x", "sources": ["e1"], "importance": "very"}, "bad_field"),
    ({"op": "add", "text": "x", "sources": []}, "bad_field"),
    ("add this please", "bad_field"),
    ({"op": "delete", "id": "m1"}, "unknown_op"),
    ({"text": "no op"}, "unknown_op"),
    ({"op": "add", "text": "x", "sources": ["e999"]}, "foreign_source"),
    ({"op": "update", "id": "m999", "text": "x"}, "invented_id"),
    ({"op": "update", "id": "e1", "text": "x"}, "bad_field"),
    ({"op": "update", "id": 2**63, "text": "x"}, "bad_field"),
    ({"op": "update", "id": "\u00b2", "text": "x"}, "bad_field"),
    ({"op": "add", "text": "x", "sources": ["\u00b2"]}, "bad_field"),
], ids=["text-number", "sources-string", "about-object", "importance-word", "no-sources", "not-object",
        "delete-op", "no-op", "invented-episode", "invented-memory", "episode-as-memory",
        "id-past-sqlite-range", "id-superscript-digit", "source-superscript-digit"])
async def test_a_broken_action_is_refused_and_counted_the_rest_applies(
        engram: Engram, fake_openai: FakeOpenAI, bad: Any, reason: str) -> None:
    report = await consolidate_once(engram, fake_openai, actions(bad, GOOD))
    assert report.refused == {reason: 1} and report.added == 1
    assert [m.text for m in await memories(engram)] == ["Alice has a kitten called Miso"]
    assert await cursor(engram) == 1


async def test_an_update_of_a_memory_in_another_scope_is_refused(engram: Engram,
                                                                 fake_openai: FakeOpenAI) -> None:
    private = await engram.add_memory(Memory(text="Alice's secret: she is moving", scope=f"space:{DM}"))
    public = await engram.add_memory(Memory(text="The library opens at nine", scope="public"))
    owner = await engram.add_memory(Memory(text="owner's note", scope="owner"))
    acts = [{"op": "update", "id": f"m{i}", "text": f"overwritten {i}", "sources": ["e1"]}
            for i in (private, public, owner)]
    report = await consolidate_once(engram, fake_openai, actions(*acts))
    assert report.refused == {"other_scope": 3} and report.updated == 0
    assert {m.text for m in await memories(engram)} == {"Alice's secret: she is moving",
                                                        "The library opens at nine", "owner's note"}


async def test_a_public_hint_for_a_private_fact_is_refused_and_narrowed(engram: Engram,
                                                                        fake_openai: FakeOpenAI) -> None:
    report = await consolidate_once(engram, fake_openai, actions(add("Alice has a kitten", ["e1"], [],
                                                                     scope="public")))
    assert report.refused == {"wider_scope": 1}
    assert [m.scope for m in await memories(engram)] == [f"space:{GROUP}"]


async def test_two_updates_of_one_memory_apply_once(engram: Engram, fake_openai: FakeOpenAI) -> None:
    mid = await engram.add_memory(Memory(text="Alice has a cat", scope=f"space:{GROUP}"))
    report = await consolidate_once(engram, fake_openai, actions(
        {"op": "update", "id": f"m{mid}", "text": "Alice has a kitten", "sources": ["e1"]},
        {"op": "update", "id": f"m{mid}", "text": "Alice has two kittens"}))
    assert report.updated == 1 and report.refused == {"invented_id": 1}
    assert [m.text for m in await memories(engram)] == ["Alice has a kitten"]


@pytest.mark.parametrize("when", ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-12:00", "0001-01-01"])
async def test_a_when_at_the_ends_of_the_calendar_gives_way_to_the_sources_time(
        engram: Engram, fake_openai: FakeOpenAI, when: str) -> None:
    """Such a time is a valid datetime whose UTC instant is not: stored, it made the memory unreadable."""
    report = await consolidate_once(engram, fake_openai, actions(dict(GOOD, when=when)))
    assert report.added == 1 and not report.failed
    [m] = await memories(engram)
    assert m.valid_from == (await engram.get_episode(1)).time


async def test_a_naive_when_is_checked_as_utc_as_it_is_stored(
        engram: Engram, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a host ahead of UTC a naive 9999-01-01T05:00 passed the check in local time, then the store
    (which takes it as UTC) refused it and the whole run failed."""
    monkeypatch.setenv("TZ", "Etc/GMT-14")
    time.tzset()
    try:
        report = await consolidate_once(engram, fake_openai, actions(dict(GOOD, when="9999-01-01T05:00")))
    finally:
        monkeypatch.undo()
        time.tzset()
    assert report.added == 1 and not report.failed
    [m] = await memories(engram)
    assert m.valid_from == (await engram.get_episode(1)).time


@pytest.mark.parametrize("reply", ['{"actions": [' + "[" * 100_000 + "]" * 100_000 + "]}", '{"a": ' * 50_000])
def test_a_long_answer_full_of_brackets_is_refused_quickly(reply: str) -> None:
    """JSON inside prose is looked for from the first brackets only: from every one of them, each try
    reading to the end, such an answer held the event loop for 6-10 seconds."""
    started = time.perf_counter()
    with pytest.raises(MalformedReply):
        parse_reply(reply)
    with pytest.raises(WrongShape):
        json_object(reply, ("entry",))
    assert time.perf_counter() - started < 2.0  # about 0.05 s; 6-10 s before


async def test_an_action_that_trips_an_unforeseen_error_is_refused_alone(
        engram: Engram, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    # a stand-in for a defect no check knows of yet (the kind the audits kept finding: OverflowError,
    # RecursionError, a date off the calendar): it must cost one action, not the batch or every run
    real = consolidation_run._people

    def people(about: Any, names: dict[str, str]) -> tuple[str, ...]:
        if "boom" in about:
            raise OverflowError("a defect")
        return real(about, names)

    monkeypatch.setattr(consolidation_run, "_people", people)
    report = await consolidate_once(engram, fake_openai, actions(add("x", ["e1"], about=["boom"]), GOOD))
    assert report.refused == {"unforeseen": 1} and report.added == 1 and not report.failed
    assert [m.text for m in await memories(engram)] == ["Alice has a kitten called Miso"]
    assert await cursor(engram) == 1
    # the defect is found from the log (its type and where), without the message: it may hold the
    # model's text, which may repeat what users said (issue 28, defect 5)
    assert "OverflowError at test_consolidation_bad_input.py:" in caplog.text


@pytest.mark.parametrize("zone", ["America/New_York", "Europe/Berlin", "UTC", "Asia/Shanghai"])
async def test_a_date_the_model_gives_is_that_day_in_the_bots_timezone(
        engram: Engram, fake_openai: FakeOpenAI, zone: str) -> None:
    """The model reads the lines in the bot's zone and answers "when": "2026-05-01". Taken as midnight
    UTC, the memory was dated April 30 in New York, and in Berlin or UTC it fell before 4 am, in the
    bot's April 30: "yesterday" and "on May 1" missed it by a day."""
    from zoneinfo import ZoneInfo

    from astrbot_plugin_engram.memory.clock import day_of

    tz = ZoneInfo(zone)
    await engram.record_many([ep(GROUP, "I have a kitten called Miso")])
    fake_openai.replies.append(actions(dict(GOOD, when="2026-05-01")))
    chat = OpenAIChat("m", fake_openai.base_url)
    con = Consolidator(engram, chat, ConsolidationSettings(backoff_seconds=0.0, timeout=5.0),
                       audience_for=lambda s: Audience(s), tz=tz)
    try:
        assert (await con.run(force=True)).added == 1
    finally:
        await chat.close()
    [m] = await memories(engram)
    assert m.valid_from is not None and day_of(m.valid_from, tz) == date(2026, 5, 1)
    assert m.valid_from.astimezone(tz).date() == date(2026, 5, 1)
