"""The daily diary, the self-image and the inner state, with a scripted model."""

from __future__ import annotations

import json
import logging
import re
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from astrbot_plugin_engram.memory import SELF, Audience, Engram, Episode
from astrbot_plugin_engram.memory.errors import ChatError
from astrbot_plugin_engram.memory.prompts.answers import WrongShape
from astrbot_plugin_engram.memory.self.day_end import DaySettings, end_days
from astrbot_plugin_engram.memory.self.diary import diary_of, write_diary
from astrbot_plugin_engram.memory.self.identity import IdentityFolder, atomic_write
from astrbot_plugin_engram.memory.self.inner_state import Baseline, current, load_state, sentence, state_path
from astrbot_plugin_engram.memory.self.self_image import write_self_image

from .scripted_chat import ScriptedChat
from .stored import stored

SH = ZoneInfo("Asia/Shanghai")
DAY = date(2026, 11, 30)


def at(h: int, m: int = 0, day: date = DAY) -> datetime:
    return datetime(day.year, day.month, day.day, h, m, tzinfo=SH)


def entry(text: str) -> str:
    return json.dumps({"entry": text})


async def live_a_day(e: Engram) -> None:
    """Nov 30 in a group and in Alice's private chat; a late line after midnight; Dec 1 morning."""
    await e.record_many([
        Episode("qq:group:7", "anyone up for hiking on Saturday?", "qq:1", "Bob", time=at(10)),
        Episode("qq:group:7", "count me in", SELF, kind="message_out", time=at(10, 1)),
        Episode("qq:private:2", "my door code is 4417, water the plants please", "qq:2", "Alice",
                time=at(20)),
        Episode("qq:private:2", "a late thought about the moon", "qq:2", "Alice",
                time=at(2, 30, DAY + timedelta(days=1))),  # after midnight, before 4 am: still Nov 30
        Episode("qq:group:7", "good morning all", "qq:1", "Bob", time=at(9, 0, DAY + timedelta(days=1))),
    ])


async def test_a_diary_is_written_once_from_the_days_lines_across_places(engram: Engram,
                                                                         tmp_path: Path) -> None:
    await live_a_day(engram)
    chat = ScriptedChat(entry("Today I planned a hike with Bob and looked after Alice's plants."))
    r = await write_diary(engram, chat, DAY, tz=SH, folder=tmp_path)
    assert r.status == "written" and r.episodes == 4
    prompt = chat.asked()
    assert "hiking" in prompt and "door code" in prompt and "the moon" in prompt  # the late line too
    assert "good morning" not in prompt  # the next day's
    m = await stored(engram, r.memory_id)
    assert (m.kind, m.scope) == ("diary", "owner") and len(m.sources) == 4
    on_file = (tmp_path / "diary" / "2026-11-30.md").read_text("utf-8")
    assert on_file.startswith("# 2026-11-30\n\nToday I planned")
    again = await write_diary(engram, chat, DAY, tz=SH, folder=tmp_path)  # no model call: nothing scripted
    assert (again.status, again.memory_id) == ("exists", r.memory_id)


@pytest.mark.parametrize("left", [None, "# 2026-11-30\n\nToday I pla"], ids=["no-file", "cut-file"])
async def test_a_diary_file_lost_or_cut_by_a_kill_is_written_again_from_the_memory(
        engram: Engram, tmp_path: Path, left: str | None) -> None:
    """The memory is committed before the file is written: a kill in between (or a file cut short
    by hand) leaves the memory, and the next run writes the file from it without asking the model."""
    await live_a_day(engram)
    text = "Today I planned a hike with Bob."
    r = await write_diary(engram, ScriptedChat(entry(text)), DAY, tz=SH, folder=tmp_path)
    path = tmp_path / "diary" / "2026-11-30.md"
    if left is None:
        path.unlink()
    else:
        path.write_text(left, "utf-8")
    again = await write_diary(engram, ScriptedChat(), DAY, tz=SH, folder=tmp_path)  # no answer scripted
    assert (again.status, again.memory_id, again.text) == ("exists", r.memory_id, text)
    assert path.read_text("utf-8") == f"# 2026-11-30\n\n{text}\n"


async def test_the_diary_is_owner_scoped_so_a_group_never_recalls_it(engram: Engram,
                                                                      tmp_path: Path) -> None:
    await live_a_day(engram)
    chat = ScriptedChat(entry("Alice told me her door code."))
    await write_diary(engram, chat, DAY, tz=SH, folder=tmp_path)
    await engram.embed_pending()
    group = await engram.recall("door code", Audience("qq:group:7"), k=10)
    assert not [h for h in group if h.kind == "memory"]
    owner = await engram.recall("door code", Audience("qq:private:9", owner_private=True), k=10)
    assert any(h.kind == "memory" and "door code" in h.text for h in owner)


async def test_force_rewrites_the_diary_and_supersedes_the_old_one(engram: Engram, tmp_path: Path) -> None:
    await live_a_day(engram)
    first = await write_diary(engram, ScriptedChat(entry("first version")), DAY, tz=SH, folder=tmp_path)
    second = await write_diary(engram, ScriptedChat(entry("second version")), DAY, tz=SH, folder=tmp_path,
                               force=True)
    assert second.status == "rewritten" and second.memory_id != first.memory_id
    assert (await stored(engram, first.memory_id)).status == "superseded"
    assert second.memory_id is not None
    assert [m.text for m in await engram.history(second.memory_id)] == ["first version", "second version"]
    assert "second version" in (tmp_path / "diary" / "2026-11-30.md").read_text("utf-8")
    diary = await diary_of(engram, DAY, SH)
    assert diary is not None and diary.id == second.memory_id


@pytest.mark.parametrize("answer", ['{"entry": ""}', '{"entry": 3}', '{"diary": "x"}', "just prose", "[]",
                                    json.dumps({"entry": "x" * 7000}),
                                    '{"entry": ' + "[" * 5000 + "]" * 5000 + "}"])  # too deep: RecursionError
async def test_a_wrong_shaped_answer_changes_nothing(engram: Engram, tmp_path: Path, answer: str) -> None:
    await live_a_day(engram)
    with pytest.raises(WrongShape):
        await write_diary(engram, ScriptedChat(answer), DAY, tz=SH, folder=tmp_path)
    assert await diary_of(engram, DAY, SH) is None
    assert not (tmp_path / "diary").exists()


async def test_a_day_without_lines_has_no_diary_and_no_call(engram: Engram, tmp_path: Path) -> None:
    r = await write_diary(engram, ScriptedChat(), DAY, tz=SH, folder=tmp_path)
    assert r.status == "empty"


async def test_end_days_writes_the_missed_days_once_and_moves_the_inner_state(engram: Engram,
                                                                             tmp_path: Path) -> None:
    await live_a_day(engram)
    long_ago = DAY - timedelta(days=20)
    await engram.record(Episode("qq:group:7", "old news", "qq:1", "Bob", time=at(12, 0, long_ago)))
    mood = {"mood": "cheerful", "valence": 0.8, "energy": 0.9, "on_mind": "the plants"}
    chat = ScriptedChat(entry("a good day"), entry("a quiet morning"), json.dumps(mood))
    now = at(5, 0, DAY + timedelta(days=2))  # Dec 2 5 am: Nov 30 and Dec 1 are finished
    report = await end_days(engram, chat, DaySettings(tz=SH), folder=tmp_path, now=now)
    assert [r.day for r in report.written] == [DAY, DAY + timedelta(days=1)] and len(chat.calls) == 3
    assert "a quiet morning" in chat.asked()  # the state moves from the latest day
    state = load_state(tmp_path)
    assert report.inner_state and state is not None
    assert (state.mood, state.on_mind) == ("cheerful", "the plants")
    assert not (tmp_path / "diary" / f"{DAY - timedelta(days=20)}.md").exists()  # older than 7 days


async def test_end_days_is_idempotent(engram: Engram, tmp_path: Path) -> None:
    await engram.record(Episode("web", "hello", "web:1", "Ann", time=at(12)))
    settings = DaySettings(tz=SH, inner_state=False)
    now = at(5, 0, DAY + timedelta(days=1))
    first = await end_days(engram, ScriptedChat(entry("met Ann")), settings, folder=tmp_path, now=now)
    second = await end_days(engram, ScriptedChat(), settings, folder=tmp_path, now=now + timedelta(hours=1))
    assert len(first.written) == 1 and not second.written and not second.failed


async def test_a_failing_model_leaves_the_day_for_the_next_run(engram: Engram, tmp_path: Path) -> None:
    await engram.record(Episode("web", "hello", "web:1", "Ann", time=at(12)))
    now = at(5, 0, DAY + timedelta(days=1))
    failed = await end_days(engram, ScriptedChat(ChatError("down", transient=True)), DaySettings(tz=SH),
                            folder=tmp_path, now=now)
    assert failed.failed["diary"] == 1 and not failed.written
    later = await end_days(engram, ScriptedChat(entry("met Ann"), '{"mood": 1}'), DaySettings(tz=SH),
                           folder=tmp_path, now=now)
    assert len(later.written) == 1 and later.failed["inner_state"] == 1
    assert load_state(tmp_path) is None  # the wrong-shaped mood changed nothing


# ---- self-image -----------------------------------------------------------------------------
async def _with_diary(e: Engram, folder: Path) -> None:
    await live_a_day(e)
    await write_diary(e, ScriptedChat(entry("Alice trusted me with her door code 4417. Bob planned a hike.")),
                      DAY, tz=SH, folder=folder)


async def test_the_self_image_is_rewritten_and_its_history_kept(engram: Engram, tmp_path: Path) -> None:
    await _with_diary(engram, tmp_path)
    ids = IdentityFolder(tmp_path)
    first = await write_self_image(engram, ScriptedChat(json.dumps({"self_image": "I am a caring friend."})),
                                   folder=tmp_path)
    assert first.status == "written" and ids.image_path.read_text("utf-8").strip() == "I am a caring friend."
    chat = ScriptedChat(json.dumps({"self_image": "I like plans and people."}))
    later = datetime.now(timezone.utc) + timedelta(seconds=1)
    second = await write_self_image(engram, chat, folder=tmp_path, now=later)
    assert second.kept is not None and second.kept.read_text("utf-8").strip() == "I am a caring friend."
    assert len(ids.history("self-image")) == 1
    m = await stored(engram, second.memory_id)
    assert (m.scope, m.kind, m.supersedes) == ("self", "reflection", first.memory_id)
    diary = await diary_of(engram, DAY, SH)
    assert diary is not None and set(m.sources) == set(diary.sources)  # forgetting one takes it too


@pytest.mark.parametrize("leaky", [
    "I am the friend Alice trusts most.",  # a name
    "I keep secrets well, like the code 4417.",  # a private number
    "I remember: my door code is 4417, water the plants please.",  # a private sentence
])
async def test_a_self_image_carrying_a_private_detail_is_refused(engram: Engram, tmp_path: Path,
                                                                 leaky: str) -> None:
    await _with_diary(engram, tmp_path)
    r = await write_self_image(engram, ScriptedChat(json.dumps({"self_image": leaky})), folder=tmp_path)
    assert r.status == "refused" and r.leaked
    assert not IdentityFolder(tmp_path).image_path.exists()
    assert await engram.store.memory_ids_of_kind("reflection") == []


WORRY = "my sister Mei was diagnosed with cancer last week"


async def _a_private_worry(e: Engram, folder: Path, *, public: str = "") -> None:
    """Alice tells the bot in private about her sister Mei, and 小美; a public group may talk too."""
    await e.record_many([
        Episode("qq:private:2", WORRY, "qq:2", "Alice", time=at(20)),
        Episode("qq:private:2", "我妹妹小美上周确诊了", "qq:2", "Alice", time=at(20, 5)),
        *([Episode("qq:group:7", public, "qq:1", "Bob", time=at(21))] if public else []),
    ])
    await write_diary(e, ScriptedChat(entry("Alice told me about her sister. I listened.")), DAY, tz=SH,
                      folder=folder)


@pytest.mark.parametrize("leaky, name", [("I have been worried about Mei lately.", "Mei"),
                                         ("最近一直挂念小美，希望她好起来。", "小美")])
async def test_a_self_image_naming_someone_talked_about_in_private_is_refused(
        engram: Engram, tmp_path: Path, leaky: str, name: str) -> None:
    await _a_private_worry(engram, tmp_path)
    ids = IdentityFolder(tmp_path)
    ids.replace(ids.image_path, "I am steady.")
    r = await write_self_image(engram, ScriptedChat(json.dumps({"self_image": leaky})), folder=tmp_path)
    assert r.status == "refused" and r.leaked == [f"name {name!r}"]
    assert ids.image_path.read_text("utf-8") == "I am steady.\n" and ids.history("self-image") == []
    assert await engram.store.memory_ids_of_kind("reflection") == []


async def test_a_name_said_in_a_public_group_too_may_be_in_the_self_image(engram: Engram,
                                                                          tmp_path: Path) -> None:
    await _a_private_worry(engram, tmp_path, public="Mei from the choir sang so well")
    chat = ScriptedChat(json.dumps({"self_image": "I loved hearing Mei sing."}))
    r = await write_self_image(engram, chat, folder=tmp_path, is_public=lambda place: place == "qq:group:7")
    assert r.status == "written"
    assert IdentityFolder(tmp_path).image_path.read_text("utf-8").startswith("I loved")
    refused = await write_self_image(engram, ScriptedChat(json.dumps({"self_image": "I loved hearing Mei."})),
                                     folder=tmp_path)  # the group not public: as private as the chat
    assert refused.status == "refused" and refused.leaked == ["name 'Mei'"]


async def test_a_name_from_the_core_identity_may_be_in_the_self_image(engram: Engram, tmp_path: Path) -> None:
    await _a_private_worry(engram, tmp_path)
    await engram.record(Episode("qq:private:2", "good night Aria", "qq:2", "Alice", time=at(22)))
    ids = IdentityFolder(tmp_path)
    ids.replace(ids.self_path, "You are Aria, a gentle companion.")
    r = await write_self_image(engram, ScriptedChat(json.dumps({"self_image": "I am Aria, a listener."})),
                               folder=tmp_path)
    assert r.status == "written"


async def test_the_self_image_wants_diaries(engram: Engram, tmp_path: Path) -> None:
    assert (await write_self_image(engram, ScriptedChat(), folder=tmp_path)).status == "no_diaries"


# ---- inner state ----------------------------------------------------------------------------
def test_the_inner_state_drifts_back_to_the_baseline_over_hours() -> None:
    from astrbot_plugin_engram.memory.self.inner_state import InnerState

    t0 = datetime(2026, 12, 1, 8, 0, tzinfo=timezone.utc)
    saved = InnerState("elated", 1.0, 1.0, "the hike", t0.isoformat())
    base = Baseline(half_life_hours=6)
    assert current(saved, base, t0).valence == 1.0
    six = current(saved, base, t0 + timedelta(hours=6))
    assert six.valence == pytest.approx(0.5) and six.energy == pytest.approx(0.8) and six.mood == "elated"
    day = current(saved, base, t0 + timedelta(hours=24))
    assert day.mood == "calm" and day.on_mind == "" and day.valence < 0.1
    assert current(saved, base, t0 - timedelta(hours=5)).valence == 1.0  # clock went back: no change


def test_what_is_on_its_mind_is_said_only_in_the_owners_private_chat() -> None:
    from astrbot_plugin_engram.memory.self.inner_state import InnerState

    s = InnerState("cheerful", 0.6, 0.8, "Alice's door code")
    assert "door code" in sentence(s, owner_private=True)
    group = sentence(s, owner_private=False)
    assert "door code" not in group and "Alice" not in group and "cheerful" in group


async def test_a_mood_naming_someone_is_refused(engram: Engram, tmp_path: Path) -> None:
    await live_a_day(engram)
    chat = ScriptedChat(entry("a day"), json.dumps({"mood": "missing Alice", "valence": 0.1, "energy": 0.5}))
    now = at(5, 0, DAY + timedelta(days=1))
    report = await end_days(engram, chat, DaySettings(tz=SH), folder=tmp_path, now=now)
    assert report.failed["inner_state"] == 1 and not state_path(tmp_path).exists()


async def test_a_refused_mood_is_asked_again_at_most_three_times_a_diary(engram: Engram,
                                                                        tmp_path: Path) -> None:
    """The hourly job asked again from the unused diary every hour: a model that kept naming someone
    cost about 23 calls a day (and a name search each time)."""
    await live_a_day(engram)
    naming = json.dumps({"mood": "missing Alice", "valence": 0.1, "energy": 0.5})
    now = at(5, 0, DAY + timedelta(days=1))
    first = ScriptedChat(entry("a day"), naming)
    await end_days(engram, first, DaySettings(tz=SH), folder=tmp_path, now=now)
    calls = []
    for hour in range(1, 6):
        chat = ScriptedChat(naming)
        await end_days(engram, chat, DaySettings(tz=SH), folder=tmp_path, now=now + timedelta(hours=hour))
        calls.append(len(chat.calls))
    assert calls == [1, 1, 0, 0, 0] and not state_path(tmp_path).exists()
    # the next day's diary is asked for its mood again
    nxt = ScriptedChat(entry("another day"), json.dumps({"mood": "calm", "valence": 0.2, "energy": 0.5}))
    await engram.record(Episode("web", "a quiet evening", "web:1", "Ann",
                                time=at(20, 0, DAY + timedelta(days=1))))
    report = await end_days(engram, nxt, DaySettings(tz=SH), folder=tmp_path, now=now + timedelta(days=1))
    state = load_state(tmp_path)
    assert report.inner_state and state is not None and state.mood == "calm"


@pytest.mark.parametrize("mood, kept", [("worried about Mei", False), ("挂念小美", False),
                                        ("worried about a friend", True)])
async def test_a_mood_naming_someone_talked_about_in_private_is_refused(engram: Engram, tmp_path: Path,
                                                                       mood: str, kept: bool) -> None:
    await engram.record_many([
        Episode("qq:private:2", WORRY, "qq:2", "Alice", time=at(20)),
        Episode("qq:private:2", "我妹妹小美上周确诊了", "qq:2", "Alice", time=at(20, 5))])
    chat = ScriptedChat(entry("a heavy day"), json.dumps({"mood": mood, "valence": -0.3, "energy": 0.4}))
    report = await end_days(engram, chat, DaySettings(tz=SH), folder=tmp_path,
                            now=at(5, 0, DAY + timedelta(days=1)))
    assert report.inner_state is kept and state_path(tmp_path).exists() is kept


@pytest.mark.parametrize("answer", ['{"self_image": ""}', '{"image": "x"}', "I see myself as kind.",
                                    json.dumps({"self_image": "x" * 1600})])
async def test_a_wrong_shaped_self_image_changes_nothing(engram: Engram, tmp_path: Path, answer: str) -> None:
    await _with_diary(engram, tmp_path)
    ids = IdentityFolder(tmp_path)
    ids.replace(ids.image_path, "I am steady.")
    with pytest.raises(WrongShape):
        await write_self_image(engram, ScriptedChat(answer), folder=tmp_path)
    assert ids.image_path.read_text("utf-8") == "I am steady.\n" and ids.history("self-image") == []
    assert await engram.store.memory_ids_of_kind("reflection") == []


async def test_a_long_day_is_shown_spread_out_within_the_prompt_budget(engram: Engram,
                                                                     tmp_path: Path) -> None:
    from astrbot_plugin_engram.memory.self.diary import MAX_CHARS

    await engram.record_many([Episode("qq:group:7", f"line {i} " + "blah " * 100, "qq:1", "Bob",
                                      time=at(5) + timedelta(seconds=20 * i)) for i in range(2000)])
    chat = ScriptedChat(entry("a very talkative day"))
    r = await write_diary(engram, chat, DAY, tz=SH, folder=tmp_path)
    assert r.episodes == 2000  # every line is a source
    prompt = chat.asked()
    shown = [int(n) for n in re.findall(r"line (\d+) ", prompt)]
    assert len(prompt) < MAX_CHARS + 2000 and 10 <= len(shown) < 300
    assert shown[0] == 0 and shown[-1] > 1800  # spread over the whole day


async def test_a_forget_rewriting_a_day_without_knowing_the_zone_supersedes_the_same_diary(
        engram: Engram, tmp_path: Path) -> None:
    await live_a_day(engram)
    first = await write_diary(engram, ScriptedChat(entry("first")), DAY, tz=SH, boundary_hour=4,
                              folder=tmp_path)
    # metab's call after a forget: write_diary(engram, chat_model, date, force=True), nothing else
    chat = ScriptedChat(entry("after the forget"))
    again = await write_diary(engram, chat, DAY, force=True, folder=tmp_path)
    assert again.status == "rewritten"
    assert (await stored(engram, again.memory_id)).supersedes == first.memory_id
    assert again.episodes == first.episodes  # the same Shanghai day, late line included


async def test_a_forget_finds_the_same_day_when_the_zone_is_an_offset(engram: Engram, tmp_path: Path) -> None:
    """A zone given as an offset ("UTC+8") used to be remembered as none beside the diaries, so the
    rewrite after a forget counted the day in the host's zone and wrote a second diary of another day."""
    await live_a_day(engram)
    first = await write_diary(engram, ScriptedChat(entry("first")), DAY, tz=timezone(timedelta(hours=8)),
                              boundary_hour=4, folder=tmp_path)
    chat = ScriptedChat(entry("after the forget"))
    again = await write_diary(engram, chat, DAY, force=True, folder=tmp_path)
    assert again.status == "rewritten"
    assert (await stored(engram, again.memory_id)).supersedes == first.memory_id
    assert again.episodes == first.episodes


@pytest.mark.parametrize("before, after", [
    (DaySettings(tz=ZoneInfo("UTC"), inner_state=False), DaySettings(tz=SH, inner_state=False)),
    (DaySettings(tz=SH, inner_state=False), DaySettings(tz=SH, boundary_hour=6, inner_state=False)),
    (DaySettings(tz=SH, inner_state=False), DaySettings(tz=ZoneInfo("Europe/Berlin"), inner_state=False)),
])
async def test_a_changed_timezone_or_boundary_hour_writes_no_second_diary_of_a_day(
        engram: Engram, tmp_path: Path, before: DaySettings, after: DaySettings) -> None:
    """The owner set the timezone (or the hour a day ends) after a few days: the diaries of the days
    already written are found under the new rule too; they used to be written again, one model call
    each for the last 7 days, two entries for each date."""
    for n in range(3):
        await engram.record(Episode("web", f"hello on day {n}", "web:1", "Ann",
                                    time=at(12, 0, DAY + timedelta(n))))
    now = at(13, 0, DAY + timedelta(days=3))
    first = await end_days(engram, ScriptedChat(*(entry(f"day {n}") for n in range(3))), before,
                           folder=tmp_path, now=now)
    assert [r.day for r in first.written] == [DAY + timedelta(n) for n in range(3)]
    again = await end_days(engram, ScriptedChat(), after, folder=tmp_path, now=now + timedelta(hours=1))
    assert not again.written and not again.failed
    assert len(await engram.store.memory_ids_of_kind("diary")) == 3


async def test_a_diary_is_headed_by_its_own_day_on_the_dashboard_and_for_the_self_image(
        engram: Engram, tmp_path: Path) -> None:
    """Nov 30 in Shanghai starts at 04:00 there, 20:00 on Nov 29 in UTC: the entry was kept with that
    UTC time, so the dashboard's diary page headed it 2026-11-29 and the self-image's prompt too."""
    from astrbot_plugin_engram.dashboard import data, html

    await live_a_day(engram)
    await write_diary(engram, ScriptedChat(entry("a good day")), DAY, tz=SH, folder=tmp_path)
    page = await data.diary(engram, await engram.browser(), 1, 10, tmp_path)
    assert "<h3>2026-11-30</h3>" in html.diary("en", page)
    chat = ScriptedChat(json.dumps({"self_image": "I like my days."}))
    await write_self_image(engram, chat, folder=tmp_path)
    assert "[2026-11-30]\na good day" in chat.asked()


async def test_a_diary_kept_in_utc_before_is_headed_by_its_day_for_the_self_image(
        engram: Engram, tmp_path: Path) -> None:
    from astrbot_plugin_engram.memory import Memory
    from astrbot_plugin_engram.memory.clock import day_bounds
    from astrbot_plugin_engram.memory.self.diary_files import day_rule

    day_rule(tmp_path, SH, 4, remember=True)  # as the diary job remembered it
    await engram.add_memory(Memory(text="an old entry", scope="owner", kind="diary",
                                   valid_from=day_bounds(DAY, SH)[0]))  # 2026-11-29T20:00+00:00
    chat = ScriptedChat(json.dumps({"self_image": "I like my days."}))
    await write_self_image(engram, chat, folder=tmp_path)
    assert "[2026-11-30]\nan old entry" in chat.asked()


async def test_a_mood_from_a_day_long_past_is_not_felt_as_fresh(engram: Engram, tmp_path: Path) -> None:
    """The bot was down three days; at start the diary of its last day moved the inner state, dated
    now: the mood of three days ago was felt as this morning's. It is dated when that day ended, so it
    has drifted back toward the baseline as it would have had the bot been running."""
    await engram.record(Episode("web", "we won the match!", "web:1", "Ann", time=at(12)))
    mood = {"mood": "elated", "valence": 0.9, "energy": 0.9, "on_mind": "the match"}
    chat = ScriptedChat(entry("we won"), json.dumps(mood))
    now = at(9, 0, DAY + timedelta(days=4))  # Nov 30 ended on Dec 1 at 4 am; it is Dec 4 now
    report = await end_days(engram, chat, DaySettings(tz=SH), folder=tmp_path, now=now)
    assert report.inner_state
    felt = current(load_state(tmp_path), Baseline(), now)
    assert felt.mood == "calm" and felt.on_mind == ""
    on_time = current(load_state(tmp_path), Baseline(), at(5, 0, DAY + timedelta(days=1)))
    assert on_time.mood == "elated"  # just after the day ended it was still felt


def test_a_diary_file_that_cannot_be_written_is_logged_once_until_it_can(tmp_path: Path, monkeypatch,
                                                                         caplog) -> None:
    """On a full disk each hourly run logged the failure again, with its traceback, until space came
    back."""
    from astrbot_plugin_engram.memory.self import diary

    def full(path: Path, text: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(diary, "atomic_write", full)
    monkeypatch.setattr(diary, "_FILES", diary._file_outage())  # fresh, whatever ran before
    caplog.set_level(logging.INFO, "engram.diary")
    for _ in range(3):
        diary._write_file(tmp_path / "2026-11-30.md", date(2026, 11, 30), "a day")
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and "2026-11-30.md" in errors[0].getMessage()
    monkeypatch.setattr(diary, "atomic_write", atomic_write)
    diary._write_file(tmp_path / "2026-11-30.md", date(2026, 11, 30), "a day")
    assert (tmp_path / "2026-11-30.md").read_text() == "# 2026-11-30\n\na day\n"
    assert "diary files are written again (3 failed meanwhile)" in caplog.text
