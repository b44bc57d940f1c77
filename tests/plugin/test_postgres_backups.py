"""Backups through the plugin with its memory in PostgreSQL (``database_url``, a database of the
session's throwaway server): ``/mem backup`` for the owner and the daily job both write a snapshot of
the database as a SQLite store file into the data folder's ``backups/``, the newest N kept, while the
bot goes on recording; a forget reaches them."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from astrbot_plugin_engram.memory.backups import backups
from astrbot_plugin_engram.plugin.config import Settings
from astrbot_plugin_engram.plugin.jobs.background import Jobs
from astrbot_plugin_engram.scheduler import BACKUP

from ..marker import MARK
from .conftest import OWNER, MakeService, event
from .test_commands import mem


@pytest.fixture
def database_url(postgres_server: object) -> str:
    return str(postgres_server.fresh_database())  # type: ignore[attr-defined]


def lines_in(backup: Path) -> list[str]:
    db = sqlite3.connect(f"file:{backup}?mode=ro", uri=True)
    try:
        return [r[0] for r in db.execute("SELECT content FROM episodes ORDER BY id")]
    finally:
        db.close()


async def test_the_owner_backs_up_a_postgres_memory_now(make_service: MakeService) -> None:
    svc = make_service()
    svc.record_message(event("a line worth keeping", "u1", "g1"))
    answer = await mem(svc, "mem backup")
    [backup] = backups(svc.data_dir / "engram.postgres")
    assert backup.parent == svc.data_dir / "backups"
    assert answer == f"Engram: backed up to {backup} (1 backups kept beside the store)."
    assert lines_in(backup) == ["a line worth keeping"]
    assert not svc.path.exists()  # no SQLite store made beside the database
    refused = await mem(svc, "mem backup", group="g1")
    assert refused.startswith("Engram: /mem backup answers only in the owner's")


async def test_the_daily_backup_of_a_postgres_memory_runs_while_the_bot_records_and_keeps_n(
        make_service: MakeService) -> None:
    svc = make_service(Settings(owner_ids=(OWNER,), backup_keep=2))
    svc.record_message(event("before the backups", "u1", "g1"))
    await svc.flush()
    job = Jobs(svc).registry.get(BACKUP)
    assert job.every is not None and job.every.days == 1

    async def chatter() -> None:
        for i in range(40):
            svc.record_message(event(f"said during the backup {i}", "u1", "g1"))
            await asyncio.sleep(0.005)
        await svc.flush()

    for _ in range(3):
        result, _ = await asyncio.gather(job.run(), chatter())
        assert result["kept"] >= 1
    found = backups(svc.data_dir / "engram.postgres")
    assert len(found) == 2 and lines_in(found[-1])[0] == "before the backups"


async def test_a_forget_reaches_the_backups_of_a_postgres_memory(make_service: MakeService) -> None:
    svc = make_service()
    svc.record_message(event(f"my locker code is {MARK}", "u1", "g1"))
    await mem(svc, "mem backup")
    [backup] = backups(svc.data_dir / "engram.postgres")
    assert any(MARK in line for line in lines_in(backup))
    e = await svc.memory()
    ids = [i for i, x in (await e.episodes([1])).items() if MARK in x.content]
    await e.forget_episodes(ids)
    assert ids and not any(MARK in line for line in lines_in(backup))
