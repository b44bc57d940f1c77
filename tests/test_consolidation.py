"""Consolidation through the real openai client and the fake server: batches become memories with
sources, updates keep history, code decides scope, and a failed call changes nothing."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from astrbot_plugin_engram.memory import SELF, Audience, Engram, Episode, Memory
from astrbot_plugin_engram.memory.chat import OpenAIChat
from astrbot_plugin_engram.memory.consolidation import ConsolidationSettings, Consolidator
from astrbot_plugin_engram.memory.scopes import DEFAULT_PUBLIC_PLACES

from .conftest import HashEmbedder
from .fake_openai import FakeOpenAI, batch_lines, contract_answer

GROUP, DM, OWNER_DM = "qq:group:1", "qq:private:7", "qq:private:1"
WEB = DEFAULT_PUBLIC_PLACES[0]  # AstrBot's own chat page: public unless the owner lists others
T0 = datetime(2026, 5, 1, 10, 0, tzinfo=timezone.utc)
FAST = ConsolidationSettings(backoff_seconds=0.0, timeout=5.0)


def ep(place: str, text: str, actor: str = "qq:7", name: str = "Alice", minutes: int = 0,
       kind: str = "message_in") -> Episode:
    return Episode(place=place, content=text, actor=actor, actor_name=name, kind=kind,
                   time=T0 + timedelta(minutes=minutes))


def add(text: str, sources: list[str], about: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    return {"op": "add", "text": text, "kind": "fact", "about": about or [], "importance": 0.6,
            "scope": None, "sources": sources, "when": None, **extra}


def actions(*acts: dict[str, Any]) -> str:
    return json.dumps({"actions": list(acts)})


@pytest.fixture(params=["sqlite", "postgres"])
async def engram(request: pytest.FixtureRequest, open_engram: Any, tmp_path: Any) -> AsyncIterator[Engram]:
    """Each test on the SQLite store and on the PostgreSQL one (the session's throwaway server)."""
    if request.param == "sqlite":
        yield await open_engram()
        return
    url = request.getfixturevalue("postgres_server").fresh_database()
    e = await Engram.open(url, HashEmbedder(), background=False, folder=tmp_path)
    try:
        yield e
    finally:
        await e.close()


def run(engram: Engram, server: FakeOpenAI, settings: ConsolidationSettings = FAST, **kw: Any) -> Any:
    owner = kw.pop("owner_places", (OWNER_DM,))
    con = Consolidator(engram, OpenAIChat("m", server.base_url), settings,
                       audience_for=lambda s: Audience(s, owner_private=s in owner), **kw)
    return con


async def memories(engram: Engram) -> list[Memory]:
    rows = await engram.store.get_memories(list(range(1, 200)))
    return [m for m in rows.values() if m.status == "active"]


async def test_a_batch_becomes_memories_with_sources_and_the_event_date(engram: Engram,
                                                                         fake_openai: FakeOpenAI) -> None:
    ids = await engram.record_many([ep(GROUP, "I adopted a kitten called Miso", minutes=0),
                                    ep(GROUP, "She is grey and very loud", minutes=1),
                                    ep(GROUP, "nice!", "qq:8", "Bob", minutes=2)])
    fake_openai.replies.append(actions(add("Alice adopted a grey kitten called Miso",
                                           [f"e{ids[0]}", f"e{ids[1]}"], ["qq:7"])))
    report = await run(engram, fake_openai).run(force=True)
    assert (report.added, report.calls, report.episodes) == (1, 1, 3)
    [m] = await memories(engram)
    assert m.text == "Alice adopted a grey kitten called Miso"
    assert m.sources == (ids[0], ids[1]) and m.subjects == ("qq:7",)
    assert m.scope == f"space:{GROUP}"
    assert m.valid_from == T0  # when it was said, not when it was consolidated
    hits = await engram.recall("kitten Miso", Audience(GROUP))
    assert any(h.kind == "memory" and h.id == m.id for h in hits)
    # the model saw every line with its key and speaker
    assert [i for i, _, _ in batch_lines(fake_openai.chat_requests()[0])] == ids


async def test_consolidated_lines_are_not_sent_again(engram: Engram, fake_openai: FakeOpenAI) -> None:
    await engram.record_many([ep(GROUP, f"line {i}", minutes=i) for i in range(3)])
    fake_openai.default_reply = actions({"op": "none"})
    con = run(engram, fake_openai)
    await con.run(force=True)
    second = await con.run(force=True)
    assert second.calls == 0 and len(fake_openai.chat_requests()) == 1
    new = await engram.record(ep(GROUP, "a new line", minutes=9))
    await con.run(force=True)
    assert [i for i, _, _ in batch_lines(fake_openai.chat_requests()[-1])] == [new]


async def test_an_update_supersedes_and_keeps_history(engram: Engram, fake_openai: FakeOpenAI) -> None:
    old = await engram.add_memory(Memory(text="Alice lives in Lyon", scope=f"space:{GROUP}",
                                         subjects=("qq:7",), sources=()))
    [e] = await engram.record_many([ep(GROUP, "I moved from Lyon to Porto last week")])
    fake_openai.replies.append(actions({"op": "update", "id": f"m{old}", "text": "Alice lives in Porto",
                                        "sources": [f"e{e}"]}))
    report = await run(engram, fake_openai).run(force=True)
    assert report.updated == 1
    versions = await engram.history(old)
    assert [v.text for v in versions] == ["Alice lives in Lyon", "Alice lives in Porto"]
    assert [v.status for v in versions] == ["superseded", "active"]
    assert versions[1].sources == (e,) and versions[1].scope == f"space:{GROUP}"
    assert f"m{old}" in fake_openai.chat_requests()[0]["messages"][1]["content"]  # shown as related


@pytest.mark.parametrize("hint", ["public", "self", "space:qq:group:9", "web", "owner-ish", None])
async def test_a_private_fact_never_becomes_public_however_the_model_answers(
        engram: Engram, fake_openai: FakeOpenAI, hint: str | None) -> None:
    [e] = await engram.record_many([ep(DM, "My bank PIN hint is the cat's birthday")])
    for about in ([], ["qq:7"]):
        fake_openai.replies.append(actions(add("the PIN hint is the cat's birthday", [f"e{e}"], about,
                                               scope=hint)))
    con = run(engram, fake_openai)
    await con.run(force=True)
    async with engram.store.transaction() as tx:
        await tx.set_cursor(f"consolidate:{DM}", 0)  # the same line once more, about Alice
    await con.run(force=True)
    scopes = {m.scope for m in await memories(engram)}
    assert scopes == {f"space:{DM}"}
    for elsewhere in (Audience(GROUP), Audience("web"), Audience(OWNER_DM, owner_private=True)):
        assert not [h for h in await engram.recall("PIN hint cat birthday", elsewhere) if h.kind == "memory"]


async def test_only_a_fact_about_no_one_learned_in_a_public_place_becomes_public(
        engram: Engram, fake_openai: FakeOpenAI) -> None:
    a, b = await engram.record_many([ep(WEB, "The library opens at nine on Sundays"),
                                     ep(WEB, "I love the library", minutes=1)])
    fake_openai.replies.append(actions(add("The library opens at nine on Sundays", [f"e{a}"], [],
                                           scope="public"),
                                       add("Alice loves the library", [f"e{b}"], ["qq:7"], scope="public")))
    report = await run(engram, fake_openai).run(force=True)
    got = {m.text: m.scope for m in await memories(engram)}
    assert got == {"The library opens at nine on Sundays": "public",
                   "Alice loves the library": f"space:{WEB}"}
    assert report.refused["wider_scope"] == 1


async def test_in_a_public_place_a_memory_naming_someone_seen_there_stays_there(
        engram: Engram, fake_openai: FakeOpenAI) -> None:
    """The model's `about: []` was trusted: a note about a member of a public place, its `about` left
    out, became public and came up in every chat."""
    a, b = await engram.record_many([ep(WEB, "Bob failed his exam, poor guy", "qq:8", "Bob"),
                                     ep(WEB, "The library opens at nine", minutes=1)])
    fake_openai.replies.append(actions(add("Bob failed his exam", [f"e{a}"], [], scope="public"),
                                       add("The library opens at nine", [f"e{b}"], [], scope="public")))
    report = await run(engram, fake_openai).run(force=True)
    got = {m.text: (m.scope, m.subjects) for m in await memories(engram)}
    assert got == {"Bob failed his exam": (f"space:{WEB}", ("qq:8",)),
                   "The library opens at nine": ("public", ())}
    assert report.refused["wider_scope"] == 1
    assert not [h for h in await engram.recall("Bob exam", Audience(GROUP)) if h.kind == "memory"]


def test_a_public_group_listed_by_its_bare_id_never_makes_a_private_chat_public() -> None:
    """``777`` in public_spaces is group 777, not the private chat of a user numbered 777 (issue 9)."""
    settings = ConsolidationSettings(public_spaces=("777", "web"))
    assert settings.is_public("qq:group:777") and settings.is_public("web")
    assert not settings.is_public("qq:private:777") and not settings.is_public("tg:private:777")


async def test_the_owners_chat_keeps_to_the_owner_and_the_bots_own_thoughts_stay_with_the_owner(
        engram: Engram, fake_openai: FakeOpenAI) -> None:
    [o] = await engram.record_many([ep(OWNER_DM, "Plan a surprise for Bob", "qq:1", "Lin")])
    [t] = await engram.record_many([ep(GROUP, "Bob seemed tired today", SELF, "", kind="observation")])
    fake_openai.replies += [actions(add("Lin plans a surprise for Bob", [f"e{o}"], ["qq:1", "qq:8"])),
                            actions(add("Bob seemed tired", [f"e{t}"], [], scope="public"))]
    await run(engram, fake_openai).run(force=True)
    got = {m.text: m.scope for m in await memories(engram)}
    assert got == {"Lin plans a surprise for Bob": "owner", "Bob seemed tired": "owner"}


async def test_with_no_owner_a_memory_scoped_owner_stays_where_its_lines_were_said(
        engram: Engram, fake_openai: FakeOpenAI, caplog: pytest.LogCaptureFixture) -> None:
    """With no owner configured an ``owner`` memory would show in no chat at all: it stays in the
    place its lines were recorded in, and the log says why."""
    [g, t] = await engram.record_many([ep(GROUP, "my birthday is on June 3rd"),
                                       ep(GROUP, "Bob seemed tired today", SELF, "", 1, "observation")])
    fake_openai.replies.append(actions(
        add("Alice's birthday is on June 3rd", [f"e{g}"], ["qq:7"], scope="owner"),
        add("Bob seemed tired", [f"e{t}"], [])))
    con = run(engram, fake_openai, replace(FAST, owner_known=False), owner_places=())
    with caplog.at_level(logging.INFO, "engram.consolidate"):
        report = await con.run(force=True)
    got = {m.text: m.scope for m in await memories(engram)}
    assert got == {"Alice's birthday is on June 3rd": f"space:{GROUP}", "Bob seemed tired": f"space:{GROUP}"}
    assert caplog.text.count("no owner is configured") == 2 and not report.refused
    hits = await engram.recall("birthday June", Audience(GROUP), k=5)
    assert "Alice's birthday is on June 3rd" in [h.text for h in hits]


async def test_related_memories_come_only_from_what_the_place_may_see(engram: Engram,
                                                                      fake_openai: FakeOpenAI) -> None:
    for text, scope in (("Miso the kitten likes tuna (group)", f"space:{GROUP}"),
                        ("Miso the kitten secret vet visit (dm)", f"space:{DM}"),
                        ("Miso the kitten owner note", "owner")):
        await engram.add_memory(Memory(text=text, scope=scope))
    await engram.record_many([ep(GROUP, "Miso the kitten ate all the tuna")])
    fake_openai.replies.append(actions({"op": "none"}))
    await run(engram, fake_openai).run(force=True)
    sent = fake_openai.seen_text()
    assert "likes tuna (group)" in sent
    assert "secret vet visit" not in sent and "owner note" not in sent


async def test_a_related_memory_names_its_people_as_this_place_knows_them(engram: Engram,
                                                                         fake_openai: FakeOpenAI) -> None:
    """The prompt of one place never carries a name someone went by only in another chat."""
    await engram.record_many([ep(GROUP, "hello all", "qq:20", "Kim", minutes=0),
                              ep(DM, "call me Kim V", "qq:20", "Kimberly Vantablack", minutes=1),
                              ep(DM, "I am Zed Moonshadow", "qq:21", "Zed Moonshadow", minutes=2)])
    await engram.add_memory(Memory(text="Kim plays chess on Sundays", scope=f"space:{GROUP}",
                                   subjects=("qq:20",)))
    await engram.add_memory(Memory(text="the new member plays chess badly", scope=f"space:{GROUP}",
                                   subjects=("qq:21",)))
    async with engram.store.transaction() as tx:
        await tx.set_cursor(f"consolidate:{DM}", 10**6)  # only the group is consolidated
    await engram.record_many([ep(GROUP, "who plays chess here?", minutes=5)])
    fake_openai.replies.append(actions({"op": "none"}))
    await run(engram, fake_openai).run(places=[GROUP], force=True)
    sent = fake_openai.seen_text()
    assert "Kim plays chess" in sent and "plays chess badly" in sent  # both were shown as related
    assert "Vantablack" not in sent and "Moonshadow" not in sent
    assert "Kim (qq:20)" in sent


async def test_a_chinese_conversation_gets_the_chinese_prompt(engram: Engram,
                                                              fake_openai: FakeOpenAI) -> None:
    await engram.record_many([ep(GROUP, "我下周五生日，想去吃火锅", "qq:9", "王磊")])
    fake_openai.replies.append(actions({"op": "none"}))
    await run(engram, fake_openai).run(force=True)
    system = fake_openai.chat_requests()[0]["messages"][0]["content"]
    assert "长期记忆" in system and "王磊" in fake_openai.seen_text()


async def test_a_failed_call_moves_nothing_and_the_same_batch_is_retried(engram: Engram,
                                                                         fake_openai: FakeOpenAI) -> None:
    ids = await engram.record_many([ep(GROUP, f"fact number {i}", minutes=i) for i in range(4)])
    fake_openai.replies += [{"status": 500}, contract_answer]
    con = run(engram, fake_openai)
    first = await con.run(force=True)
    assert first.failed["unavailable"] == 1 and first.added == 0
    assert await memories(engram) == []
    assert (await engram.store.cursors("consolidate:")).get(f"consolidate:{GROUP}", 0) == 0
    second = await con.run(force=True)
    assert second.added == 1
    sent = [[i for i, _, _ in batch_lines(b)] for b in fake_openai.chat_requests()]
    assert sent == [ids, ids]


async def test_after_a_failure_the_place_waits_with_backoff(engram: Engram, fake_openai: FakeOpenAI) -> None:
    await engram.record_many([ep(GROUP, f"line {i}", minutes=i) for i in range(30)])
    now = [T0.timestamp() + 86400]
    con = run(engram, fake_openai, ConsolidationSettings(backoff_seconds=60.0), clock=lambda: now[0])
    fake_openai.replies += ["not json at all", "still not json", contract_answer]
    assert (await con.run()).failed["malformed"] == 1
    assert (await con.run()).calls == 0  # waiting: the first backoff is 60 s
    now[0] += 61
    assert (await con.run()).failed["malformed"] == 1
    now[0] += 61
    assert (await con.run()).calls == 0  # the second backoff is 120 s
    now[0] += 60
    assert (await con.run()).added > 0


async def test_a_clock_set_back_after_a_failure_does_not_stretch_the_wait(engram: Engram,
                                                                          fake_openai: FakeOpenAI) -> None:
    """The retry time is on the wall clock: set back a day (an NTP fix) right after a failure, the
    place used to wait that whole day more before its lines became memories."""
    await engram.record_many([ep(GROUP, f"line {i}", minutes=i) for i in range(30)])
    now = [T0.timestamp() + 2 * 86400]
    con = run(engram, fake_openai, ConsolidationSettings(backoff_seconds=60.0), clock=lambda: now[0])
    fake_openai.replies += ["not json at all", contract_answer]
    assert (await con.run()).failed["malformed"] == 1
    assert (await con.run()).calls == 0  # waiting: the first backoff is 60 s
    now[0] -= 86400  # the clock goes back a day: a retry time further off than any backoff is due
    assert (await con.run()).added > 0


async def test_a_batch_that_keeps_failing_is_skipped_logged_and_counted(
        engram: Engram, fake_openai: FakeOpenAI, caplog: pytest.LogCaptureFixture) -> None:
    ids = await engram.record_many([ep(GROUP, f"poison {i}", minutes=i) for i in range(3)])
    fake_openai.default_reply = "{\"actions\": [truncated"
    con = run(engram, fake_openai, ConsolidationSettings(backoff_seconds=0.0, max_failures=3))
    reports = [await con.run(force=True) for _ in range(3)]
    assert [r.skipped_batches for r in reports] == [0, 0, 1]
    assert (await engram.store.cursors("consolidate:"))[f"consolidate:{GROUP}"] == ids[-1]
    assert f"skipped e{ids[0]}-e{ids[-1]} in {GROUP}" in caplog.text
    assert await memories(engram) == []
    assert len(await engram.store.get_episodes(ids)) == 3  # the lines themselves are never dropped


async def test_an_endpoint_that_is_down_never_makes_a_batch_be_skipped(engram: Engram,
                                                                       fake_openai: FakeOpenAI) -> None:
    await engram.record_many([ep(GROUP, "hello"), ep(DM, "hi")])
    fake_openai.chat_status = 429
    con = run(engram, fake_openai, ConsolidationSettings(backoff_seconds=0.0, max_failures=2))
    for _ in range(4):
        report = await con.run(force=True)
        assert report.calls == 1 and report.skipped_batches == 0  # the run stops at the first 429
    assert await engram.store.cursors("consolidate:") == {}


async def test_a_spammy_place_cannot_starve_the_others(engram: Engram, fake_openai: FakeOpenAI) -> None:
    await engram.record_many([ep("qq:group:spam", f"spam {i}", minutes=i) for i in range(400)])
    await engram.record_many([ep(GROUP, "Carol's wedding is on June 3rd", "qq:3", "Carol", minutes=500)])
    fake_openai.default_reply = contract_answer  # type: ignore[assignment]
    settings = ConsolidationSettings(batch_episodes=50, batches_per_place=2, backoff_seconds=0.0)
    report = await run(engram, fake_openai, settings).run(force=True)
    assert report.places[GROUP]["added"] == 1
    assert report.calls == 3  # two batches of spam, one of the quiet group
    cursors = await engram.store.cursors("consolidate:")
    assert cursors["consolidate:qq:group:spam"] == 100


async def test_a_place_is_due_after_enough_lines_or_a_pause(engram: Engram, fake_openai: FakeOpenAI) -> None:
    fake_openai.default_reply = contract_answer  # type: ignore[assignment]
    now = [T0.timestamp() + 60]
    settings = ConsolidationSettings(min_new=5, idle_seconds=600, max_wait_seconds=7200)
    con = run(engram, fake_openai, settings, clock=lambda: now[0])
    await engram.record_many([ep(GROUP, f"line {i}") for i in range(3)])
    assert (await con.run()).calls == 0
    await engram.record_many([ep(GROUP, f"more {i}") for i in range(2)])
    assert (await con.run()).calls == 1  # five new lines
    await engram.record_many([ep(DM, "one line")])
    assert (await con.run()).calls == 0
    now[0] += 3600
    assert (await con.run()).calls == 0  # quiet for an hour, but its line is not two hours old
    await engram.record_many([ep(DM, "a late line", minutes=115)])
    now[0] += 3600
    assert (await con.run()).calls == 0  # two hours old, but the conversation goes on
    now[0] += 600
    assert (await con.run()).calls == 1  # paused, and old enough: both lines in one call


async def test_a_speaker_named_you_is_not_taken_for_the_bot(engram: Engram, fake_openai: FakeOpenAI) -> None:
    """In a public place, a memory about a person named "You" (the model naming them, not giving
    their id) was filed as about the bot, about no person, so it could become public."""
    [i] = await engram.record_many([ep("web", "I live at 5 Main Street", "web:u1", "You")])
    fake_openai.replies.append(actions(add("You lives at 5 Main Street", [f"e{i}"], ["You"], scope="public")))
    await run(engram, fake_openai).run(force=True)
    [m] = await memories(engram)
    assert (m.subjects, m.scope) == (("web:u1",), "space:web")
