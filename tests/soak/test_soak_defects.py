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
    assert await e.names_in_space(GROUP, ["qq:777"]) == {}
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
    assert await e.names_in_space(GROUP, ["qq:777", "qq:5"]) == {}


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
