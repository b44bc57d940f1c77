"""The journal of kept messages (``memory/kept.py``): what the store could not take is read back
whole and in order, a record cut by a kill is skipped, a kill between the store's commit and the
clearing of the journal writes nothing twice, and on a full disk the reserve still takes records."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from astrbot_plugin_engram.memory import Engram, Episode
from astrbot_plugin_engram.memory.recording.journal import KeptJournal, kept_path

from .small_disk import fill, small_disk

T0 = datetime(2026, 5, 1, 20, 30, tzinfo=timezone(timedelta(hours=8)))


def eps(n: int, start: int = 0) -> list[Episode]:
    return [Episode("qq:group:1", f"line {k} 晚上好", actor="qq:7", actor_name="小明",
                    time=T0 + timedelta(minutes=k), meta={"injected": [f"m{k}"]})
            for k in range(start, start + n)]


def test_kept_messages_read_back_whole_and_in_order_a_cut_one_skipped(tmp_path: Path) -> None:
    path = kept_path(tmp_path / "engram.db")
    journal = KeptJournal(path, reserve=4096)
    journal.reserve()
    assert path.stat().st_size == 4096
    assert journal.append(eps(3)) == 3
    with path.open("r+b") as f:  # a kill in the middle of the next record
        f.seek(journal.end)
        f.write(b'{"space":"qq:group:1","content":"cut by a ki')
    again = KeptJournal(path, reserve=4096)
    assert again.records == eps(3) and again.count == 3 and again.gen == journal.gen
    assert again.append(eps(1, 3)) == 1  # over the cut piece
    assert KeptJournal(path).records == eps(4)


async def test_a_kill_after_the_commit_before_the_clear_writes_nothing_twice(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "engram.db"
    e = await Engram.open(db, None, background=False)
    try:
        journal = KeptJournal(kept_path(db))
        journal.append(eps(3))
        saved = kept_path(db).read_bytes()
        assert await e.record_kept(journal) == 3
        kept_path(db).write_bytes(saved)  # as if killed before the journal was cleared
        journal = KeptJournal(kept_path(db))
        journal.append(eps(2, 3))  # and two more said after the restart, same generation
        assert await e.record_kept(journal) == 2
        n = (await e.stats())["episodes"]
        assert [x.content for x in (await e.episodes(list(range(1, n + 1)))).values()] == \
            [f"line {k} 晚上好" for k in range(5)]
        assert KeptJournal(kept_path(db)).count == 0
    finally:
        await e.close()


def test_on_a_full_disk_the_reserve_takes_records_and_past_it_they_are_refused_whole(tmp_path: Path) -> None:
    with small_disk(tmp_path / "disk", 1024) as disk:
        journal = KeptJournal(disk / "engram.db-kept", reserve=64 * 1024)
        journal.reserve()
        fill(disk)
        taken = sum(journal.append(eps(1, k)) for k in range(2000))  # until the reserve is used up
        assert 100 < taken < 2000 and journal.failed
        assert KeptJournal(disk / "engram.db-kept").records == eps(taken)  # no cut record left behind
        journal.clear()
        assert KeptJournal(disk / "engram.db-kept").records == [] and not journal.failed
        assert journal.append(eps(2)) == 2  # the reserve is kept, and works again while still full


def test_the_cli_forgets_no_person_or_place_while_the_bot_keeps_messages_beside_the_store(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: the command line forgot what the store held, and the lines the bot kept meanwhile
    (a full disk) were written afterwards: the person's words came back."""
    from astrbot_plugin_engram.memory.cli.main import main

    db = tmp_path / "engram.db"
    assert main(["--db", str(db), "--embedder", "none", "record", "my code is 4471", "--space", "qq:group:1",
                 "--actor", "qq:carol", "--name", "Carol"]) == 0
    KeptJournal(kept_path(db)).append([Episode("qq:group:1", "my locker is 9911", actor="qq:carol")])
    for argv in (["forget-person", "qq:carol"], ["forget-place", "qq:group:1"]):
        assert main(["--db", str(db), "--embedder", "none", *argv]) == 2
        assert "1 messages the bot kept in" in capsys.readouterr().err
    assert main(["--db", str(db), "--embedder", "none", "show", "e1"]) == 0
    assert "my code is 4471" in capsys.readouterr().out  # still there: nothing was forgotten
