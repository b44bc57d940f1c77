"""The write-ahead log is copied into the store file in the background (``log_copier``), not by the
commit that crosses SQLite's threshold; a forget still truncates the log, and closing stops it."""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
import time
from pathlib import Path

from astrbot_plugin_engram.memory import Engram, Episode, open_store
from astrbot_plugin_engram.memory.store.sqlite.log_copier import GAP, IDLE, LOG_LIMIT, SAFETY_NET, LogCopier
from astrbot_plugin_engram.memory.store.sqlite.store import SQLiteStore

GROUP = "qq:group:1"


def log_size(path: Path) -> int | None:
    """The size of the store's write-ahead log (None: there is none)."""
    log = Path(f"{path}-wal")
    return log.stat().st_size if log.exists() else None


def episodes_in_file_alone(path: Path, tmp: Path) -> int:
    """How many episodes the store file holds by itself (a copy of it without its log)."""
    copy = tmp / "alone.db"
    shutil.copy(path, copy)
    with sqlite3.connect(copy) as db:
        return int(db.execute("SELECT count(*) FROM episodes").fetchone()[0])


async def test_commits_reach_the_file_while_the_store_stays_open(engram: Engram, db_path: Path,
                                                                  tmp_path: Path) -> None:
    for n in range(5):
        await engram.record_many([Episode(place=GROUP, content=f"line {n} {k}") for k in range(20)])
    await asyncio.sleep(GAP + 0.1)
    store = engram.store
    assert isinstance(store, SQLiteStore) and store._copier is not None
    await store._copier.idle()
    assert episodes_in_file_alone(db_path, tmp_path) == 100


async def test_the_writer_leaves_the_copy_to_the_background(engram: Engram) -> None:
    store = engram.store
    assert isinstance(store, SQLiteStore) and store._writer is not None
    rows = await store._writer.execute_fetchall("PRAGMA wal_autocheckpoint")
    assert list(rows) == [(SAFETY_NET,)]  # the writer copies itself only past the safety net


async def test_a_forget_truncates_the_log_while_a_copy_is_under_way(engram: Engram, db_path: Path,
                                                                     monkeypatch) -> None:
    started = asyncio.Event()
    real = LogCopier._checkpoint

    def slow(self: LogCopier) -> None:  # a copy that takes a while: the forget comes in the middle
        engram_loop.call_soon_threadsafe(started.set)
        time.sleep(0.3)
        real(self)

    engram_loop = asyncio.get_running_loop()
    monkeypatch.setattr(LogCopier, "_checkpoint", slow)
    [kept, gone] = await engram.record_many([Episode(place=GROUP, content=t) for t in ("kept", "secret")])
    await asyncio.wait_for(started.wait(), 5)
    async with engram.store.transaction() as tx:
        await tx.erase([gone], [])
    assert log_size(db_path) == 0  # truncated: no frame of the erased line is left
    assert list(await engram.store.get_episodes([kept, gone])) == [kept]


async def test_closing_stops_a_copy_waiting_for_its_gap(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    store = await open_store(path)
    for n in range(3):  # the first commit starts a copy, the others wait for the gap
        async with store.transaction() as tx:
            await tx.add_episodes([Episode(place=GROUP, content=f"line {n}")])
    started = time.monotonic()
    await store.close()
    assert time.monotonic() - started < GAP  # not waiting out the gap
    assert not [t for t in asyncio.all_tasks() if t.get_name() == "engram-log-copy" and not t.done()]
    assert log_size(path) is None  # the last connection closed copied and removed the log
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM episodes").fetchone()[0] == 3


async def test_the_log_shrinks_back_once_a_burst_is_over(engram: Engram, db_path: Path) -> None:
    """After a recording burst the log file stayed at its largest (up to ~40 MB, the safety net)
    for as long as the bot ran: disk space and a slower backup for nothing. Once commits pause, it
    is cut back (``log_copier.IDLE``, ``LOG_LIMIT``)."""

    text = "a long line of a busy chat, " * 40
    for n in range(4):
        await engram.record_many([Episode(place=GROUP, content=f"{text} {n} {k}") for k in range(1500)])
    grown = log_size(db_path)
    assert grown is not None and grown > LOG_LIMIT
    for _ in range(int((GAP + IDLE) * 20) + 40):
        await asyncio.sleep(0.05)
        if (log_size(db_path) or 0) <= LOG_LIMIT:
            break
    assert (log_size(db_path) or 0) <= LOG_LIMIT, (grown, log_size(db_path))
    await engram.record(Episode(place=GROUP, content="still recording"))  # the log works on
    assert (await engram.stats())["episodes"] == 6001
