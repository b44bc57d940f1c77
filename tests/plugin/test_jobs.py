"""Consolidation inside the plugin: AstrBot's chat provider as the model, /mem consolidate and
/mem stats, the K-new-messages trigger, dated notes, and start/stop of the scheduler."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from astrbot_plugin_engram.memory.errors import ChatError
from astrbot_plugin_engram.plugin.config import Settings
from astrbot_plugin_engram.plugin.events import place_audience
from astrbot_plugin_engram.plugin.jobs.background import Jobs
from astrbot_plugin_engram.plugin.providers import Providers
from astrbot_plugin_engram.plugin.service import EngramService
from astrbot_plugin_engram.scheduler.runner import LIVE

from ..fake_openai import batch_lines
from .conftest import OWNER, FakeContext, FakeProvider, MakeService, event, request
from .test_commands import mem

MAY_2026 = 1_777_600_000  # 2026-05-01


@dataclass
class Usage:
    input: int = 120
    output: int = 30


@dataclass
class ScriptedContext(FakeContext):
    """AstrBot's context whose chat provider answers consolidation prompts from a script."""

    answers: list[Any] = field(default_factory=list)

    async def llm_generate(self, *, chat_provider_id: str, **kwargs: Any) -> Any:
        self.prompts.append({"provider": chat_provider_id, **kwargs})
        answer = self.answers.pop(0) if self.answers else about_everyone
        if isinstance(answer, BaseException):
            raise answer
        if isinstance(answer, float):
            await asyncio.sleep(answer)
            answer = ""
        text = answer(kwargs) if callable(answer) else answer
        return type("Resp", (), {"completion_text": text, "usage": Usage()})()


def about_everyone(kwargs: dict[str, Any]) -> str:
    """One memory per line said, about its speaker."""
    lines = batch_lines({"messages": [{"role": "user", "content": kwargs["prompt"]}]})
    return json.dumps({"actions": [{"op": "add", "text": f"{who} said {text}", "kind": "fact", "about": [who],
                                    "sources": [f"e{i}"]} for i, who, text in lines]})


def context(*answers: Any) -> ScriptedContext:
    return ScriptedContext(chats=[FakeProvider("chat1")], answers=list(answers))


async def jobs_for(make_service: MakeService, ctx: ScriptedContext,
                   **settings: Any) -> tuple[EngramService, Jobs]:
    svc = make_service(Settings(owner_ids=(OWNER,), **settings), ctx)
    jobs = Jobs(svc, catch_up_delay=3600)
    await jobs.start()
    return svc, jobs


async def say(svc: EngramService, text: str, sender: str = "alice", group: str | None = "g1",
              timestamp: int | None = None) -> None:
    svc.record_message(event(text, sender, group, timestamp=timestamp))
    await svc.flush()


async def test_the_astrbot_provider_is_a_chat_model_with_token_counts() -> None:
    ctx = context("<think>hmm</think>{\"actions\": []}")
    result = await Providers(ctx).chat_model().complete(
        [{"role": "system", "content": "sys"}, {"role": "user", "content": "lines"}], json=True)
    assert (result.text, result.prompt_tokens, result.completion_tokens) == ('{"actions": []}', 120, 30)
    assert ctx.prompts[0]["system_prompt"] == "sys" and ctx.prompts[0]["prompt"] == "lines"


async def test_a_missing_or_failing_provider_is_a_chat_error() -> None:
    with pytest.raises(ChatError, match="no chat provider") as missing:
        await Providers(ScriptedContext()).chat_model().complete([{"role": "user", "content": "x"}])
    assert missing.value.transient
    with pytest.raises(ChatError, match="boom") as failing:
        await Providers(context(RuntimeError("boom"))).chat_model().complete([{"role": "user",
                                                                               "content": "x"}])
    assert failing.value.transient
    with pytest.raises(ChatError, match="timed out"):
        await Providers(context(5.0)).chat_model().complete([{"role": "user", "content": "x"}], timeout=0.1)


async def test_mem_consolidate_turns_messages_into_memories_and_says_so(make_service: MakeService) -> None:
    svc, jobs = await jobs_for(make_service, context())
    await say(svc, "I just adopted a kitten named Miso")
    await say(svc, "My birthday is on June 3rd", "bob")
    reply = await mem(svc, "mem consolidate", group="g1")
    assert reply.startswith("Consolidated: 2 added, 0 updated, from 2 lines, 1 model call")
    assert "kitten named Miso" in reply and "[space:qq:group:g1]" in reply
    stats = await mem(svc, "mem stats", group="g1")
    assert "job consolidate: last run" in stats and "(ok)" in stats
    assert "added" not in stats  # what the jobs did counts every place (tests/plugin/test_red_team.py)
    assert "in all added 2, updated 0, 1 model call" in await mem(svc, "mem stats")
    await jobs.stop()


async def test_with_no_owner_configured_an_owner_memory_stays_in_its_place(make_service: MakeService) -> None:
    """A memory the model scoped ``owner`` while ``owner_ids`` is empty was filed where no chat shows it."""
    def owner_scoped(kwargs: dict[str, Any]) -> str:
        lines = batch_lines({"messages": [{"role": "user", "content": kwargs["prompt"]}]})
        return json.dumps({"actions": [{"op": "add", "text": f"{who} said {text}", "about": [],
                                        "scope": "owner", "sources": [f"e{i}"]} for i, who, text in lines]})

    svc = make_service(Settings(), context(owner_scoped))
    jobs = Jobs(svc, catch_up_delay=3600)
    await jobs.start()
    await say(svc, "the wifi password is on the fridge")
    reply = await mem(svc, "mem consolidate", group="g1")
    assert reply.startswith("Consolidated: 1 added") and "[space:qq:group:g1]" in reply, reply
    assert "wifi password" in await mem(svc, "mem list", group="g1")
    await jobs.stop()


async def test_mem_consolidate_of_a_place_with_no_lines_says_so(make_service: MakeService) -> None:
    """A mistyped place answered 'Consolidated qq:grup:g1: 0 added, ... from 0 lines', like a success."""
    svc, jobs = await jobs_for(make_service, context())
    await say(svc, "the picnic is on Sunday", "bob", "g1")
    assert await mem(svc, "mem consolidate qq:grup:g1") == (  # the owner's private chat names any place
        "Engram: no place 'qq:grup:g1' has any lines; nothing was consolidated (this place is "
        "qq:private:owner1).")
    assert await mem(svc, "mem consolidate qq:grup:g1", group="g1") == (  # a group only itself
        "Engram: no place 'qq:grup:g1' here (name another place only in the owner's private chat)")
    assert (await mem(svc, "mem consolidate qq:group:g1", group="g1")).startswith(
        "Consolidated qq:group:g1: 1 added, 0 updated, from 1 line,")
    await jobs.stop()


async def test_what_other_places_learned_stays_hidden(make_service: MakeService) -> None:
    svc, jobs = await jobs_for(make_service, context())
    await say(svc, "my secret: I am changing jobs", "alice", None)
    await say(svc, "the picnic is on Sunday", "bob", "g1")
    reply = await mem(svc, "mem consolidate", group="g1")  # this place's lines only (test_red_team.py)
    assert "picnic" in reply and "changing jobs" not in reply and "other places" not in reply
    reply = await mem(svc, "mem consolidate", group="g2")  # g2 has no new lines: nothing of alice's
    assert "0 added" in reply and "changing jobs" not in reply
    reply = await mem(svc, "mem consolidate", "bob")  # bob's private chat sees alice's no more
    assert "changing jobs" not in reply and "(1 new memories of other places not shown here)" not in reply
    await jobs.stop()


async def test_bad_answers_and_refusals_are_counted_and_shown_in_stats(make_service: MakeService) -> None:
    refused = json.dumps({"actions": [{"op": "add", "text": "x", "sources": ["e99"]},
                                      {"op": "update", "id": "m42", "text": "y"}, {"op": "dance"}]})
    svc, jobs = await jobs_for(make_service, context("not json", refused))
    await say(svc, "hello there")
    first = await mem(svc, "mem consolidate")
    assert "failed malformed 1" in first
    second = await mem(svc, "mem consolidate")
    assert "refused foreign source 1, invented id 1, unknown op 1" in second
    stats = await mem(svc, "mem stats")
    assert "refused: foreign source 1, invented id 1, unknown op 1" in stats
    assert "failed calls: malformed 1" in stats
    await jobs.stop()


async def test_k_new_messages_in_one_place_start_a_consolidation(make_service: MakeService) -> None:
    ctx = context()
    svc, jobs = await jobs_for(make_service, ctx, consolidate_after_episodes=3)
    for i in range(2):
        await say(svc, f"line {i} about the garden")
    await asyncio.sleep(0.05)
    assert ctx.prompts == []
    await say(svc, "line 2 about the garden")
    await jobs.scheduler.idle()
    assert len(ctx.prompts) == 1
    assert len([h for h in await svc.recall(place_audience("qq:group:g1", svc.settings), "garden", 10)
                if h.kind == "memory"]) == 3
    await jobs.stop()


async def test_an_injected_consolidated_memory_shows_when_it_happened(make_service: MakeService) -> None:
    svc, jobs = await jobs_for(make_service, context())
    await say(svc, "We adopted a parrot called Kiwi", timestamp=MAY_2026)
    await jobs.consolidate_now()
    ev = event("what is our parrot called?", "alice", "g1")
    req = request("what is our parrot called?")
    inj = await svc.inject(ev, req)
    assert inj is not None and any(h.kind == "memory" for h in inj.injected)
    block = inj.text
    [line] = [s for s in block.splitlines() if "about Alice:" in s]
    assert line.startswith("- 2026-05-01") and "Kiwi" in line  # when it was said, not consolidated
    await jobs.stop()


async def test_the_owners_private_chat_keeps_its_memories_for_the_owner() -> None:
    s = Settings(owner_ids=(OWNER,))
    assert place_audience(f"qq:private:{OWNER}", s, ["qq", "webchat"]).owner_private
    assert not place_audience("qq:private:alice", s, ["qq", "webchat"]).owner_private
    assert not place_audience(f"qq:group:{OWNER}", s, ["qq", "webchat"]).owner_private
    # a bare owner id is one person only while the bot has one chat platform (issue 9)
    assert not place_audience(f"tg:private:{OWNER}", s, ["qq", "tg"]).owner_private
    full = Settings(owner_ids=(f"tg:{OWNER}",))
    assert place_audience(f"tg:private:{OWNER}", full, ["qq", "tg"]).owner_private


async def test_a_restarted_plugin_runs_its_jobs_once(make_service: MakeService) -> None:
    ctx = context()
    svc = make_service(Settings(owner_ids=(OWNER,)), ctx)
    old, new = Jobs(svc, catch_up_delay=3600), Jobs(svc, catch_up_delay=3600)
    await old.start()
    await new.start()  # a reload whose terminate() never came: the old scheduler is stopped
    assert not old.scheduler.running and new.scheduler.running
    assert [s for s in LIVE.values() if s.key == new.scheduler.key] == [new.scheduler]
    await new.stop()
    assert new.scheduler.key not in LIVE


async def test_fading_and_merging_are_jobs_whose_counts_show_in_stats(make_service: MakeService) -> None:
    from datetime import datetime, timezone

    from astrbot_plugin_engram.memory import Memory

    svc, jobs = await jobs_for(make_service, context())
    assert {j.name for j in jobs.registry} >= {"consolidate", "fade", "merge"}
    e = await svc.memory()
    await e.add_memory(Memory(text="an old detail", scope="public",
                              created_at=datetime(2025, 1, 1, tzinfo=timezone.utc)))
    await jobs.scheduler.run_now("fade")
    await jobs.scheduler.run_now("merge")
    stats = await mem(svc, "mem stats")
    assert "1 archived" in stats
    assert "job fade: last run" in stats and "last run archived 1, protected 0; in all archived 1" in stats
    assert "job merge: last run" in stats and "last run merged 0, kept apart 0, failed 0" in stats
    await jobs.stop()
