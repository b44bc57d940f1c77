"""The full check of the store file (``PRAGMA quick_check``, ~1 s per 100,000 items, ~11 s from disk)
runs at open only when the last close was not clean or the files changed since; a weekly job checks
the open store in the background, and damage it finds stops the writes, is logged and shows in the
job's record."""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from astrbot_plugin_engram.memory import Engram, Episode, Memory, NoEmbedder, StoreError
from astrbot_plugin_engram.memory.store.sqlite import store as store_module
from astrbot_plugin_engram.memory.store.sqlite.damage import StoreDamaged
from astrbot_plugin_engram.scheduler import CHECK, JobRegistry, Scheduler, check_job

from .conftest import HashEmbedder
from .test_damaged_store import a_store, pages_of, zero


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The files the full check ran on at open, in order."""
    ran: list[Path] = []
    real = store_module.check_intact

    async def counted(db, path):  # type: ignore[no-untyped-def]
        ran.append(path)
        await real(db, path)

    monkeypatch.setattr(store_module, "check_intact", counted)
    return ran


async def open_close(path: Path) -> None:
    e = await Engram.open(path, NoEmbedder(), background=False)
    await e.record(Episode("web", "a line", "web:1", "Ann"))
    await e.close()


def child(path: Path, then: str) -> subprocess.Popen[str]:
    """Another process that opens the store, records a line, says "open" and then does ``then``."""
    code = textwrap.dedent(f"""
        import asyncio, os, sys
        from astrbot_plugin_engram.memory import Engram, Episode, NoEmbedder
        async def main():
            e = await Engram.open({str(path)!r}, NoEmbedder(), background=False)
            await e.record(Episode("web", "from the other process", "web:1", "Ann"))
            print("open", flush=True)
            {then}
        asyncio.run(main())
    """)
    return subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)


async def test_a_clean_close_skips_the_check_at_the_next_open(db_path: Path, checks: list[Path]) -> None:
    await open_close(db_path)
    await open_close(db_path)
    await open_close(db_path)
    assert len(checks) == 1  # the first open only (no marker yet: a new file, or one from before)


async def test_a_file_changed_while_closed_is_checked(db_path: Path, checks: list[Path]) -> None:
    await open_close(db_path)
    with sqlite3.connect(db_path) as db:  # another program wrote it
        db.execute("CREATE TABLE notes (x)")
    db.close()
    await open_close(db_path)
    assert len(checks) == 2


async def test_a_copy_put_in_its_place_is_checked(tmp_path: Path, db_path: Path, checks: list[Path]) -> None:
    """A copy moved into its place, its times kept (``cp -p``, then ``mv``): same size and time,
    another file."""
    await open_close(db_path)
    shutil.copy2(db_path, tmp_path / "backup.db")
    os.replace(tmp_path / "backup.db", db_path)
    await open_close(db_path)
    assert len(checks) == 2


async def test_a_process_killed_with_the_store_open_leaves_it_checked(db_path: Path,
                                                                      checks: list[Path]) -> None:
    await open_close(db_path)
    killed = child(db_path, "os._exit(9)")
    assert killed.wait(60) == 9
    await open_close(db_path)
    assert len(checks) == 2
    await open_close(db_path)  # closed cleanly by this process since
    assert len(checks) == 2


async def test_the_command_line_beside_the_running_bot_trusts_its_check(db_path: Path,
                                                                       checks: list[Path]) -> None:
    """The bot (another live process) opened and checked the store: a command line run beside it
    does not check it again; once the bot is gone without closing, the next open does."""
    await open_close(db_path)
    bot = child(db_path, "sys.stdin.readline(); os._exit(0)")
    try:
        assert bot.stdout is not None and bot.stdout.readline().strip() == "open"
        await open_close(db_path)
        await open_close(db_path)
        assert len(checks) == 1
    finally:
        bot.communicate("stop\n", timeout=60)
    await open_close(db_path)  # the bot went away without closing: checked
    assert len(checks) == 2


async def test_a_copy_of_the_folder_of_a_running_bot_is_checked(tmp_path: Path, db_path: Path,
                                                                checks: list[Path]) -> None:
    """Copied while the bot runs (a copy that may be torn), marker and all: the bot's check was
    of its own file, not of the copy."""
    await open_close(db_path)
    bot = child(db_path, "sys.stdin.readline(); os._exit(0)")
    try:
        assert bot.stdout is not None and bot.stdout.readline().strip() == "open"
        copy = tmp_path / "copy"
        shutil.copytree(db_path.parent, copy, ignore=shutil.ignore_patterns("copy"))
        await open_close(copy / db_path.name)
        assert checks[-1] == copy / db_path.name and len(checks) == 2
    finally:
        bot.communicate("stop\n", timeout=60)


async def test_damage_found_in_the_background_stops_the_writes(db_path: Path,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    """A page of the store's keyword index goes bad on disk while the bot runs: the weekly check
    says so (log, job record), every later write is refused with what it found (nothing more goes
    into the damaged file, not even the log at close), and the next start refuses the file."""
    await a_store(db_path)
    e = await Engram.open(db_path, NoEmbedder(), background=False)
    records = e.job_records()
    scheduler = Scheduler(JobRegistry(), lambda: _records(records))
    scheduler.registry.add(check_job(_engram(e)))
    assert (await scheduler.run_now(CHECK))["seconds"] >= 0  # sound: nothing said, writes go on
    await e.record(Episode("web", "still sound", "web:1", "Ann"))
    await e.store.checkpoint()
    page = pages_of(db_path, "episodes_fts_data")
    zero(db_path, page[len(page) // 2])
    with caplog.at_level(logging.ERROR, "engram.store"), pytest.raises(StoreDamaged) as found:
        await scheduler.run_now(CHECK)
    # as found (the job's "running" record may have been copied in while the check read the file)
    damaged_file = db_path.read_bytes()  # noqa: ASYNC240
    said = str(found.value)
    assert "episodes_fts_data" in said and "nothing more is written" in said and ".recover" in said
    assert any("episodes_fts_data" in r.getMessage() for r in caplog.records)
    record = (await scheduler.status())[CHECK]  # what /mem stats prints (``plugin.jobs.job_line``)
    assert record["status"] == "failed" and "episodes_fts_data" in record["error"]
    assert (await e.store.job_runs())[CHECK]["status"] == "failed"  # in the file's log: the dashboard
    for write in (e.record(Episode("web", "after the damage", "web:1", "Ann")),
                  e.record_many([Episode("web", "after the damage", "web:1", "Ann")]),
                  e.add_memory(Memory(text="a fact after the damage", scope="public")),
                  e.store.checkpoint()):
        with pytest.raises(StoreDamaged, match="is damaged .* nothing more is written"):
            await write
    await e.close()
    assert db_path.read_bytes() == damaged_file  # noqa: ASYNC240
    with pytest.raises(StoreError, match="damaged"):
        await Engram.open(db_path, NoEmbedder(), background=False)


def _engram(e: Engram):  # type: ignore[no-untyped-def]
    async def get() -> Engram:
        return e

    return get


async def _records(records):  # type: ignore[no-untyped-def]
    return records


class _HeldEmbedder(HashEmbedder):
    """Embeds once ``go`` is set: the store can be found damaged while a batch is being embedded."""

    def __init__(self) -> None:
        super().__init__()
        self.go = asyncio.Event()

    async def embed(self, texts: list[str], kind: str = "passage") -> np.ndarray:
        await self.go.wait()
        return await super().embed(texts, kind)


async def test_the_indexer_stops_quietly_on_a_store_found_damaged(db_path: Path,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    """The indexer took a damaged store for an embedder outage: it warned "embedding failed (will
    retry; recall uses keywords meanwhile)" beside the recorder's and the check's own lines, and went
    on retrying a write that can never succeed, every 5 minutes, until the bot stopped."""
    embedder = _HeldEmbedder()
    e = await Engram.open(db_path, embedder, background=True)
    try:
        await e.record(Episode("web", "a line to embed", "web:1", "Ann"))
        assert isinstance(e.store, store_module.SQLiteStore)  # the damage mark is the SQLite store's
        e.store.damage = "the store is damaged (found by the check in the background)"  # as the check sets it
        with caplog.at_level(logging.DEBUG, "engram"):
            embedder.go.set()
            for _ in range(200):
                if e.indexer._task is not None and e.indexer._task.done():
                    break
                await asyncio.sleep(0.01)
        assert e.indexer._task is not None and e.indexer._task.done()  # no retry can succeed
        assert not [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
        assert "indexing stopped" in caplog.text
    finally:
        await e.close()
