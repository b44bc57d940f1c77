"""Backups (issue 28): an online copy while the store is written, the newest N kept, a restore that
leaves forgotten things forgotten, and the command line's ``backup`` and ``restore``."""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from astrbot_plugin_engram.memory import Audience, Engram, Episode, Memory
from astrbot_plugin_engram.memory.backups import backups, erase_list_path, restore, take_backup
from astrbot_plugin_engram.memory.cli.main import main
from astrbot_plugin_engram.memory.scopes import place_scope

from .conftest import HashEmbedder
from .marker import MARK, ZH, files_with_marker, traces

GROUP, OTHER = "qq:group:1", "qq:group:2"
MING, BOB = "qq:ming", "qq:bob"
T0 = datetime(2026, 5, 1, 10, 0, tzinfo=timezone.utc)


def ep(place: str, text: str, actor: str = BOB, name: str = "Bob", minutes: int = 0) -> Episode:
    return Episode(place=place, content=text, actor=actor, actor_name=name,
                   time=T0 + timedelta(minutes=minutes))


def parts(folder: Path) -> list[Path]:
    """Copies left half-written in ``folder``."""
    return list(folder.glob("*.part"))


def rows(path: Path, sql: str) -> list[tuple[object, ...]]:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


async def test_a_backup_is_taken_while_the_bot_records_and_is_a_whole_store(tmp_path: Path) -> None:
    path = tmp_path / "engram.db"
    e = await Engram.open(path, HashEmbedder(), background=False)
    try:
        await e.record_many([ep(GROUP, f"line {i}", minutes=i) for i in range(500)])
        later = [ep(GROUP, f"later {i}", minutes=600 + i) for i in range(300)]
        writing = asyncio.create_task(e.record_many(later))
        backup = await take_backup(path, keep=3)
        await writing
    finally:
        await e.close()
    assert backup.parent == tmp_path / "backups" and backup.name.endswith("Z.db")
    assert rows(backup, "PRAGMA integrity_check") == [("ok",)]
    n = rows(backup, "SELECT count(*) FROM episodes")[0][0]
    assert isinstance(n, int) and 500 <= n <= 800  # one consistent moment: before, or after, the batch
    assert not parts(tmp_path / "backups")


async def test_the_newest_backups_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "engram.db"
    e = await Engram.open(path, HashEmbedder(), background=False)
    await e.record(ep(GROUP, "hello"))
    await e.close()
    for day in range(5):
        await take_backup(path, keep=3, now=T0 + timedelta(days=day))
    assert [p.name for p in backups(path)] == ["engram-20260505T100000Z.db", "engram-20260504T100000Z.db",
                                               "engram-20260503T100000Z.db"]


async def test_a_restore_of_a_backup_taken_before_a_forget_does_not_bring_the_forgotten_back(
        tmp_path: Path) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    path = folder / "engram.db"
    e = await Engram.open(path, HashEmbedder(), background=False)
    ids = await e.record_many([ep(GROUP, f"I keep my spare key under {MARK}", MING, "Ming"),
                               ep(OTHER, f"{ZH} is the word", MING, "Ming", minutes=1),
                               ep(GROUP, "the weather is nice", minutes=2)])
    mid = await e.add_memory(Memory(text=f"the gate code is {MARK}", scope=place_scope(GROUP),
                                    sources=(ids[2],)))
    backup = await take_backup(path, now=T0)
    offsite = tmp_path / "offsite.db"  # a copy the owner keeps elsewhere, which no forget reaches
    offsite.write_bytes(backup.read_bytes())
    await e.forget_person(MING)
    await e.forget([mid])
    await e.record(ep(GROUP, "after the forget", minutes=3))
    await e.close()
    # the forget reached the backup beside the store too; the erase list holds none of their text
    assert traces(folder) == [] and [p.name for p in backups(path)] == [backup.name]
    erase_list = erase_list_path(path).read_text("utf-8")
    assert MING not in erase_list and "Ming" not in erase_list and "spare key" not in erase_list
    assert files_with_marker(tmp_path) == {"offsite.db"}

    done = await restore(path, offsite, now=T0 + timedelta(days=1))

    assert (done.episodes_erased, done.memories_erased, done.people_erased) == (2, 1, 1)
    assert done.set_aside is not None and done.set_aside.exists()
    e = await Engram.open(path, HashEmbedder(), background=False)
    try:
        assert [x.content for x in (await e.episodes([1, 2, 3])).values()] == ["the weather is nice"]
        assert await e.aliases(MING) == []
        assert not [h for h in await e.recall(f"{MARK} spare key gate code", Audience.owner_console(), k=20)
                    if MARK in h.text]
    finally:
        await e.close()
    assert traces(folder) == []  # the restored store holds no byte of them


async def test_the_command_line_backs_up_lists_and_restores(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "engram.db"
    e = await Engram.open(path, HashEmbedder(), background=False)
    await e.record(ep(GROUP, "kept in the backup"))
    await e.close()
    assert await asyncio.to_thread(main, ["--db", str(path), "backup", "--keep", "2"]) == 0
    [backup] = backups(path)
    assert f"backed up to {backup}" in capsys.readouterr().out
    assert await asyncio.to_thread(main, ["--db", str(path), "restore"]) == 0
    assert capsys.readouterr().out.strip() == str(backup)
    path.unlink()  # the store is lost
    assert await asyncio.to_thread(main, ["--db", str(path), "restore", str(backup)]) == 0
    assert "restored from" in capsys.readouterr().out
    assert rows(path, "SELECT content FROM episodes") == [("kept in the backup",)]
    assert await asyncio.to_thread(main, ["--db", str(path), "restore", str(tmp_path / "nope.db")]) == 2
    assert await asyncio.to_thread(main, ["--db", str(tmp_path / "none.db"), "backup"]) == 2


async def test_two_backups_in_the_same_second_are_two_files_the_later_one_newest(tmp_path: Path) -> None:
    path = tmp_path / "engram.db"
    at = datetime(2026, 5, 2, 3, 0, 0, tzinfo=timezone.utc)
    e = await Engram.open(path, HashEmbedder(), background=False)
    try:
        await e.record_many([ep(GROUP, "before the first backup")])
        first = await take_backup(path, keep=5, now=at)
        await e.record_many([ep(GROUP, "between the two", minutes=1)])
        second = await take_backup(path, keep=5, now=at)
        # and two at once in one process: neither writes over the other's copy
        third, fourth = await asyncio.gather(take_backup(path, keep=5, now=at),
                                             take_backup(path, keep=5, now=at))
    finally:
        await e.close()
    assert len({first, second, third, fourth}) == 4
    assert second.name == first.name.replace("Z.db", "Z-2.db")
    assert backups(path)[2:] == [second, first] and set(backups(path)[:2]) == {third, fourth}  # newest first
    assert rows(first, "SELECT count(*) FROM episodes") == [(1,)]
    assert rows(second, "SELECT count(*) FROM episodes") == [(2,)]
    for b in (first, second, third, fourth):
        assert rows(b, "PRAGMA integrity_check") == [("ok",)]
    assert not parts(tmp_path / "backups")


def test_the_erase_list_is_compacted_past_a_thousand_forgets_and_keeps_every_entry(tmp_path: Path) -> None:
    """Before: one line per forget for ever (no entry may go: a copy outside backups/ may be restored)."""
    from astrbot_plugin_engram.memory.backups import COMPACT_AT, note_erase, read_erase_list

    store = tmp_path / "engram.db"
    for i in range(COMPACT_AT + 5):
        note_erase(store, [3 * i, 3 * i + 1], [i], people=[f"qq:{i}"] if i % 100 == 0 else [],
                   places=["qq:group:7"] if i == 7 else [])
    erased = read_erase_list(store)
    assert erased.episodes == {3 * i + k for i in range(COMPACT_AT + 5) for k in (0, 1)}
    assert erased.memories == set(range(COMPACT_AT + 5))
    assert len(erased.people) == 11 and len(erased.places) == 1
    lines = erase_list_path(store).read_text("utf-8").splitlines()
    assert len(lines) < 10, len(lines)
    assert len(erase_list_path(store).read_bytes()) < 40_000  # memories 0..1004 as one run
    assert not list(tmp_path.glob("*.part"))
