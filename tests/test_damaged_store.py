"""A damaged store file (a zeroed page, a cut file) is refused at open with what is wrong and where,
and left byte for byte as it was: the owner needs it to recover what it holds. A log file lost
beside its index (``-wal`` gone, ``-shm`` left: a folder copied without it) is said clearly."""

from __future__ import annotations

import logging
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest

from astrbot_plugin_engram.memory import Engram, Episode, NoEmbedder, StoreError
from astrbot_plugin_engram.memory.store.sqlite.log_copier import LogCopier

PAGE = 4096


async def a_store(path: Path, n: int = 3000) -> None:
    e = await Engram.open(path, NoEmbedder(), background=False)
    await e.record_many([Episode("qq:group:1", f"line {k} about hiking and tea", f"qq:{k % 7}", f"P{k % 7}")
                         for k in range(n)])
    await e.close()


def pages_of(path: Path, name: str) -> list[int]:
    with sqlite3.connect(path) as db:
        return [p for (p,) in db.execute("SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf'",
                                          (name,))]


def zero(path: Path, page: int) -> None:
    with path.open("r+b") as f:
        f.seek((page - 1) * PAGE)
        f.write(b"\0" * PAGE)


def cut(path: Path) -> None:
    with path.open("r+b") as f:
        f.truncate(path.stat().st_size // 2)


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.mark.parametrize("tree", ["episodes_space_time", "episodes_fts_data"])
async def test_a_zeroed_page_is_found_at_open_and_the_file_left_untouched(db_path: Path, tree: str) -> None:
    """A page of an index zeroed (a disk error): the store opened, recorded into the damaged file,
    and failed later (or never) with SQLite's bare "database disk image is malformed"."""
    await a_store(db_path)
    zero(db_path, pages_of(db_path, tree)[len(pages_of(db_path, tree)) // 2])
    before = snapshot(db_path.parent)
    with pytest.raises(StoreError) as refused:
        await Engram.open(db_path, NoEmbedder(), background=False)
    said = str(refused.value)
    assert str(db_path) in said and "damaged" in said and tree in said, said
    assert "untouched" in said and ".recover" in said  # and how to get back what it holds
    assert snapshot(db_path.parent) == before


async def test_a_cut_store_file_is_refused_untouched_saying_it_is_damaged(db_path: Path) -> None:
    await a_store(db_path)
    cut(db_path)
    before = snapshot(db_path.parent)
    with pytest.raises(StoreError, match="damaged") as refused:
        await Engram.open(db_path, NoEmbedder(), background=False)
    assert "untouched" in str(refused.value)
    assert snapshot(db_path.parent) == before


async def test_a_log_lost_beside_its_index_is_said_clearly(tmp_path: Path, db_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    """The store folder copied while the bot ran, without its ``-wal`` file: the copy opened as if
    nothing was missing, and the last commits (in the log, not yet in the file) were gone unsaid."""
    monkeypatch.setattr(LogCopier, "committed", lambda self: None)  # the commits stay in the log
    e = await Engram.open(db_path, NoEmbedder(), background=False)
    await e.record_many([Episode("qq:group:1", f"line {k}") for k in range(50)])
    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copy(db_path, copy / db_path.name)
    shutil.copy(f"{db_path}-shm", copy / f"{db_path.name}-shm")  # and not the -wal
    await e.close()
    with caplog.at_level(logging.ERROR, "engram.store"):
        c = await Engram.open(copy / db_path.name, NoEmbedder(), background=False)
        await c.close()
    said = " ".join(r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR)
    assert f"{db_path.name}-wal" in said and "lost" in said, said


async def test_a_folder_copied_from_a_running_bot_without_its_log_is_refused_untouched(
        tmp_path: Path, db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Copied with the marker of the running store beside it, the copy is known to be one: its
    open made the loss final (then recorded on top of it), where the log could still be fetched."""
    monkeypatch.setattr(LogCopier, "committed", lambda self: None)  # the commits stay in the log
    e = await Engram.open(db_path, NoEmbedder(), background=False)
    await e.record_many([Episode("qq:group:1", f"line {k}") for k in range(50)])
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in (db_path.name, f"{db_path.name}-shm", f"{db_path.name}-clean"):  # and not the -wal
        shutil.copy(tmp_path / name, copy / name)
    try:
        before = snapshot(copy)
        try:
            opened = await Engram.open(copy / db_path.name, NoEmbedder(), background=False)
        except StoreError as refused:
            said = str(refused)
        else:
            await opened.close()
            pytest.fail("the copy opened, its lost commits made final")
        assert f"{db_path.name}-wal" in said and "copied" in said and f"delete {db_path.name}-shm" in said
        assert snapshot(copy) == before
        without = tmp_path / "without"
        shutil.copytree(copy, without)
        (without / f"{db_path.name}-shm").unlink()  # as it says: opened without those changes
        w = await Engram.open(without / db_path.name, NoEmbedder(), background=False)
        assert (await w.stats())["episodes"] < 50
        await w.close()
        shutil.copy(f"{db_path}-wal", copy / f"{db_path.name}-wal")  # as it says: the log brought too
        c = await Engram.open(copy / db_path.name, NoEmbedder(), background=False)
        assert (await c.stats())["episodes"] == 50
        await c.close()
    finally:
        await e.close()


def garbled_index(path: Path) -> None:
    """A -shm whose first header copy says 100 frames are not yet copied, its second copy disagreeing:
    an index SQLite itself does not trust (it rebuilds it from the log), so nothing to say."""
    head = bytearray(32768)
    head[0:4] = (3007000).to_bytes(4, sys.byteorder)
    head[12], head[16:20] = 1, (100).to_bytes(4, sys.byteorder)
    Path(f"{path}-shm").write_bytes(bytes(head))


async def test_a_garbled_index_beside_the_store_is_no_false_alarm(db_path: Path,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    await a_store(db_path, 10)
    garbled_index(db_path)
    with caplog.at_level(logging.ERROR, "engram.store"):
        e = await Engram.open(db_path, NoEmbedder(), background=False)
        assert (await e.stats())["episodes"] == 10
        await e.close()
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
