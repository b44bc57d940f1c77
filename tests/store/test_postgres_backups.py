"""Backups and restore of a PostgreSQL memory, on a real server: a backup is a snapshot of the database
as a SQLite store file (recall the same from it), taken while instances record; the newest N kept; a
restore replaces the database's rows in one transaction, erases again what any instance forgot since
(the database's own erase list, whatever host restores), never gives an id out twice, is refused while
another instance has the database open, and a damaged or foreign file changes nothing."""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import psycopg
import pytest

from astrbot_plugin_engram.memory import Audience, Engram, Episode, Memory, StoreError
from astrbot_plugin_engram.memory.backups import backups, restore, take_backup
from astrbot_plugin_engram.memory.cli.main import main
from astrbot_plugin_engram.memory.errors import InvalidInputError
from astrbot_plugin_engram.memory.scopes import place_scope
from astrbot_plugin_engram.memory.store.opening import store_path
from astrbot_plugin_engram.memory.store.postgres import PostgresStore
from astrbot_plugin_engram.memory.store.postgres.backups import open_alone

from ..conftest import HashEmbedder
from ..marker import MARK, ZH

GROUP, OTHER = "qq:group:1", "qq:group:2"
MING, BOB = "qq:ming", "qq:bob"
T0 = datetime(2026, 5, 1, 10, 0, tzinfo=timezone.utc)
QUERIES = ["spare key", "weather", "gate code", MARK, "Bob"]


def ep(place: str, text: str, actor: str = BOB, name: str = "Bob", minutes: int = 0) -> Episode:
    return Episode(place=place, content=text, actor=actor, actor_name=name,
                   time=T0 + timedelta(minutes=minutes))


async def opened(where: str | Path, folder: Path) -> Engram:
    return await Engram.open(where, HashEmbedder(), background=False, folder=folder)


async def seed(e: Engram) -> list[int]:
    ids = await e.record_many([ep(GROUP, f"I keep my spare key under {MARK}", MING, "Ming"),
                               ep(OTHER, f"{ZH} is the word", MING, "Ming", minutes=1),
                               ep(GROUP, "the weather is nice", minutes=2)])
    await e.add_memory(Memory(text="Bob likes the weather here", scope=place_scope(GROUP), sources=(ids[2],)))
    await e.embed_pending()
    return ids


async def answers(e: Engram) -> list[list[tuple[str, float]]]:
    return [[(h.key, round(h.score, 6)) for h in await e.recall(q, a, k=10)]
            for q in QUERIES for a in (Audience(GROUP), Audience(OTHER), Audience.owner_console())]


def pg_traces(url: str) -> list[str]:
    """Every table of the database holding a row with any piece of the marker (a row cast to text)."""
    found = []
    with psycopg.connect(url, autocommit=True) as db:
        tables = [r[0] for r in db.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")]
        for table in tables:
            for (row,) in db.execute(f"SELECT t::text FROM {table} t"):  # type: ignore[arg-type]
                if MARK in row or any(ch in row for ch in ZH):
                    found.append(f"{table}: {row[:80]}")
    return found


def names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def contents(url: str) -> list[str]:
    with psycopg.connect(url, autocommit=True) as db:
        return [r[0] for r in db.execute("SELECT content FROM episodes ORDER BY id")]


async def test_a_backup_is_a_sqlite_store_that_recalls_as_the_database_did(postgres_server: Any,
                                                                           tmp_path: Path) -> None:
    url, store = postgres_server.fresh_database(), store_path("postgresql://", tmp_path)
    e = await opened(url, tmp_path)
    try:
        await seed(e)
        taken = [await take_backup(store, keep=2, url=url, now=T0 + timedelta(days=d)) for d in range(3)]
        assert backups(store) == taken[:0:-1]  # the newest two, newest first, in the data folder's backups/
        assert taken[-1].parent == tmp_path / "backups"
        copy = tmp_path / "elsewhere" / "engram.db"  # recall strengthens what it finds: each from one state
        copy.parent.mkdir()
        copy.write_bytes(taken[-1].read_bytes())
        want = await answers(e), await e.counts()
    finally:
        await e.close()
    restored = await opened(copy, copy.parent)
    try:
        assert (await answers(restored), await restored.counts()) == want
        assert await restored.store.integrity() == []
    finally:
        await restored.close()


async def test_a_backup_is_one_moment_while_an_instance_records(postgres_server: Any, tmp_path: Path) -> None:
    url, store = postgres_server.fresh_database(), store_path("postgresql://", tmp_path)
    e = await opened(url, tmp_path)
    try:
        await e.record(ep(GROUP, "line 0"))
        async with PostgresStore.snapshot(url) as snap:  # what commits after it began is not in it
            await e.record(ep(GROUP, "after the snapshot began"))
            assert await snap.count_episodes() == 1

        async def chatter() -> None:
            for i in range(1, 300):
                await e.record(ep(GROUP, f"line {i}", minutes=i))

        backup, _ = await asyncio.gather(take_backup(store, url=url), chatter())
    finally:
        await e.close()
    db = sqlite3.connect(f"file:{backup}?mode=ro", uri=True)
    try:  # a commit is in it whole or not at all: ids and sequence numbers with no hole
        ids = [r[0] for r in db.execute("SELECT id FROM episodes ORDER BY id")]
        seqs = [r[0] for r in db.execute("SELECT seq FROM episodes WHERE space = ? ORDER BY seq", (GROUP,))]
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    finally:
        db.close()
    assert ids == list(range(1, len(ids) + 1)) and seqs == list(range(1, len(seqs) + 1)) and len(ids) >= 2


async def test_a_restore_on_another_host_erases_again_what_any_instance_forgot(postgres_server: Any,
                                                                            tmp_path: Path) -> None:
    url = postgres_server.fresh_database()
    host_a, host_b = tmp_path / "a", tmp_path / "b"
    host_a.mkdir()
    host_b.mkdir()
    e = await opened(url, host_a)
    try:
        await seed(e)
        backup = await take_backup(store_path(url, host_a), url=url)
        offsite = tmp_path / "offsite.db"  # a copy no forget reaches
        offsite.write_bytes(backup.read_bytes())
        await e.forget_person(MING)
        highest = await e.record(ep(GROUP, "said after the backup", minutes=5))
    finally:
        await e.close()
    assert pg_traces(url) == []
    # host b has no erase list file of its own: the database's erase list is applied
    done = await restore(store_path(url, host_b), offsite, url=url, now=T0)
    assert (done.episodes_erased, done.people_erased) == (2, 1)
    assert pg_traces(url) == [] and contents(url) == ["the weather is nice"]
    assert done.set_aside is not None and done.set_aside.parent == host_b
    kept = sqlite3.connect(f"file:{done.set_aside}?mode=ro", uri=True)
    try:  # what the database held before is kept as a store file
        assert ("said after the backup",) in kept.execute("SELECT content FROM episodes").fetchall()
    finally:
        kept.close()
    e = await opened(url, host_b)
    try:
        assert await e.aliases(MING) == []
        assert not [h for h in await e.recall(f"{MARK} spare key", Audience.owner_console(), k=20)
                    if MARK in h.text]
        assert await e.record(ep(GROUP, "a new line")) == highest + 1  # no id given out twice
    finally:
        await e.close()


async def test_a_restore_is_refused_while_an_instance_has_the_database_open(postgres_server: Any,
                                                                            tmp_path: Path) -> None:
    url, store = postgres_server.fresh_database(), store_path("postgresql://", tmp_path)
    e = await opened(url, tmp_path)
    try:
        await e.record(ep(GROUP, "in the backup"))
        backup = await take_backup(store, url=url)
        await e.record(ep(GROUP, "after the backup"))
        with pytest.raises(StoreError, match="open in another Engram instance") as refused:
            await restore(store, backup, url=url)
        assert refused.value.code == "store_in_use"
        assert contents(url) == ["in the backup", "after the backup"]
    finally:
        await e.close()
    # while a restore holds it, an instance that opens waits for it, then sees the restored rows
    alone = await open_alone(url, tmp_path)
    opening = asyncio.create_task(opened(url, tmp_path))
    await asyncio.sleep(0.5)
    assert not opening.done()
    await alone.close()
    await (await opening).close()


@pytest.mark.parametrize("kind", ["garbage", "foreign", "empty"])
async def test_a_damaged_or_foreign_backup_changes_nothing(postgres_server: Any, tmp_path: Path,
                                                           kind: str) -> None:
    url, store = postgres_server.fresh_database(), store_path("postgresql://", tmp_path)
    e = await opened(url, tmp_path)
    try:
        await e.record(ep(GROUP, "still here"))
    finally:
        await e.close()
    bad = tmp_path / "bad.db"
    if kind == "garbage":
        bad.write_bytes(b"SQLite format 3\x00" + b"\x13" * 5000)
    elif kind == "foreign":
        db = sqlite3.connect(bad)
        db.execute("CREATE TABLE recipes (name TEXT)")
        db.commit()
        db.close()
    else:
        bad.write_bytes(b"")
    with pytest.raises(InvalidInputError, match="not an Engram backup"):
        await restore(store, bad, url=url)
    assert contents(url) == ["still here"]
    assert names(tmp_path) == ["bad.db"]  # no copy, no snapshot, nothing set aside


async def test_a_sqlite_stores_backup_restores_into_postgres(postgres_server: Any, tmp_path: Path) -> None:
    """One format: a backup of a SQLite store goes into a new database (moving, or a lost server)."""
    url, path = postgres_server.fresh_database(), tmp_path / "engram.db"
    e = await opened(path, tmp_path)
    try:
        await seed(e)
        backup = await take_backup(path)
        want = await answers(e)
    finally:
        await e.close()
    await restore(store_path(url, tmp_path), backup, url=url)
    e = await opened(url, tmp_path)
    try:
        assert await answers(e) == want
    finally:
        await e.close()


def test_the_command_line_backs_up_and_restores_a_postgres_memory(
        postgres_server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url, folder = postgres_server.fresh_database(), tmp_path / "data"
    base = ["--db", url, "--folder", str(folder), "--embedder", "none"]
    assert main([*base, "record", "kept in the backup", "--place", GROUP]) == 0
    assert main([*base, "backup", "--keep", "2"]) == 0
    [backup] = backups(folder / "engram.postgres")
    assert f"backed up to {backup}" in capsys.readouterr().out
    assert main([*base, "record", "said after it", "--place", GROUP]) == 0
    assert main([*base, "restore"]) == 0
    assert capsys.readouterr().out.strip().endswith(str(backup))
    assert main([*base, "restore", str(backup)]) == 0
    out = capsys.readouterr().out
    assert "restored from" in out and "what the database held is kept as" in out
    assert contents(url) == ["kept in the backup"]
    assert main([*base, "restore", str(tmp_path / "nope.db")]) == 2


async def test_a_backup_of_a_database_that_cannot_be_reached_is_a_clear_error_and_leaves_no_file(
        tmp_path: Path) -> None:
    url = "postgresql://engram:hunter2@127.0.0.1:1/none"
    with pytest.raises(StoreError, match="the backup of postgresql://engram:\\*\\*\\*@.* failed") as failed:
        await take_backup(store_path(url, tmp_path), url=url)
    assert "hunter2" not in str(failed.value) and failed.value.code == "backup_failed"
    assert names(tmp_path / "backups") == []
