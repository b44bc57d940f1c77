"""A kill -9 during a forget leaves the old state or the new one, never half of it (and no trace of
the erased text once the store is opened again)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from astrbot_plugin_engram.memory import Audience, Episode, Memory, NoEmbedder, space_scope

from .conftest import EngramOpener
from .marker import MARK, traces

ROOT = Path(__file__).resolve().parent.parent
SPACE, PERSON = "qq:group:1", "qq:ming"
LINES = 300


async def seed(open_engram: EngramOpener) -> None:
    e = await open_engram(NoEmbedder())
    await e.record_many([Episode(space=SPACE, content=f"line {n} from Ming: {MARK}", actor=PERSON,
                                 actor_name="Ming") for n in range(LINES)]
                        + [Episode(space=SPACE, content="Bob says hello", actor="qq:bob", actor_name="Bob")])
    await e.add_memory(Memory(text=f"Ming's code is {MARK}", scope=space_scope(SPACE), subjects=(PERSON,),
                              sources=(1, 2)))
    await e.close()


async def state(open_engram: EngramOpener) -> tuple[int, int, int, list[str]]:
    e = await open_engram(NoEmbedder())
    s = await e.stats()
    said = len(await e.store.episodes_where(actor=PERSON))
    hits = [h.text for h in await e.recall(MARK, Audience(SPACE), k=50)]
    problems = await e.store.integrity()
    await e.close()
    return said, s["memories"], len(hits), problems


@pytest.mark.parametrize("where, expected", [("inside", (LINES, 1)), ("committed", (0, 0))])
async def test_a_kill_during_a_forget_leaves_all_of_it_or_none(
        tmp_path: Path, db_path: Path, open_engram: EngramOpener, where: str,
        expected: tuple[int, int]) -> None:
    path = db_path  # in tmp_path, whose every file the marker search reads
    await seed(open_engram)
    child = subprocess.Popen(  # noqa: ASYNC220  (the parent only waits for one line, then kills)
        [sys.executable, "-m", "tests._forget_child", str(path), PERSON, where],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert child.stdout is not None
        assert child.stdout.readline().decode().strip() == where
    finally:  # killed also when the test fails here
        child.kill()
        child.wait()
    said, memories, hits, problems = await state(open_engram)
    assert (said, memories) == expected and problems == []
    assert (hits > 0) == (said > 0)
    if not said:
        assert traces(tmp_path) == []  # reopening finished the job: no copy left in the log
