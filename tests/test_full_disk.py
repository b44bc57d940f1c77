"""The store on a real full or read-only disk (a small tmpfs, ``tests/small_disk.py``): a write fails
with ``StoreUnwritable`` (nothing of it stored, the file whole), and writing works again once there
is room (the plugin keeps the messages meanwhile: ``tests/plugin/test_recording.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from astrbot_plugin_engram.memory import Engram, Episode, NoEmbedder, StoreUnwritable

from .small_disk import fill, remount, small_disk

LINE = "a long line of a busy chat about hiking, tea and the weather " * 8


async def test_a_full_disk_fails_the_write_clearly_and_it_works_again_with_room(tmp_path: Path) -> None:
    with small_disk(tmp_path / "disk", 4096) as disk:
        e = await Engram.open(disk / "engram.db", NoEmbedder(), background=False)
        try:
            acked = [await e.record(Episode("qq:group:1", f"first {k} {LINE}")) for k in range(20)]
            filler = fill(disk)
            with pytest.raises(StoreUnwritable, match="full") as failed:
                for k in range(5000):
                    acked.append(await e.record(Episode("qq:group:1", f"more {k} {LINE}")))
            assert str(disk / "engram.db") in str(failed.value)
            filler.unlink()
            acked.append(await e.record(Episode("qq:group:1", "room again")))
            assert sorted(await e.store.get_episodes(acked)) == sorted(acked)
            assert await e.store.integrity() == []
        finally:
            await e.close()


async def test_a_read_only_data_folder_is_said_clearly_and_it_opens_once_writable(tmp_path: Path) -> None:
    """The store's folder read-only (a volume mounted read-only): the open failed with SQLite's bare
    "unable to open database file", naming neither the file nor why."""
    with small_disk(tmp_path / "disk", 4096) as disk:
        e = await Engram.open(disk / "engram.db", NoEmbedder(), background=False)
        await e.record(Episode("qq:group:1", "before"))
        await e.close()
        remount(disk, "ro")
        try:
            with pytest.raises(StoreUnwritable, match="read-only") as refused:
                await Engram.open(disk / "engram.db", NoEmbedder(), background=False)
            assert str(disk / "engram.db") in str(refused.value)
        finally:
            remount(disk, "rw")
        e = await Engram.open(disk / "engram.db", NoEmbedder(), background=False)
        await e.record(Episode("qq:group:1", "after"))
        assert (await e.stats())["episodes"] == 2
        await e.close()


async def test_a_migration_on_a_full_disk_stays_pending_and_runs_once_there_is_room(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A migration that needs more room than the disk has (here one added for the test that writes
    ~2 MB): SQLite rolls the failed transaction back itself, and the migration's own ROLLBACK then
    failed ("no transaction is active") and hid the real reason behind that message."""
    from astrbot_plugin_engram.memory.store.sqlite import migrations

    async def m999_big(db: Any) -> None:
        await db.execute("CREATE TABLE big (x BLOB)")
        for _ in range(64):
            await db.execute("INSERT INTO big VALUES (randomblob(32768))")

    with small_disk(tmp_path / "disk", 8192) as disk:
        e = await Engram.open(disk / "engram.db", NoEmbedder(), background=False)
        await e.record(Episode("qq:group:1", "before"))
        await e.close()
        filler = fill(disk, leave=512 * 1024)
        monkeypatch.setattr(migrations, "MIGRATIONS", [*migrations.MIGRATIONS, ("m999_big", m999_big)])
        with pytest.raises(StoreUnwritable, match="full"):
            await Engram.open(disk / "engram.db", NoEmbedder(), background=False)
        filler.unlink()
        e = await Engram.open(disk / "engram.db", NoEmbedder(), background=False)
        try:
            assert (await e.stats())["episodes"] == 1 and await e.store.integrity() == []
        finally:
            await e.close()
