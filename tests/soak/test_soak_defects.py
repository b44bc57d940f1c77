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
        Episode(GROUP, "Hi all, Susan here.", actor="qq:5", actor_name="Susan", time=T0 + timedelta(minutes=2)),
    ])


async def test_a_forgotten_person_s_name_in_a_place_is_gone_from_the_store(db_path: Path,
                                                                            open_engram: EngramOpener) -> None:
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
