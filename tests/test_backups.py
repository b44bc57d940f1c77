"""Backups (issue 28): an online copy while the store is written, the newest N kept, a restore that
leaves forgotten things forgotten, and the command line's ``backup`` and ``restore``."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from astrbot_plugin_engram.memory import Audience, Engram, Episode, Memory
from astrbot_plugin_engram.memory.backups import (
    backups,
    backups_behind,
    erase_list_path,
    restore,
    take_backup,
)
from astrbot_plugin_engram.memory.cli.main import main
from astrbot_plugin_engram.memory.metabolism import forgetting
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


def killed_mid_write(backup: Path, sql: str) -> None:
    """The backup as a kill leaves it in the middle of an erase that had not committed: its rollback
    journal beside it, "hot" (a process killed with SIGKILL inside its transaction)."""
    code = ("import os, sqlite3, sys; db = sqlite3.connect(sys.argv[1], isolation_level=None); "
            "db.execute('PRAGMA cache_size=1'); db.execute('BEGIN'); db.execute(sys.argv[2]); os._exit(9)")
    subprocess.run([sys.executable, "-c", code, str(backup), sql], check=False)


async def test_a_backup_whose_erase_a_kill_stopped_is_still_restored_and_read(tmp_path: Path) -> None:
    """Killed while a forget was erasing in a backup, the backup was left with its write-ahead log
    beside it: reading it read-only failed with "attempt to write a readonly database", and so did
    restoring it (found by ``bench/kills.py`` at its 61st kill)."""
    path = tmp_path / "engram.db"
    e = await Engram.open(path, HashEmbedder(), background=False)
    await e.record_many([ep(GROUP, f"line {i}", minutes=i) for i in range(5)])
    await e.close()
    backup = await take_backup(path, now=T0)
    killed_mid_write(backup, "DELETE FROM episodes")
    assert Path(f"{backup}-journal").exists()  # noqa: ASYNC240
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        rows(backup, "PRAGMA integrity_check")  # what the restore's copy met

    done = await restore(path, backup, now=T0 + timedelta(days=1))

    assert done.backup == backup
    assert rows(path, "SELECT count(*) FROM episodes") == [(5,)]  # the erase had not committed: undone
    assert not [p for p in tmp_path.joinpath("backups").iterdir() if p.name != backup.name]  # one file
    assert rows(backup, "PRAGMA integrity_check") == [("ok",)]  # and readable read-only again
    assert rows(backup, "PRAGMA journal_mode") == [("delete",)]


async def test_a_forget_a_kill_kept_from_the_backups_reaches_them_at_the_next_open(tmp_path: Path) -> None:
    """A forget erased in the store and was killed before it reached the backups: the backups kept
    what was forgotten until someone restored one. The next open applies the erase list to them."""
    path = tmp_path / "engram.db"
    e = await Engram.open(path, HashEmbedder(), background=False)
    ids = await e.record_many([ep(GROUP, f"I keep my spare key under {MARK}", MING, "Ming"),
                               ep(GROUP, "the weather is nice", minutes=1)])
    await e.close()
    backup = await take_backup(path, now=T0)
    e = await Engram.open(path, HashEmbedder(), background=False)
    real = forgetting.erase_in_backups

    async def killed(*args: object, **kw: object) -> int:
        raise SystemExit("killed")  # what a kill leaves: the store's erase done, the backups not reached

    forgetting.erase_in_backups = killed  # type: ignore[assignment]
    try:
        with pytest.raises(SystemExit):
            await e.forget_person(MING)
    finally:
        forgetting.erase_in_backups = real
    await e.close()
    assert rows(path, "SELECT id FROM episodes") == [(ids[1],)]
    assert rows(backup, "SELECT count(*) FROM episodes") == [(2,)] and backups_behind(path)

    e = await Engram.open(path, HashEmbedder(), background=False)
    await e.close()

    assert rows(backup, "SELECT id FROM episodes") == [(ids[1],)] and files_with_marker(tmp_path) == set()
    assert not backups_behind(path)
    assert rows(backup, "PRAGMA journal_mode") == [("delete",)]  # still one file


async def test_a_forget_erases_in_the_backups_without_reading_every_page_of_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each backup was opened with the full check a store not closed cleanly gets: a forget read every
    page of every backup (half its time at 100k with two backups; minutes at a million with seven).
    A backup was checked when it was taken and is checked again when it is restored."""
    from astrbot_plugin_engram.memory.store.sqlite import store as sqlite_store

    path = tmp_path / "engram.db"
    e = await Engram.open(path, HashEmbedder(), background=False)
    ids = await e.record_many([ep(GROUP, f"line {i}", minutes=i) for i in range(5)])
    first, second = await take_backup(path, now=T0), await take_backup(path, now=T0 + timedelta(hours=1))
    checked: list[Path] = []
    real = sqlite_store.check_intact

    async def counted(db: object, where: Path) -> None:
        checked.append(Path(where))
        await real(db, where)  # type: ignore[arg-type]

    monkeypatch.setattr(sqlite_store, "check_intact", counted)
    try:
        await e.forget_episodes([ids[0]])
    finally:
        await e.close()
    assert not [p for p in checked if p.parent.name == "backups"]
    for backup in (first, second):
        assert rows(backup, "SELECT count(*) FROM episodes") == [(4,)]
        assert rows(backup, "PRAGMA integrity_check") == [("ok",)]
