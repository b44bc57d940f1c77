"""Defects the soak (``driver.py``) found, each pinned on its own, small and fast."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

from astrbot_plugin_engram.memory import SELF, Engram, Episode

from ..conftest import EngramOpener

GROUP = "qq:group:100"
T0 = datetime(2027, 1, 4, 9, tzinfo=timezone.utc)


def _on_disk(db_path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in db_path.parent.iterdir() if p.name.startswith(db_path.name))


async def _group_day(e: Engram) -> None:
    await e.record_many([
        Episode(GROUP, "I just moved to Brambleton.", actor="qq:777", actor_name="Zedekiah Quorn", time=T0),
        Episode(GROUP, "Welcome!", actor=SELF, kind="message_out", time=T0 + timedelta(minutes=1)),
        Episode(GROUP, "Hi all, Susan here.", actor="qq:5", actor_name="Susan",
                time=T0 + timedelta(minutes=2)),
    ])


async def test_a_forgotten_person_s_name_in_a_place_is_gone_from_the_store(
        db_path: Path, open_engram: EngramOpener) -> None:
    """Found on day 100 of the soak: after forget-person the name a group knew them by stayed in the
    store file (the table of names per place), and a new line naming them still found them there."""
    e = await open_engram()
    await _group_day(e)
    await e.forget_person("qq:777")
    assert await e.people_mentioned_in(GROUP, "Did Zedekiah Quorn leave?") == []
    assert await e.names_in_place(GROUP, ["qq:777"]) == {}
    assert await e.people_named_in(GROUP, "Susan") == ["qq:5"]  # the others' names stay
    await e.close()
    assert b"Zedekiah" not in _on_disk(db_path) and b"Quorn" not in _on_disk(db_path)


async def test_a_forgotten_place_keeps_no_names_of_it(open_engram: EngramOpener) -> None:
    """The names people went by in a forgotten place go with it (the table of names per place)."""
    e = await open_engram()
    await _group_day(e)
    await e.forget_place(GROUP)
    assert await e.people_named_in(GROUP, "Susan") == []
    assert await e.people_mentioned_in(GROUP, "Zedekiah Quorn and Susan") == []
    assert await e.names_in_place(GROUP, ["qq:777", "qq:5"]) == {}


async def test_a_forgotten_place_takes_the_names_of_who_spoke_only_there(
        db_path: Path, open_engram: EngramOpener) -> None:
    """After forget-place, the name of someone who spoke only in that place stayed in the store file
    (the table of every name a person went by), and ``people_named`` still found them. A name someone
    used elsewhere too stays, and so does everyone who still has lines."""
    e = await open_engram()
    await _group_day(e)
    other = "qq:group:200"
    await e.record_many([Episode(other, "Susan again, from the other group.", actor="qq:5", actor_name="Sue",
                                 time=T0 + timedelta(hours=1))])
    await e.forget_place(GROUP)
    assert await e.people_named("Zedekiah Quorn") == []
    assert await e.aliases("qq:777") == []
    assert await e.aliases("qq:5") == ["Sue"]  # 'Susan' was said only in the forgotten group
    assert await e.people_named_in(other, "Sue") == ["qq:5"]
    await e.close()
    assert b"Zedekiah" not in _on_disk(db_path) and b"Quorn" not in _on_disk(db_path)


async def test_a_memory_recalled_once_then_updated_fades_from_its_update(engram: Engram) -> None:
    """A memory recalled once, then updated by consolidation (a new version), faded from the day it was
    last recalled, not from its update: 60 days after an update it was archived, while its twin,
    updated the same day but never recalled, stayed. Being recalled must never shorten a memory's life."""
    from astrbot_plugin_engram.memory import Audience, Memory
    from astrbot_plugin_engram.memory.model import next_version

    day = timedelta(days=1)
    ids = [await engram.add_memory(Memory(text=f"Sam's {pet} is called {name}", scope=f"space:{GROUP}",
                                          created_at=T0))
           for pet, name in (("cat", "Mochi"), ("dog", "Biscuit"))]
    engram.toucher.touch([ids[0]], at=(T0 + 5 * day).timestamp())  # recalled once, on day 5
    await engram.toucher.flush()
    new = []
    for i in ids:  # consolidation updates both on day 50
        old = await engram.get(i)
        newer = next_version(old, T0 + 50 * day, text=old.text + " (3 years old)")
        [mid] = await engram.commit_memories([(newer, i)], {})
        new.append(mid)
    await engram.fade(now=T0 + 110 * day)
    recalled, never = [await engram.get(i) for i in new]
    assert never.status == "active"
    assert recalled.status == "active"  # before the fix: archived, 105 days after its one recall
    await engram.embed_pending()
    hits = {h.id: h for h in await engram.recall("Mochi Biscuit", Audience(GROUP), k=5, now=T0 + 110 * day)}
    assert hits[new[0]].features["strength"] >= hits[new[1]].features["strength"]


async def test_the_hourly_diary_run_reads_a_week_of_diaries_however_long_the_bot_lived(
        engram: Engram, tmp_path: Path) -> None:
    """Found in the soak's fifth month: every hourly diary run read every diary ever written (with
    all their source ids) to find the last seven days', nine times, on the event loop's own thread;
    a run's time grew with each day lived (half a second an hour at 150 days on the test machine)."""
    from astrbot_plugin_engram.memory import Memory
    from astrbot_plugin_engram.memory.clock import day_bounds
    from astrbot_plugin_engram.memory.self.day_end import DaySettings, end_days
    from astrbot_plugin_engram.memory.self.diary import diary_of, recent_diaries

    from ..scripted_chat import ScriptedChat

    tz, first = timezone(timedelta(hours=8)), T0.date()
    for n in range(400):  # more than a year of diaries
        start = day_bounds(first + timedelta(days=n), tz, 4)[0]
        await engram.add_memory(Memory(text=f"Day {n}: a quiet day.", scope="owner", kind="diary",
                                       created_at=start + timedelta(days=1), valid_from=start))
    asked: list[int] = []
    real = engram.store.get_memories

    async def counted(ids):  # type: ignore[no-untyped-def]
        asked.extend(ids)
        return await real(ids)

    engram.store.get_memories = counted  # type: ignore[method-assign]
    now = day_bounds(first + timedelta(days=400), tz, 4)[0] + timedelta(hours=1)
    report = await end_days(engram, ScriptedChat(), DaySettings(tz=tz, inner_state=False), folder=tmp_path,
                            now=now)
    assert report.failed == {} and not report.written  # the week's diaries are all there
    assert len(asked) <= 2 * 7, len(asked)  # before: 3,200 diaries read (400, eight times)
    found = await diary_of(engram, first + timedelta(days=399), tz, 4)
    assert found is not None and found.text == "Day 399: a quiet day."
    latest = [m.text for m in await recent_diaries(engram, 2)]
    assert latest == ["Day 398: a quiet day.", "Day 399: a quiet day."]
