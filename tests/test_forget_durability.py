"""A kill -9 during a forget leaves the old state or the new one, never half of it (and no trace of
the erased text once the store is opened again)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from astrbot_plugin_engram.memory import Audience, Episode, Memory, NoEmbedder, place_scope
from astrbot_plugin_engram.memory.scopes import OWNER
from astrbot_plugin_engram.memory.self.diary_files import diary_day, diary_path
from astrbot_plugin_engram.memory.self.identity import IdentityFolder
from astrbot_plugin_engram.memory.self.proposals import Proposals

from .conftest import EngramOpener
from .marker import MARK, traces

ROOT = Path(__file__).resolve().parent.parent
SPACE, PERSON = "qq:group:1", "qq:ming"
LINES = 300


async def seed(open_engram: EngramOpener) -> None:
    e = await open_engram(NoEmbedder())
    await e.record_many([Episode(place=SPACE, content=f"line {n} from Ming: {MARK}", actor=PERSON,
                                 actor_name="Ming") for n in range(LINES)]
                        + [Episode(place=SPACE, content="Bob says hello", actor="qq:bob", actor_name="Bob")])
    await e.add_memory(Memory(text=f"Ming's code is {MARK}", scope=place_scope(SPACE), subjects=(PERSON,),
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


def kill_forget_at(path: Path, where: str) -> None:
    """A child process forgets PERSON in ``path`` and is killed (SIGKILL) when it reaches ``where``."""
    child = subprocess.Popen(  # noqa: ASYNC220  (the parent only waits for one line, then kills)
        [sys.executable, "-m", "tests._forget_child", str(path), PERSON, where],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert child.stdout is not None
        assert child.stdout.readline().decode().strip() == where
    finally:  # killed also when the test fails here
        child.kill()
        child.wait()


@pytest.mark.parametrize("where, expected", [("inside", (LINES, 1)), ("committed", (0, 0))])
async def test_a_kill_during_a_forget_leaves_all_of_it_or_none(
        tmp_path: Path, db_path: Path, open_engram: EngramOpener, where: str,
        expected: tuple[int, int]) -> None:
    path = db_path  # in tmp_path, whose every file the marker search reads
    await seed(open_engram)
    kill_forget_at(path, where)
    said, memories, hits, problems = await state(open_engram)
    assert (said, memories) == expected and problems == []
    assert (hits > 0) == (said > 0)
    if not said:
        assert traces(tmp_path) == []  # reopening finished the job: no copy left in the log


@pytest.mark.parametrize("where", ["inside", "committed"])
async def test_a_kill_after_the_erase_still_erases_the_files_beside_the_store(
        tmp_path: Path, db_path: Path, open_engram: EngramOpener, where: str) -> None:
    """Killed after the erase committed, before the files beside the store: the day's diary file and
    an identity proposal drawn from the forgotten lines still held the forgotten text, and nothing
    ever removed it. The next open finishes the forget's files; a kill before the commit leaves
    them, as it leaves the store."""
    await seed(open_engram)
    e = await open_engram(NoEmbedder())
    day_start = datetime(2026, 5, 1, 10, tzinfo=timezone.utc)
    await e.add_memory(Memory(text=f"Ming told me his code {MARK} today.", scope=OWNER, kind="diary",
                              sources=(1,), valid_from=day_start))
    folder = db_path.parent
    diary = diary_path(folder, diary_day(folder, day_start))
    diary.parent.mkdir(parents=True)
    diary.write_text(f"# day\n\nMing told me his code {MARK} today.\n", "utf-8")
    proposals = Proposals(IdentityFolder(folder))
    proposals.propose(f"I keep Ming's code {MARK} safe.", "he trusted me", SPACE)
    kept = proposals.propose("I like quiet mornings.", "", "qq:group:2")
    await e.close()
    kill_forget_at(db_path, where)
    said, memories, _, problems = await state(open_engram)
    assert problems == []
    if where == "committed":
        assert (said, memories) == (0, 0)
        assert traces(tmp_path) == []  # neither the diary file nor the proposal holds the forgotten text
        assert [p.id for p in proposals.all()] == [kept.id]  # what the forget did not reach stays
    else:  # nothing was forgotten: the files stay as they were too
        assert (said, memories) == (LINES, 2)
        assert MARK in diary.read_text("utf-8") and len(proposals.all()) == 2
    assert not (tmp_path / ".forget-pending.json").exists()


async def test_a_forget_whose_files_cannot_be_written_still_answers_that_it_forgot(
        tmp_path: Path, db_path: Path, open_engram: EngramOpener, monkeypatch) -> None:
    """A full disk after the erase: the command answered with an error, though the lines and
    memories were gone (a retry then said "no memory here"). Now it says what was erased and that
    the files are finished at the next start, which does so."""
    from astrbot_plugin_engram.memory.metabolism import forgetting

    await seed(open_engram)
    e = await open_engram(NoEmbedder())
    folder = db_path.parent
    proposals = Proposals(IdentityFolder(folder))
    proposals.propose(f"I keep Ming's code {MARK} safe.", "he trusted me", SPACE)

    def full(engram, plan):  # type: ignore[no-untyped-def]
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(forgetting, "_erase_files", full)
    done = await e.forget_person(PERSON)
    assert done.files_left and "finished at the next start" in done.summary()
    assert (await e.counts())["episodes"] == 1 and (tmp_path / ".forget-pending.json").exists()  # Bob's
    await e.close()
    monkeypatch.undo()
    e = await open_engram(NoEmbedder())  # the next start finishes the files
    await e.close()
    assert not (tmp_path / ".forget-pending.json").exists() and proposals.all() == []


DIARY_CHILD = """
import resource, signal, sys
from datetime import date
from pathlib import Path
from astrbot_plugin_engram.memory.self.diary import _write_file
path, text = Path(sys.argv[1]), sys.argv[2]
signal.signal(signal.SIGXFSZ, signal.SIG_DFL)  # Python ignores it; the kernel's default kills
resource.setrlimit(resource.RLIMIT_FSIZE, (len(text) // 2, len(text) // 2))
_write_file(path, date(2026, 5, 1), text)
print("finished")
"""


async def test_a_diary_file_cut_by_a_kill_is_erased_by_a_forget_of_its_day(
        tmp_path: Path, db_path: Path, open_engram: EngramOpener) -> None:
    """Killed while writing a day's diary file, the writer leaves its temporary file beside it (the
    diary file itself stays whole); a later forget of the day erased the diary file and left the
    temporary one holding the forgotten text."""
    await seed(open_engram)
    e = await open_engram(NoEmbedder())
    day_start = datetime(2026, 5, 1, 10, tzinfo=timezone.utc)
    text = "".join(f"Ming told me his code {MARK}, and more, line {i}.\n" for i in range(200))
    await e.add_memory(Memory(text=text, scope=OWNER, kind="diary", sources=(1,), valid_from=day_start))
    await e.close()
    diary = diary_path(tmp_path, diary_day(tmp_path, day_start))
    done = await asyncio.to_thread(subprocess.run, [sys.executable, "-c", DIARY_CHILD, str(diary), text],
                                   cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode < 0 and "finished" not in done.stdout, done.stderr  # killed mid-write
    assert traces(tmp_path / "diary")  # the cut write is there
    e = await open_engram(NoEmbedder())
    await e.forget_person(PERSON)
    await e.close()
    assert traces(tmp_path) == []


IMAGE_CHILD = """
import resource, signal, sys
from pathlib import Path
from astrbot_plugin_engram.memory.self.identity import IdentityFolder
folder, limit = IdentityFolder(Path(sys.argv[1])), int(sys.argv[2])
signal.signal(signal.SIGXFSZ, signal.SIG_DFL)  # Python ignores it; the kernel's default kills
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
folder.replace(folder.image_path, "I like quiet mornings.")
print("finished")
"""


async def test_a_self_image_version_cut_by_a_kill_is_erased_by_a_forget_that_takes_the_self_image(
        tmp_path: Path, db_path: Path, open_engram: EngramOpener) -> None:
    """Killed while the old self-image is kept in ``history/``, the writer leaves its temporary file
    there (a name of its own per write since each write has one); a forget that takes the self-image
    must find it by that name and erase it with the rest."""
    await seed(open_engram)
    e = await open_engram(NoEmbedder())
    text = "".join(f"I keep Ming's code {MARK} safe, line {i}.\n" for i in range(200))
    await e.add_memory(Memory(text=text, scope="self", kind="reflection", subjects=("self",), sources=(1,)))
    await e.close()
    ids = IdentityFolder(tmp_path)
    ids.image_path.parent.mkdir(parents=True)
    ids.image_path.write_text(text, "utf-8")
    done = await asyncio.to_thread(subprocess.run, [sys.executable, "-c", IMAGE_CHILD, str(tmp_path),
                                                    str(len(text) // 2)],
                                   cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode < 0 and "finished" not in done.stdout, done.stderr  # killed mid-write
    assert traces(tmp_path / "identity" / "history")  # the cut copy is there
    e = await open_engram(NoEmbedder())
    await e.forget_person(PERSON)
    await e.close()
    assert traces(tmp_path) == []
