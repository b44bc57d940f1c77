"""A person's own forget (``Engram.forget_own``, the model's ``memory_forget`` tool): their lines in the
place they ask from, the bot's answers to them and the memories of that place about them go, on disk;
another person's lines, another place, the owner's notes and a memory holding someone else's words stay."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from astrbot_plugin_engram.memory import Audience, Episode, InvalidInputError, Memory, place_scope

from .conftest import EngramOpener
from .marker import MARK

GROUP, OTHER = "qq:group:1", "qq:group:2"
MING, BOB, BOT = "qq:ming", "qq:bob", "qq:bot"
T0 = datetime(2026, 5, 1, 10, 0, tzinfo=timezone.utc)


def ep(place: str, text: str, actor: str = MING, minutes: int = 0, kind: str = "message_in") -> Episode:
    return Episode(place=place, content=text, actor=actor, actor_name=actor.split(":")[1], kind=kind,
                   time=T0 + timedelta(minutes=minutes))


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "data").mkdir()
    return tmp_path / "data"


@pytest.fixture
def db_path(folder: Path) -> Path:
    return folder / "engram.db"


async def test_their_line_the_bots_answer_and_the_memory_about_them_go_and_nothing_else(
        folder: Path, open_engram: EngramOpener) -> None:
    e = await open_engram()
    said, answer, bobs, elsewhere = await e.record_many([
        ep(GROUP, f"my ex is called {MARK}"),
        ep(GROUP, f"got it, your ex is {MARK}", BOT, 1, "message_out"),
        ep(GROUP, f"Bob here: I met {MARK} too", BOB, 2),
        ep(OTHER, f"my ex {MARK} moved away", MING, 3)])
    about = await e.add_memory(Memory(f"Ming's ex is {MARK}", place_scope(GROUP), subjects=(MING,),
                                      sources=(said,)))
    owners = await e.add_memory(Memory(f"Ming's ex is {MARK}", "owner", subjects=(MING,), sources=(said,)))
    other = await e.add_memory(Memory(f"Ming's ex {MARK} moved", place_scope(OTHER), subjects=(MING,),
                                      sources=(elsewhere,)))

    # Bob's line, another place's line and memory, and the owner's note are named too: they stay
    done = await e.forget_own(MING, GROUP, [said, bobs, elsewhere], [about, owners, other])

    # the owner's note drew on the line: the line stays for it (the owner can /mem forget it); the
    # bot's answer and the memory of this place about her go
    assert done.left == [said] and done.plan.episodes == [answer] and done.plan.memories == [about]
    owners_gone = await e.forget_own(MING, GROUP, [said], [])
    assert owners_gone.left == [said] and owners_gone.plan.episodes == []
    assert sorted(await e.store.get_memories([about, owners, other])) == [owners, other]
    await e.forget([owners], with_sources=False)  # the owner forgets the note; now the line is hers to erase
    done = await e.forget_own(MING, GROUP, [said], [])
    assert done.left == [] and done.plan.episodes == [said]
    assert sorted(await e.store.get_episodes([said, answer, bobs, elsewhere])) == [bobs, elsewhere]
    hits = await e.recall(f"ex {MARK}", Audience(GROUP), k=20)
    assert [h.key for h in hits] == [f"e{bobs}"]
    await e.close()


async def test_a_memory_drawn_from_their_line_and_someone_elses_keeps_the_line(
        folder: Path, open_engram: EngramOpener) -> None:
    e = await open_engram()
    mine, bobs = await e.record_many([ep(GROUP, "we should book the cabin"),
                                      ep(GROUP, "yes, for the first week of June", BOB, 1)])
    plan = await e.add_memory(Memory("The group books the cabin for June", place_scope(GROUP),
                                     sources=(mine, bobs)))
    done = await e.forget_own(MING, GROUP, [mine], [plan])
    assert done.left == [mine] and done.plan.episodes == [] and done.plan.memories == []
    assert (await e.get(plan)).text.startswith("The group books")
    await e.close()


async def test_a_memory_about_them_goes_with_their_lines_it_came_from_not_others(
        open_engram: EngramOpener) -> None:
    e = await open_engram()
    mine, bobs = await e.record_many([ep(GROUP, "I am allergic to cat hair"),
                                      ep(GROUP, "Ming can't come to the cat cafe", BOB, 1)])
    mid = await e.add_memory(Memory("Ming is allergic to cat hair", place_scope(GROUP), subjects=(MING,),
                                    sources=(mine, bobs)))
    done = await e.forget_own(MING, GROUP, [], [mid])
    assert done.plan.memories == [mid] and done.plan.episodes == [mine] and done.left == []
    assert list(await e.store.get_episodes([mine, bobs])) == [bobs]
    await e.close()


async def test_without_a_person_or_place_it_is_refused(open_engram: EngramOpener) -> None:
    e = await open_engram()
    for person, place in (("", GROUP), (MING, " ")):
        with pytest.raises(InvalidInputError):
            await e.forget_own(person, place, [1], [])
    await e.close()
