"""A sense of self inside the plugin: identity, self-image, inner state, abilities and time in the
injected block; identity proposals decided by the owner only; the diary and self-image jobs."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from astrbot_plugin_engram.memory import Memory
from astrbot_plugin_engram.memory.clock import day_of
from astrbot_plugin_engram.memory.self.inner_state import InnerState, state_path
from astrbot_plugin_engram.memory.self.proposals import MAX_PENDING
from astrbot_plugin_engram.plugin import tools as self_commands  # identity_propose, the model's tool
from astrbot_plugin_engram.plugin.abilities import Abilities
from astrbot_plugin_engram.plugin.config import Settings
from astrbot_plugin_engram.plugin.jobs.background import Jobs
from astrbot_plugin_engram.plugin.jobs.self_jobs import SelfJobs
from astrbot_plugin_engram.plugin.providers import timezone_of
from astrbot_plugin_engram.plugin.service import EngramService
from astrbot_plugin_engram.scheduler.self_jobs import DIARY

from .conftest import OWNER, FakeContext, FakeProvider, MakeService, event
from .test_commands import mem
from .test_inject import ask, injected


def write(svc: EngramService, rel: str, data: str | bytes) -> Path:
    path = svc.data_dir / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, "utf-8")
    return path


# ---- identity ---------------------------------------------------------------------------------
async def test_the_core_identity_comes_from_identity_self_md(service: EngramService) -> None:
    write(service, "identity/self.md", "I am Mochi, a cheerful cat bot.")
    _, req, _ = await ask(service, "who are you?", "alice")
    assert "Who you are (your own notes):\nI am Mochi, a cheerful cat bot." in injected(req)


async def test_a_huge_identity_is_shortened_to_fit_and_logged(make_service: MakeService,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    svc = make_service(Settings(inject_budget_tokens=300))
    write(svc, "identity/self.md", "I am Mochi. " + "I like naps in the sun. " * 30000)  # ~700 KB
    with caplog.at_level(logging.WARNING):
        _, req, inj = await ask(svc, "hi", "alice")
    assert inj is not None and "Who you are (your own notes):\nI am Mochi." in injected(req)
    assert "larger than 64 KiB" in caplog.text and "only its beginning is injected" in caplog.text


async def test_a_non_utf8_identity_is_reported_and_the_bot_still_replies(
        service: EngramService, caplog: pytest.LogCaptureFixture) -> None:
    write(service, "identity/self.md", "我是一只猫".encode("gbk"))
    with caplog.at_level(logging.ERROR):
        _, req, inj = await ask(service, "hi", "alice")
        await ask(service, "hi again", "alice")
    assert inj is not None and "<engram-memory>" in injected(req) and "Who you are" not in injected(req)
    assert caplog.text.count("is not UTF-8 text") == 1  # once, not per reply


async def test_identity_can_be_switched_off(make_service: MakeService) -> None:
    svc = make_service(Settings(identity_enabled=False))
    write(svc, "identity/self.md", "I am Mochi.")
    _, req, _ = await ask(svc, "hi", "alice")
    assert "I am Mochi" not in injected(req)


# ---- self-image, inner state ------------------------------------------------------------------
async def test_the_self_image_is_injected_when_present_and_not_when_off(make_service: MakeService) -> None:
    on, off = make_service(), make_service(Settings(self_image_enabled=False), data_dir=None)
    for svc in (on, off):
        write(svc, "identity/self-image.md", "I have grown fond of quiet evenings.")
    _, req, _ = await ask(on, "hi", "alice")
    assert "How you see yourself lately (your own words): I have grown fond of quiet" in injected(req)
    _, req, _ = await ask(off, "hi", "bob")
    assert "quiet evenings" not in injected(req)


def _save_state(svc: EngramService, state: InnerState) -> None:
    write(svc, "identity/inner-state.json", json.dumps(state.__dict__))


async def test_what_is_on_its_mind_reaches_only_the_owners_private_chat(service: EngramService) -> None:
    now = datetime.now(timezone.utc)
    _save_state(service, InnerState("cheerful", 0.7, 0.8, "Alice's surgery on Friday", now.isoformat()))
    _, owner_req, _ = await ask(service, "hi", OWNER)
    _, group_req, _ = await ask(service, "hi", "bob", group="g1")
    _, other_req, _ = await ask(service, "hi", "bob")
    assert "How you feel: cheerful" in owner_req.extra_user_content_parts[0].text
    assert "Alice's surgery" in injected(owner_req)
    for req in (group_req, other_req):
        assert "How you feel: cheerful" in injected(req) and "surgery" not in injected(req)


async def test_the_inner_state_drifts_back_to_the_baseline(make_service: MakeService) -> None:
    svc = make_service(Settings(baseline_mood="serene"))
    long_ago = datetime.now(timezone.utc) - timedelta(days=2)
    _save_state(svc, InnerState("furious", -0.9, 0.1, "a fight", long_ago.isoformat()))
    _, req, _ = await ask(svc, "hi", OWNER)
    assert "How you feel: serene" in injected(req) and "furious" not in injected(req)
    assert "a fight" not in injected(req)


# ---- abilities --------------------------------------------------------------------------------
@dataclass
class Tool:
    name: str
    description: str
    active: bool = True


@dataclass
class ToolContext(FakeContext):
    tools: list[Tool] = field(default_factory=list)

    def get_llm_tool_manager(self) -> Any:
        return type("Manager", (), {"func_list": self.tools})()


async def test_abilities_list_the_registered_tools_and_follow_changes(make_service: MakeService,
                                                                      tmp_path: Path) -> None:
    from astrbot_plugin_engram.plugin.abilities import astrbot_tools

    ctx = ToolContext(tools=[Tool("memory_recall", "Recall what you remember. Only this chat."),
                             Tool("web_search", "Search the web for a query"),
                             Tool("off", "x", active=False)])
    abilities = Abilities(tmp_path / "data", lambda: astrbot_tools(ctx), lambda: ["/help", "/mem"])
    svc = make_service(context=ctx)
    svc.selfhood.abilities = abilities
    write(svc, "identity/abilities.md", "You can also sing.")
    _, req, _ = await ask(svc, "what can you do?", "alice")
    text = injected(req)
    assert "memory_recall (Recall what you remember)" in text and "web_search" in text and "off (" not in text
    assert "commands people can send: /help, /mem" in text and "the owner's notes: You can also sing." in text
    assert abilities.text() and abilities.builds == 1  # unchanged: not rebuilt
    ctx.tools.append(Tool("draw", "Draw a picture"))
    assert "draw (Draw a picture)" in abilities.text() and abilities.builds == 2


# ---- time -------------------------------------------------------------------------------------
def test_no_or_an_unknown_timezone_falls_back_to_the_hosts(caplog: pytest.LogCaptureFixture) -> None:
    from astrbot_plugin_engram.memory.clock import host_timezone

    with caplog.at_level(logging.WARNING):
        assert timezone_of(Settings(timezone="Nowhere/City"), FakeContext()) == host_timezone()
    assert "unknown timezone 'Nowhere/City'" in caplog.text
    assert str(timezone_of(Settings(), FakeContext(config={"timezone": "Asia/Tokyo"}))) == "Asia/Tokyo"
    tokyo = FakeContext(config={"timezone": "Asia/Tokyo"})
    assert str(timezone_of(Settings(timezone="Europe/Paris"), tokyo)) == "Europe/Paris"


def test_an_unknown_engram_timezone_falls_back_to_astrbots_before_the_hosts(
        caplog: pytest.LogCaptureFixture) -> None:
    """A typo in Engram's own key used to drop AstrBot's zone too (Asia/Shanghai by default) for the
    host's: on a server in UTC the bot's days then ended at noon in Shanghai."""
    shanghai = FakeContext(config={"timezone": "Asia/Shanghai"})
    with caplog.at_level(logging.WARNING):
        assert str(timezone_of(Settings(timezone="Beijing"), shanghai)) == "Asia/Shanghai"
    assert "unknown timezone 'Beijing'" in caplog.text and "AstrBot's (Asia/Shanghai)" in caplog.text

async def test_a_month_named_in_a_question_is_the_bots_month_not_utcs(make_service: MakeService) -> None:
    """Said at 07:00 on June 1 in Shanghai (May 31 in UTC): messages were kept in UTC, so "in June"
    did not count them as June's (the ranker's date_match), while the note itself said 2026-06-01."""
    from zoneinfo import ZoneInfo

    from astrbot_plugin_engram.memory import Audience

    sh = ZoneInfo("Asia/Shanghai")
    svc = make_service()
    svc.tz = sh
    june = int(datetime(2026, 6, 1, 7, 0, tzinfo=sh).timestamp())
    may = int(datetime(2026, 5, 20, 12, 0, tzinfo=sh).timestamp())
    svc.record_message(event("we planted tomatoes in the garden", "alice", timestamp=june))
    svc.record_message(event("we planted roses in the garden", "alice", timestamp=may))
    await svc.flush()
    hits = await (await svc.memory()).recall("what did we plant in June?", Audience("qq:private:alice"), 5)
    assert {h.text: h.features["date_match"] for h in hits} == {
        "we planted tomatoes in the garden": 1.0, "we planted roses in the garden": 0.0}

async def test_in_a_group_the_time_since_a_person_counts_only_that_group(service: EngramService) -> None:
    now = int(datetime.now().timestamp())
    service.record_message(event("psst, private", "bob", timestamp=now - 3600))
    service.record_message(event("hello group", "bob", group="g1", timestamp=now - 3 * 3600))
    _, req, _ = await ask(service, "hello me", "bob")  # a private chat counts the person's lines anywhere
    assert "Bob last wrote to you 1 hour ago." in injected(req)
    _, req, _ = await ask(service, "hello again", "bob", group="g1")  # the group counts only its own
    assert "Bob last wrote to you 3 hours ago." in injected(req)
    _, req, _ = await ask(service, "hello there", "bob", group="g2")
    assert "This is the first time Bob writes to you." in injected(req)


# ---- proposals --------------------------------------------------------------------------------
async def test_the_model_proposes_and_only_the_owner_approves(service: EngramService) -> None:
    write(service, "identity/self.md", "I am Mochi.")
    answer = await self_commands.identity_propose(service, event("x", "alice"), "I adore rainy days.",
                                                  "rain came up every day this week")
    assert answer.startswith("Proposed (#1)") and "only if the owner approves" in answer
    listed = await mem(service, "/mem proposals")
    assert "#1" in listed and "I adore rainy days." in listed
    # mallory is an admin, not the owner
    assert "only the bot's owner" in await mem(service, "/mem approve 1", sender="mallory")
    assert "only the bot's owner" in await mem(service, "/mem proposals", sender="mallory")
    assert (service.data_dir / "identity/self.md").read_text("utf-8") == "I am Mochi."
    assert "Approved #1" in await mem(service, "/mem approve 1")
    text = (service.data_dir / "identity/self.md").read_text("utf-8")
    assert text.startswith("I am Mochi.") and "(approved proposal #1)\n\nI adore rainy days." in text
    assert len(list((service.data_dir / "identity/history").iterdir())) == 1
    _, req, _ = await ask(service, "hi", "alice")
    assert "I adore rainy days." in injected(req)


async def test_a_rejected_proposal_changes_nothing(service: EngramService) -> None:
    write(service, "identity/self.md", "I am Mochi.")
    await self_commands.identity_propose(service, event("x", "alice"), "I am a dog now.", "")
    assert "Rejected #1" in await mem(service, "/mem reject #1")
    assert (service.data_dir / "identity/self.md").read_text("utf-8") == "I am Mochi."
    assert "already rejected" in await mem(service, "/mem approve 1")
    assert "No identity proposal waits" in await mem(service, "/mem proposals")
    assert "not a proposal number" in await mem(service, "/mem approve soon")


async def test_a_proposal_flood_is_capped(service: EngramService) -> None:
    ev = event("x", "alice")
    for i in range(MAX_PENDING):
        await self_commands.identity_propose(service, ev, f"change {i}", "")
    answer = await self_commands.identity_propose(service, ev, "one more", "")
    assert answer.startswith("Not proposed:") and f"{MAX_PENDING} proposals already wait" in answer
    listed = await mem(service, "/mem proposals")
    assert "change 0" in listed and "one more" not in listed
    wrong = await self_commands.identity_propose(service, ev, 42, "")
    assert wrong.startswith("error: change must be a string")


@pytest.mark.parametrize("saved", ["{not json", '{"next_id": 2, "items": [{"id": 1}]}', "[]"])
async def test_an_unreadable_proposals_file_gets_a_clear_answer_and_is_left_as_it_is(
        service: EngramService, saved: str) -> None:
    """The model got a JSONDecodeError raised out of its tool, the owner '/mem proposals failed'."""
    path = write(service, "identity/proposals.json", saved)
    answer = await self_commands.identity_propose(service, event("x", "alice"), "I adore rain.", "")
    assert answer.startswith("error: identity/proposals.json cannot be read")
    for line in ("/mem proposals", "/mem approve 1", "/mem reject 1"):
        assert (await mem(service, line)).startswith("Engram: identity/proposals.json cannot be read")
    assert path.read_text("utf-8") == saved


async def test_proposals_can_be_switched_off(make_service: MakeService) -> None:
    svc = make_service(Settings(owner_ids=(OWNER,), proposals_enabled=False))
    assert "switched off" in await self_commands.identity_propose(svc, event("x", "alice"), "x", "")


# ---- the diary and self-image jobs -------------------------------------------------------------
@dataclass
class DiaryContext(FakeContext):
    answers: list[str] = field(default_factory=list)

    async def llm_generate(self, *, chat_provider_id: str, **kwargs: Any) -> Any:
        self.prompts.append({"provider": chat_provider_id, **kwargs})
        return type("Resp", (), {"completion_text": self.answers.pop(0)})()


@asynccontextmanager
async def diary_jobs(svc: EngramService, said: str) -> AsyncIterator[tuple[Jobs, datetime]]:
    """The diary and self-image jobs of ``svc``, started (stopped after), and the noon two days ago at
    which alice said ``said`` in her private chat: a finished day whatever the hour now (a day ends at 4)."""
    svc.tz = timezone.utc
    noon = (datetime.now(timezone.utc) - timedelta(days=2)).replace(hour=12)
    svc.record_message(event(said, "alice", timestamp=int(noon.timestamp())))
    await svc.flush()
    jobs = Jobs(svc, catch_up_delay=3600)
    SelfJobs(jobs)
    await jobs.start()
    try:
        yield jobs, noon
    finally:
        await jobs.stop()


async def test_the_diary_job_writes_yesterday_then_the_self_image_follows(make_service: MakeService) -> None:
    ctx = DiaryContext(chats=[FakeProvider("chat1")], answers=[
        json.dumps({"entry": "I talked about tea with a friend."}),
        json.dumps({"mood": "content", "valence": 0.4, "energy": 0.6, "on_mind": "tea"}),
        json.dumps({"self_image": "I enjoy small talk about tea."})])
    svc = make_service(Settings(owner_ids=(OWNER,), timezone="UTC"), ctx)
    async with diary_jobs(svc, "shall we have tea?") as (jobs, noon):
        report = await jobs.scheduler.run_now(DIARY)
        await jobs.scheduler.idle()
    assert [r.status for r in report.written] == ["written"] and report.inner_state
    day = report.written[0].day
    assert day == noon.date()
    diary = (svc.data_dir / "diary" / f"{day}.md").read_text("utf-8")
    assert diary.endswith("I talked about tea with a friend.\n")
    image = (svc.data_dir / "identity/self-image.md").read_text("utf-8")
    assert image.strip() == "I enjoy small talk about tea."
    assert state_path(svc.data_dir).exists()
    assert "shall we have tea?" in str(ctx.prompts[0])
    status = await jobs.status()
    assert status["diary"]["stats"]["diaries"] == 1 and status["self-image"]["stats"]["written"] == 1


async def test_diary_off_registers_no_job(make_service: MakeService) -> None:
    svc = make_service(Settings(owner_ids=(OWNER,), diary_enabled=False))
    jobs = Jobs(svc, catch_up_delay=3600)
    SelfJobs(jobs)
    assert [j.name for j in jobs.registry] == ["consolidate", "fade", "merge", "check", "backup"]
    assert svc.self_jobs is None
    assert "not running" in await mem(svc, "/mem diary")


async def test_everything_about_itself_stays_within_the_budget_and_leaves_room_for_notes(
        make_service: MakeService) -> None:
    from astrbot_plugin_engram.memory.text.words import approx_tokens

    svc = make_service(Settings(inject_budget_tokens=600))
    write(svc, "identity/self.md", "I am Mochi. " * 30)
    write(svc, "identity/self-image.md", "I have grown fond of quiet evenings. " * 100)  # too long to fit
    _save_state(svc, InnerState("content", 0.2, 0.5, "", datetime.now(timezone.utc).isoformat()))
    svc.record_message(event("my tea is oolong", "alice"))
    _, req, inj = await ask(svc, "which tea do I like?", "alice")
    block = injected(req).split("You are a bot.")[0]
    assert approx_tokens(block) <= 600
    assert "I am Mochi." in block and "How you feel: content" in block
    assert "quiet evenings" not in block  # it did not fit whole, so it was left out
    assert inj is not None and inj.injected and "oolong" in block


async def test_mem_diary_answers_a_date_it_cannot_use_with_its_usage(make_service: MakeService) -> None:
    ctx = DiaryContext(chats=[FakeProvider("c")], answers=[json.dumps({"entry": "a morning of tea"})])
    svc = make_service(Settings(owner_ids=(OWNER,), timezone="UTC"), ctx)
    svc.record_message(event("tea this morning", "alice"))
    await svc.flush()
    jobs = Jobs(svc, catch_up_delay=3600)
    SelfJobs(jobs)
    await jobs.start()
    try:
        usage = "\nUsage: /mem diary [YYYY-MM-DD] [--force]"
        assert await mem(svc, "/mem diary 2026-02-30") == "'2026-02-30' is not a date like 2026-11-30" + usage
        for day in ("9999-12-31", "0001-01-01"):  # 9999-12-31: 'failed (OverflowError); see the log'
            assert await mem(svc, f"/mem diary {day}") == f"'{day}' is out of range (years 2 to 9998)" + usage
        assert await mem(svc, "/mem diary 2020-06-01") == "2020-06-01: nothing was lived that day; no diary."
        # today's diary, written now, stood for the whole day: the end-of-day job found it and stopped
        today = day_of(datetime.now(timezone.utc), svc.tz, svc.settings.diary_boundary_hour)
        for unended in (today, today + timedelta(days=400)):
            assert await mem(svc, f"/mem diary {unended}") == (
                f"Engram: {unended} has not ended yet (a day ends at 4:00 the next morning); "
                "its diary is written once it has.")
        assert await (await svc.memory()).store.memory_ids_of_kind("diary") == [] and not ctx.prompts
        # not silently the diary of 2026-11-30 (was the owner's 'forse' meant as --force?)
        assert await mem(svc, "/mem diary 2026-11-30 forse") == (
            "one date at most, not '2026-11-30 forse'" + usage)
    finally:
        await jobs.stop()


def _slow_open(monkeypatch: pytest.MonkeyPatch) -> None:
    """The store's file is open and its index still loading when the caller's time runs out."""
    import asyncio

    from astrbot_plugin_engram.memory.index import Indexes

    load = Indexes.load

    async def slow(self: Indexes, *args: Any, **kw: Any) -> None:
        await asyncio.sleep(0.3)
        await load(self, *args, **kw)

    monkeypatch.setattr(Indexes, "load", slow)


def _threads() -> set[Any]:
    import threading

    return {t for t in threading.enumerate() if not t.daemon and t.is_alive()}


async def test_a_reply_cancelled_while_the_store_opens_leaves_no_open_file_behind(
        make_service: MakeService, monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    _slow_open(monkeypatch)
    svc = make_service()
    before = _threads()
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(svc.memory(), 0.1)  # the reply's time limit hits mid-open
    mem = await svc.memory()  # the next caller gets that same open, not a second one
    assert mem is svc.engram
    await svc.close()
    await asyncio.sleep(0.05)
    assert _threads() <= before


async def test_close_takes_an_open_whose_caller_was_cancelled(make_service: MakeService,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    _slow_open(monkeypatch)
    svc = make_service()
    before = _threads()
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(svc.memory(), 0.1)
    await svc.close()  # no caller came back for it: close() closes it
    await asyncio.sleep(0.05)
    assert svc.engram is None and _threads() <= before


@pytest.mark.parametrize("saved", ["{not json", json.dumps(
    {"mood": "cheerful", "valence": 0.5, "energy": 0.5, "updated_at": "yesterday"})])
async def test_a_broken_inner_state_file_means_the_baseline_logged_once(
        service: EngramService, caplog: pytest.LogCaptureFixture, saved: str) -> None:
    """A time it cannot read (the owner may edit the file) made every injection fail, memories too."""
    await (await service.memory()).add_memory(Memory("Alice likes green tea", "space:qq:private:alice"))
    write(service, "identity/inner-state.json", saved)
    with caplog.at_level(logging.ERROR):
        _, req, _ = await ask(service, "which tea do I like?", "alice")
        await ask(service, "hi again", "alice")
    assert "How you feel: calm" in injected(req) and "green tea" in injected(req)
    assert caplog.text.count("inner-state.json cannot be read") == 1
