"""Hard forgetting along provenance, proven on disk: a unique marker said in a message, consolidated
into a memory (and a diary), forgotten with its sources, leaves zero bytes of itself in any file of
the data folder (UTF-8, UTF-16, and the pieces the keyword index stores), with the store open and
after it is closed."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import pytest

from astrbot_plugin_engram.memory import (
    Audience,
    Engram,
    Episode,
    Forgetting,
    InvalidInputError,
    Memory,
    UnknownIdError,
    place_scope,
)
from astrbot_plugin_engram.memory.chat import OpenAIChat
from astrbot_plugin_engram.memory.consolidation import ConsolidationSettings, Consolidator
from astrbot_plugin_engram.memory.metabolism.forgetting import execute, person_plan
from astrbot_plugin_engram.memory.self.identity import IdentityFolder
from astrbot_plugin_engram.memory.self.proposals import Proposals
from astrbot_plugin_engram.memory.text.words import word_set

from .conftest import EngramOpener
from .fake_openai import FakeOpenAI
from .marker import MARK, ZH, files_with_marker, traces

GROUP, DM, OTHER = "qq:group:1", "qq:private:ming", "qq:group:2"
MING, BOB = "qq:ming", "qq:bob"
T0 = datetime(2026, 5, 1, 10, 0, tzinfo=timezone.utc)
FAST = ConsolidationSettings(backoff_seconds=0.0, timeout=10.0)


def ep(place: str, text: str, actor: str = MING, name: str = "Ming", minutes: int = 0) -> Episode:
    return Episode(place=place, content=text, actor=actor, actor_name=name,
                   time=T0 + timedelta(minutes=minutes))


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "data").mkdir()
    return tmp_path / "data"


@pytest.fixture
def db_path(folder: Path) -> Path:
    """The store in the data folder (``open_engram`` opens it): the marker search covers all of it."""
    return folder / "engram.db"


async def seen_anywhere(e: Engram, query: str) -> list[str]:
    """The hits holding the marker in any place's recall and the owner's console."""
    out = []
    for aud in (Audience(GROUP), Audience(DM, owner_private=True), Audience(OTHER), Audience.owner_console()):
        for include in (False, True):
            out += [h.text for h in await e.recall(query, aud, k=50, include_archived=include)
                    if MARK in h.text or ZH[0] in h.text]
    return out


async def test_a_memory_forgotten_with_its_sources_leaves_no_byte_of_the_marker(
        folder: Path, open_engram: EngramOpener, fake_openai: FakeOpenAI) -> None:
    e = await open_engram()
    ids = await e.record_many([ep(GROUP, f"my locker code is {MARK} {ZH}", minutes=0),
                               ep(GROUP, "see you at the gym", minutes=1),
                               ep(GROUP, "bring the blue towel", BOB, "Bob", minutes=2)])
    fake_openai.replies.append(json.dumps({"actions": [
        {"op": "add", "text": f"Ming's locker code is {MARK} {ZH}", "kind": "fact", "about": [MING],
         "importance": 0.6, "scope": None, "sources": [f"e{ids[0]}", f"e{ids[1]}"], "when": None}]}))
    report = await Consolidator(e, OpenAIChat("m", fake_openai.base_url), FAST).run(force=True)
    assert report.added == 1
    [mid] = report.new_ids
    newer = await e.update(mid, f"Ming's locker code is {MARK} {ZH} (the left row)")
    diary = await e.add_memory(Memory(text=f"Today Ming told me a code, {MARK}.", scope=place_scope(GROUP),
                                      kind="diary", sources=(ids[0],), valid_from=T0))
    keep = await e.add_memory(Memory(text="Bob has a blue towel", scope=place_scope(GROUP),
                                     sources=(ids[2],)))
    await e.embed_pending()
    assert await seen_anywhere(e, MARK)  # the marker is recalled ...
    await e.close()
    assert traces(folder)  # ... and on disk: the search can see it
    e = await open_engram()
    told: list[Forgetting] = []

    async def listener(plan: Forgetting) -> None:
        told.append(plan)

    e.after_forget.append(listener)
    await e.recall(f"locker {MARK}", Audience(GROUP), k=5)  # warm every cache with it

    done = await e.forget([newer], with_sources=True)

    assert word_set.cache_info().currsize == 0  # no cached words of the erased text
    assert done.episodes == ids[:2] and set(done.memories) == {mid, newer, diary}
    assert told and told[0].diary_days == [T0.date()]  # that day's diary is to be rewritten
    assert await seen_anywhere(e, MARK) == [] and await seen_anywhere(e, ZH) == []
    assert (await e.get(keep)).text == "Bob has a blue towel"
    assert (await e.get_episode(ids[2])).content == "bring the blue towel"
    assert traces(folder) == []  # open: nothing in the file, the WAL or beside them
    await e.close()
    assert traces(folder) == []


async def test_a_diary_written_by_the_diary_job_goes_with_its_file(
        folder: Path, open_engram: EngramOpener) -> None:
    """The real diary (issue 13) in another zone: its file is named by the day it tells of (in the
    diaries' zone, not UTC); forgetting a line it drew on erases the entry and the file."""
    from zoneinfo import ZoneInfo

    from astrbot_plugin_engram.memory.self.diary import write_diary

    from .scripted_chat import ScriptedChat

    sh = ZoneInfo("Asia/Shanghai")
    day = date(2026, 11, 30)
    e = await open_engram()
    ids = await e.record_many([
        Episode(GROUP, f"the gate code is {MARK} {ZH}", MING, "Ming",
                time=datetime(2026, 11, 30, 9, 0, tzinfo=sh)),  # 01:00 UTC: Nov 30 there, in UTC too
        Episode(GROUP, "thanks, see you", BOB, "Bob", time=datetime(2026, 11, 30, 9, 5, tzinfo=sh))])
    chat = ScriptedChat(json.dumps({"entry": f"Ming told the group a gate code, {MARK} {ZH}."}))
    written = await write_diary(e, chat, day, tz=sh)
    assert written.memory_id is not None and (folder / "diary" / "2026-11-30.md").exists()
    told: list[Forgetting] = []

    async def listener(plan: Forgetting) -> None:
        told.append(plan)

    e.after_forget.append(listener)
    gone = await e.forget_episodes([ids[0]])  # the line alone: the diary drawn from it goes with it
    assert gone.episodes == [ids[0]] and gone.memories == [written.memory_id]
    assert gone.diary_days == [day] and told[-1].diary_days == [day]
    assert (await e.get_episode(ids[1])).content == "thanks, see you"
    assert not (folder / "diary" / "2026-11-30.md").exists()
    assert traces(folder) == []
    await e.close()
    assert traces(folder) == []


async def test_the_self_image_its_history_and_the_inner_state_go_with_the_diary(
        folder: Path, open_engram: EngramOpener) -> None:
    """The files the bot writes about its days: the diary, the inner state it moved, the self-image
    and its earlier versions (identity/history/). A forget that reaches them — here with no rewrite
    after it, as from the command line — leaves none of them holding the marker."""
    from astrbot_plugin_engram.memory.self.day_end import DaySettings, end_days
    from astrbot_plugin_engram.memory.self.self_image import write_self_image

    from .scripted_chat import ScriptedChat

    e = await open_engram()
    await e.record_many([ep(GROUP, f"the gate code is {MARK} {ZH}"),
                         ep(GROUP, "thanks, see you", BOB, "Bob", minutes=5)])
    told = f"a gate code, {MARK} {ZH}"
    chat = ScriptedChat(json.dumps({"entry": f"Today I learnt {told}."}),
                        json.dumps({"mood": "calm", "valence": 0.1, "energy": 0.5, "on_mind": told}),
                        json.dumps({"self_image": f"I keep {told} in mind."}),
                        json.dumps({"self_image": f"I still keep {told} in mind."}))
    report = await end_days(e, chat, DaySettings(tz=timezone.utc, is_public=lambda place: True),
                            now=T0 + timedelta(days=1, hours=6))
    assert [r.day for r in report.written] == [T0.date()] and report.inner_state
    for _ in range(2):  # the second moves the first to identity/history/
        assert (await write_self_image(e, chat, is_public=lambda place: True)).status == "written"
    held = files_with_marker(folder)
    assert {f"diary/{T0.date()}.md", "identity/inner-state.json", "identity/self-image.md"} <= held
    assert any(f.startswith("identity/history/self-image.") for f in held)

    done = await e.forget_person(MING)

    assert done.diary_days == [T0.date()] and done.self_image
    assert traces(folder) == []
    await e.close()
    assert traces(folder) == []


async def test_forgetting_a_person_erases_what_they_said_and_what_is_about_them_everywhere(
        folder: Path, open_engram: EngramOpener) -> None:
    e = await open_engram()
    ids = await e.record_many([ep(GROUP, f"I keep my spare key under {MARK}"),
                               ep(DM, f"{ZH} is my secret word", minutes=1),
                               ep(OTHER, f"ming's spare key is under the {MARK} mat", BOB, "Bob", minutes=2),
                               ep(OTHER, "the weather is nice", BOB, "Bob", minutes=3)])
    about = await e.add_memory(Memory(text=f"Ming hides a key under {MARK}", scope=place_scope(GROUP),
                                      subjects=(MING,), sources=(ids[0],)))
    await e.embed_pending()
    assert await e.store.aliases(MING) == ["Ming"]

    done = await e.forget_person(MING)

    assert set(done.episodes) == set(ids[:3]) and done.memories == [about]
    assert await seen_anywhere(e, MARK) == [] and await seen_anywhere(e, ZH) == []
    assert await seen_anywhere(e, "spare key") == []
    assert await e.store.aliases(MING) == []
    assert (await e.get_episode(ids[3])).content == "the weather is nice"
    assert traces(folder) == []
    await e.close()
    assert traces(folder) == []


async def test_forgetting_a_person_reaches_their_name_written_against_chinese(
        folder: Path, open_engram: EngramOpener) -> None:
    """A Latin name inside Chinese text ("Ming和同学们…", as MADial's and many chats' lines are written)
    was not found: the name's boundary took Chinese characters for letters, so a line and a memory
    naming Ming that way outlived the forget."""
    e = await open_engram()
    ids = await e.record_many([ep(GROUP, "hello all"),
                               ep(OTHER, f"昨天Ming和同学们一起去了{MARK}", BOB, "Bob", minutes=1),
                               ep(OTHER, "Mingyu也来了", BOB, "Bob", minutes=2)])
    about = await e.add_memory(Memory(text=f"Bob说Ming和同学们去了{MARK}", scope=place_scope(OTHER)))

    done = await e.forget_person(MING)

    assert set(done.episodes) == set(ids[:2]) and done.memories == [about]
    assert (await e.get_episode(ids[2])).content == "Mingyu也来了"  # another name, not Ming's
    assert await seen_anywhere(e, MARK) == []
    await e.close()


async def test_forgetting_a_place_erases_its_lines_and_memories_and_leaves_other_places(
        folder: Path, open_engram: EngramOpener) -> None:
    e = await open_engram()
    ids = await e.record_many([ep(GROUP, f"the meeting word is {MARK} {ZH}"),
                               ep(OTHER, "lunch at noon", BOB, "Bob")])
    mid = await e.add_memory(Memory(text=f"the group's password is {MARK}", scope=place_scope(GROUP)))
    await e.embed_pending()

    done = await e.forget_place(GROUP)

    assert done.episodes == [ids[0]] and done.memories == [mid]
    assert await seen_anywhere(e, MARK) == []
    assert [h.text for h in await e.recall("lunch", Audience(OTHER), k=5)] == ["lunch at noon"]
    assert traces(folder) == []
    later = await e.record(ep(GROUP, "a new start here", minutes=30))  # the place can be used again
    assert later > ids[-1]
    assert [h.id for h in await e.recall("new start", Audience(GROUP), k=5)] == [later]
    await e.close()
    assert traces(folder) == []


async def test_a_forgotten_place_takes_its_title_with_it(folder: Path, open_engram: EngramOpener) -> None:
    """A group's name (the dashboard names a place by it) is erased with the place."""
    e = await open_engram()
    await e.record_many([Episode(place=GROUP, content="hi", actor=MING, time=T0, place_title=f"club {MARK}"),
                         Episode(place=OTHER, content="hi", actor=BOB, time=T0, place_title="Bob's group")])
    assert await e.store.place_titles() == {GROUP: f"club {MARK}", OTHER: "Bob's group"}
    await e.forget_place(GROUP)
    assert await e.store.place_titles() == {OTHER: "Bob's group"}
    assert traces(folder) == []
    await e.close()
    assert traces(folder) == []


async def test_an_erased_id_is_never_given_out_again(folder: Path, open_engram: EngramOpener) -> None:
    e = await open_engram()
    first = await e.record(ep(GROUP, f"about {MARK}"))
    mid = await e.add_memory(Memory(text=f"note {MARK}", scope=place_scope(GROUP), sources=(first,)))
    await e.embed_pending()
    await e.forget([mid], with_sources=True)
    again = await e.record(ep(GROUP, "a later line", minutes=5))
    other = await e.add_memory(Memory(text="a later note", scope=place_scope(GROUP)))
    assert again > first and other > mid
    assert await e.embed_pending() == 2  # the indexer's cursor is not ahead of them
    await e.close()


async def test_unknown_ids_are_refused_and_nothing_is_touched(
        folder: Path, open_engram: EngramOpener) -> None:
    e = await open_engram()
    kept = await e.add_memory(Memory(text="keep me", scope="public"))
    before = await e.stats()
    with pytest.raises(UnknownIdError, match="no memory with id 404"):
        await e.forget([kept, 404], with_sources=True)
    with pytest.raises(UnknownIdError, match="nothing is remembered"):
        await e.forget_person("qq:nobody")
    with pytest.raises(UnknownIdError, match="nothing is remembered of the place"):
        await e.forget_place("qq:group:none")
    assert await e.stats() == before and (await e.get(kept)).text == "keep me"
    await e.close()


@pytest.mark.parametrize("person", ["", "   "])
async def test_a_blank_person_is_refused_not_taken_for_every_line_without_a_speaker(
        folder: Path, open_engram: EngramOpener, person: str) -> None:
    """A line recorded without an actor (the CLI's default) has the actor "": forget_person("")
    erased every such line, for good."""
    e = await open_engram()
    line = await e.record(Episode(place="web", content="a line nobody in particular said"))
    with pytest.raises(InvalidInputError, match="name the person to forget"):
        await e.forget_person(person)
    assert (await e.get_episode(line)).content == "a line nobody in particular said"
    await e.close()


async def test_a_forget_during_a_running_consolidation_does_not_bring_the_text_back(
        folder: Path, open_engram: EngramOpener, fake_openai: FakeOpenAI) -> None:
    e = await open_engram()
    ids = await e.record_many([ep(GROUP, f"my locker tag is {MARK}"), ep(GROUP, "and I like tea", minutes=1)])
    fake_openai.chat_delay = 1.0
    fake_openai.replies.append(json.dumps({"actions": [
        {"op": "add", "text": f"Ming's pin is {MARK}", "kind": "fact", "about": [MING], "importance": 0.6,
         "scope": None, "sources": [f"e{ids[0]}"], "when": None},
        {"op": "add", "text": "Ming likes tea", "kind": "preference", "about": [MING], "importance": 0.5,
         "scope": None, "sources": [f"e{ids[1]}"], "when": None}]}))
    con = Consolidator(e, OpenAIChat("m", fake_openai.base_url), FAST)
    running = asyncio.create_task(con.run(force=True))
    while not fake_openai.chat_requests():  # noqa: ASYNC110  (the model is reading the batch now)
        await asyncio.sleep(0.02)
    await e.forget_episodes([ids[0]])
    report = await running
    assert report.added == 0  # the whole batch was dropped: its lines are read again, minus the erased one
    fake_openai.chat_delay = 0.0
    fake_openai.replies.append(json.dumps({"actions": [
        {"op": "add", "text": "Ming likes tea", "kind": "preference", "about": [MING], "importance": 0.5,
         "scope": None, "sources": [f"e{ids[1]}"], "when": None}]}))
    again = await con.run(force=True)
    assert again.added == 1
    assert MARK not in fake_openai.chat_requests()[-1]["messages"][-1]["content"]
    assert await seen_anywhere(e, MARK) == []
    await e.close()
    assert traces(folder) == []


async def test_a_memory_committed_between_a_forgets_plan_and_its_erase_goes_with_its_line(
        folder: Path, open_engram: EngramOpener) -> None:
    """The kill harness's "a memory without its source" (session 14): ``forget_person`` reads its plan,
    consolidation (whose model answered meanwhile) commits a memory drawn from one of the planned lines,
    then the erase runs. The memory names no one, so only its source ties it to the line: it goes too."""
    e = await open_engram()
    ids = await e.record_many([ep(GROUP, f"my locker tag is {MARK}"),
                               ep(GROUP, "tea?", BOB, "Bob", minutes=1)])
    plan = await person_plan(e, MING)  # what forget_person reads before it erases
    [late] = await e.commit_memories([(Memory(text=f"the locker tag is {MARK}", scope=place_scope(GROUP),
                                              sources=(ids[0],)), None)], {}, read=[ids[0]])
    await e.embed_pending()
    done = await execute(e, plan, e.after_forget)  # what forget_person does with the plan
    assert late in done.memories
    assert await e.store.get_memories([late]) == {}
    assert await seen_anywhere(e, MARK) == []
    assert (await e.get_episode(ids[1])).content == "tea?"
    await e.close()
    assert traces(folder) == []


async def test_forgetting_while_recording_is_busy_erases_only_what_was_there(
        folder: Path, open_engram: EngramOpener) -> None:
    e = await open_engram()
    old = await e.record_many([ep(GROUP, f"old line {n} {MARK}", minutes=n) for n in range(200)])
    writes = [asyncio.create_task(e.record(ep(GROUP, f"busy line {n}", BOB, "Bob", minutes=300 + n)))
              for n in range(200)]
    done = await e.forget_person(MING)
    new = await asyncio.gather(*writes)
    assert done.episodes == old and len(set(new)) == 200 and not set(new) & set(old)
    left = await e.store.episodes_where(place=GROUP)
    assert sorted(i for i, _ in left) == sorted(new) and all("busy line" in t for _, t in left)
    await e.close()
    assert traces(folder) == []


# ---- identity proposals (identity/proposals.json) ----------------------------------------------
@pytest.mark.parametrize("how", ["person", "place", "memory with sources"])
async def test_an_identity_proposal_drawn_from_what_is_forgotten_goes_with_it(
        folder: Path, open_engram: EngramOpener, how: str) -> None:
    """The model may propose a change to its identity with what it was told (``identity_propose``).
    A hard forget drops, pending or decided, every proposal made in the forgotten place or holding a
    piece of the forgotten text; the others stay as they were (one made in the same chat the same day
    but sharing nothing with the forgotten text too, unless the whole place goes)."""
    e = await open_engram()
    ids = await e.record_many([ep(GROUP, f"my locker code is {MARK} {ZH}"),
                               ep(OTHER, "lunch at noon", BOB, "Bob", minutes=1)])
    mid = await e.add_memory(Memory(text=f"Ming's locker code is {MARK} {ZH}", scope=place_scope(GROUP),
                                    subjects=(MING,), sources=(ids[0],)))
    proposals = Proposals(IdentityFolder(folder))
    later = T0 + timedelta(hours=2)
    told = proposals.propose(f"I keep my friends' codes safe, like {MARK} {ZH}.", "trusted with one",
                             GROUP, now=later)
    braver = proposals.propose("I would like to be braver.", "", GROUP, now=later)  # same chat, nothing of it
    copied = proposals.propose(f"I remember numbers such as {MARK}.", "", OTHER, now=later)  # elsewhere
    proposals.reject(copied.id)  # a decided proposal holds the text as much as a pending one
    kept = proposals.propose("I like quiet mornings.", "lunch talk", OTHER, now=later)
    assert "identity/proposals.json" in files_with_marker(folder)

    if how == "person":
        done = await e.forget_person(MING)
    elif how == "place":
        done = await e.forget_place(GROUP)
    else:
        done = await e.forget([mid], with_sources=True)

    assert traces(folder) == []  # identity/proposals.json no longer holds any piece of it
    if how == "place":  # everything made in the place goes with it
        assert done.proposals == [told.id, braver.id, copied.id]
        assert done.summary().endswith("and 3 identity proposals")
        assert proposals.all() == [kept]
    else:
        assert done.proposals == [told.id, copied.id]
        assert done.summary().endswith("and 2 identity proposals")
        assert proposals.all() == [braver, kept]
    await e.close()
    assert traces(folder) == []


async def test_a_proposal_made_before_the_forgotten_line_or_elsewhere_stays(
        folder: Path, open_engram: EngramOpener) -> None:
    e = await open_engram()
    proposals = Proposals(IdentityFolder(folder))
    before = proposals.propose("I would like to be braver.", "", GROUP, now=T0 - timedelta(minutes=1))
    next_day = proposals.propose("I enjoy long walks.", "", GROUP, now=T0 + timedelta(days=1, minutes=1))
    elsewhere = proposals.propose("I like quiet mornings.", "", OTHER, now=T0 + timedelta(minutes=5))
    [line] = await e.record_many([ep(GROUP, f"my locker code is {MARK}")])
    mid = await e.add_memory(Memory(text=f"a code {MARK}", scope=place_scope(GROUP), sources=(line,)))

    done = await e.forget([mid], with_sources=True)

    assert done.proposals == [] and done.summary() == "1 line and 1 memory"
    assert proposals.all() == [before, next_day, elsewhere]
    await e.close()


async def test_forgetting_an_unrelated_line_leaves_an_approved_proposal_of_the_same_chat_and_day(
        folder: Path, open_engram: EngramOpener) -> None:
    """Issue 27: ``/mem forget e15`` (an unrelated line) also dropped an approved identity proposal
    made in the same chat an hour later ("1 line, 1 memory and 1 identity proposal"): a forget never
    touches what it did not name."""
    e = await open_engram()
    [line] = await e.record_many([ep(GROUP, "the bus was late again this morning")])
    proposals = Proposals(IdentityFolder(folder))
    bartje = proposals.propose("Call the owner Bartje", "he asked", GROUP, now=T0 + timedelta(hours=1))
    proposals.approve(bartje.id)

    done = await e.forget_episodes([line])

    assert done.proposals == [] and done.summary() == "1 line and 0 memories"
    assert [p.id for p in proposals.all()] == [bartje.id] and proposals.all()[0].status == "approved"
    await e.close()


async def test_an_unreadable_proposals_file_is_left_alone_and_the_forget_goes_on(
        folder: Path, open_engram: EngramOpener, caplog: pytest.LogCaptureFixture) -> None:
    e = await open_engram()
    await e.record(ep(GROUP, f"the meeting word is {MARK}"))
    (folder / "identity").mkdir()
    (folder / "identity/proposals.json").write_text("{not json", "utf-8")

    done = await e.forget_place(GROUP)

    assert done.done and done.proposals == [] and await seen_anywhere(e, MARK) == []
    assert (folder / "identity/proposals.json").read_text("utf-8") == "{not json"
    assert "identity/proposals.json cannot be read" in caplog.text
    await e.close()


async def test_a_forget_after_the_boundary_hour_changed_erases_the_right_diary_file(
        folder: Path, open_engram: EngramOpener) -> None:
    """A diary written when days ended at 4 am; the owner then moved the hour to 6 (a later diary
    remembered it): counted under the new hour, the old diary's start (4 am) fell in the day before,
    so a forget erased the entry but left its file, the forgotten line in it, and named the wrong day."""
    from zoneinfo import ZoneInfo

    from astrbot_plugin_engram.memory.self.diary import write_diary

    from .scripted_chat import ScriptedChat

    sh = ZoneInfo("Asia/Shanghai")
    day = date(2026, 11, 30)
    e = await open_engram()
    ids = await e.record_many([
        Episode(GROUP, f"the gate code is {MARK} {ZH}", MING, "Ming",
                time=datetime(2026, 11, 30, 9, 0, tzinfo=sh)),
        Episode(GROUP, "morning all", BOB, "Bob", time=datetime(2026, 12, 1, 9, 0, tzinfo=sh))])
    await write_diary(e, ScriptedChat(json.dumps({"entry": f"Ming told a gate code, {MARK} {ZH}."})), day,
                      tz=sh, boundary_hour=4)
    await write_diary(e, ScriptedChat(json.dumps({"entry": "A quiet morning."})), day + timedelta(days=1),
                      tz=sh, boundary_hour=6)
    gone = await e.forget_episodes([ids[0]])
    assert gone.diary_days == [day]
    assert not (folder / "diary" / "2026-11-30.md").exists()
    await e.close()
    assert traces(folder) == []


# ---- issue 28: forget the right person, and all of them ----------------------------------------------
ALICE, EVE, OWNER_DM = "qq:alice", "qq:eve", "qq:private:owner"


async def test_someone_who_went_by_another_persons_name_takes_only_their_own_with_them(
        open_engram: EngramOpener) -> None:
    """Eve renamed herself "Alice" for one message and asked to be forgotten: the plan searched for
    "Alice" as text and took the real Alice's own line, Bob's line about her in another group, the
    owner's private line and the memories about her; the owner was told 5 lines and 2 memories."""
    e = await open_engram()
    eve = await e.record_many([ep(GROUP, "hi everyone", EVE, "Alice"),
                               ep(GROUP, "bye for now", EVE, "Eve", minutes=1)])
    others = await e.record_many([ep(GROUP, "I am Alice and I love hiking", ALICE, "Alice", minutes=2),
                                  ep(OTHER, "Alice is coming on Sunday", BOB, "Bob", minutes=3),
                                  ep(OWNER_DM, "Alice told me she is moving", "qq:owner", "Owner",
                                     minutes=4)])
    kept = [await e.add_memory(Memory(text="Alice loves hiking", scope=place_scope(GROUP),
                                      subjects=(ALICE,))),
            await e.add_memory(Memory(text="Alice is moving away", scope="owner"))]

    plan = await e.forget_person(EVE, dry_run=True)
    assert (plan.episodes, plan.memories) == (eve, [])
    assert plan.summary() == "2 lines and 0 memories"
    await e.forget_person(EVE)

    assert [x.content for x in (await e.episodes(others)).values()] == [
        "I am Alice and I love hiking", "Alice is coming on Sunday", "Alice told me she is moving"]
    assert sorted((await e.memories(kept)).keys()) == kept
    assert await e.aliases(ALICE) == ["Alice"] and await e.aliases(EVE) == []
    await e.close()


@pytest.mark.parametrize("name, said_by_others", [
    ("the", ["the weather is nice", "see you at the station"]),
    ("今天", ["今天天气很好", "我今天很忙"]),
    ("Will", ["Will you come tomorrow?", "I will call you"]),
])
async def test_a_person_named_by_an_ordinary_word_does_not_take_every_line_holding_it(
        open_engram: EngramOpener, name: str, said_by_others: list[str]) -> None:
    e = await open_engram()
    own = await e.record(ep(GROUP, "hello all", "qq:word", name))
    others = await e.record_many([ep(OTHER, text, BOB, "Bob", minutes=i + 1)
                                  for i, text in enumerate(said_by_others)])
    mid = await e.add_memory(Memory(text=f"Bob said: {said_by_others[0]}", scope=place_scope(OTHER)))

    done = await e.forget_person("qq:word")

    assert (done.episodes, done.memories) == ([own], [])
    assert len(await e.episodes(others)) == len(others) and await e.memories([mid])
    await e.close()


async def test_a_name_that_is_theirs_alone_is_still_searched_for(open_engram: EngramOpener) -> None:
    """The rule leaves out shared names and ordinary words only: Ming's lines about him stay forgettable."""
    e = await open_engram()
    ids = await e.record_many([ep(GROUP, "hello", MING, "Ming"),
                               ep(OTHER, "Ming is ill", BOB, "Bob", minutes=1),
                               ep(OTHER, "the bus is late", BOB, "Bob", minutes=2)])
    assert (await e.forget_person(MING)).episodes == ids[:2]
    await e.close()


async def test_a_forgotten_person_leaves_no_id_or_name_in_others_lines_or_their_private_chat(
        folder: Path, open_engram: EngramOpener) -> None:
    """Their id and name stayed in the meta of others' lines (mentions, the speaker a reply answered)
    and in the row of their private chat; the self-image's private-detail check read those mentions
    and listed the forgotten name in the next prompt. Nothing of them stays in any file."""
    from astrbot_plugin_engram.memory.self.private_details import private_details

    person, dm = f"qq:{MARK}", f"qq:private:{MARK}"
    e = await open_engram()
    own = await e.record_many([ep(GROUP, "my first day here", person, ZH),
                               ep(dm, "can you keep a secret", person, ZH, minutes=1),
                               Episode(place=dm, content="of course", actor="self", actor_name="bot",
                                       time=T0 + timedelta(minutes=2))])
    mention = {"mentions": [{"id": person, "name": ZH}, {"id": MING, "name": "Ming"}],
               "reply_to": {"message_id": "m1", "actor": person}}
    others = await e.record_many([replace(ep(GROUP, "welcome!", BOB, "Bob", minutes=3), meta=mention),
                                  replace(ep(OWNER_DM, "who is new in the group?", BOB, "Bob", minutes=4),
                                          meta={"mentions": [{"id": person, "name": ZH}]})])
    assert traces(folder)

    done = await e.forget_person(person)

    assert set(own) <= set(done.episodes) and done.places == [dm]
    left = await e.episodes(others)
    assert [x.meta for x in left.values()] == [
        {"mentions": [{"id": MING, "name": "Ming"}], "reply_to": {"message_id": "m1"}}, {}]
    details = private_details(left.values(), {}, lambda place: False)
    assert not any(ZH in n or MARK in n for n in details.names)
    assert not await e.has_place(dm)
    assert traces(folder) == []
    await e.close()
    assert traces(folder) == []

