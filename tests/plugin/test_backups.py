"""Backups through the plugin (issue 28): ``/mem backup`` for the owner, the daily job, and a store that
cannot be opened is never replaced: nothing is recorded into a new one, and the log and the owner are
told of the newest backup."""

from __future__ import annotations

import logging

import pytest

from astrbot_plugin_engram.memory.backups import backups
from astrbot_plugin_engram.plugin.config import Settings
from astrbot_plugin_engram.plugin.jobs.background import Jobs
from astrbot_plugin_engram.scheduler import BACKUP

from .conftest import OWNER, MakeService, episodes, event
from .test_commands import mem


async def test_the_owner_backs_up_now_and_no_one_else(make_service: MakeService) -> None:
    svc = make_service()
    svc.record_message(event("a line worth keeping", "u1", "g1"))
    answer = await mem(svc, "mem backup")
    [backup] = backups(svc.path)
    assert answer == f"Engram: backed up to {backup} (1 backups kept beside the store)."
    refused = await mem(svc, "mem backup", group="g1")
    assert refused.startswith("Engram: /mem backup answers only in the owner's")
    assert len(backups(svc.path)) == 1


async def test_the_daily_backup_is_a_job_that_keeps_n(make_service: MakeService) -> None:
    svc = make_service(Settings(owner_ids=(OWNER,), backup_keep=2))
    await episodes(svc)  # the store exists
    jobs = Jobs(svc)
    job = jobs.registry.get(BACKUP)
    assert job.every is not None and job.every.days == 1
    for _ in range(3):
        assert (await job.run())["kept"] >= 1
    assert len(backups(svc.path)) <= 2
    assert BACKUP not in [j.name for j in Jobs(make_service(Settings(owner_ids=(OWNER,), backup_keep=0),
                                                            data_dir=svc.data_dir.parent / "off")).registry]


async def test_a_store_that_cannot_open_is_left_as_it_is_and_the_newest_backup_named(
        make_service: MakeService, caplog: pytest.LogCaptureFixture) -> None:
    svc = make_service()
    svc.record_message(event("before the damage", "u1", "g1"))
    await mem(svc, "mem backup")
    [backup] = backups(svc.path)
    await svc.close()
    broken = b"not a database, " * 512
    svc.path.write_bytes(broken)  # the store is damaged while the bot is down
    for side in ("-wal", "-shm"):
        svc.path.with_name(svc.path.name + side).unlink(missing_ok=True)
    again = make_service(data_dir=svc.data_dir)
    with caplog.at_level(logging.INFO, "engram"):
        again.record_message(event("while it cannot open", "u1", "g1"))
        await again.flush()
    assert f"the newest backup is {backup}" in caplog.text
    told = await mem(again, "mem stats")
    assert f"the newest backup is {backup}" in told and "restore" in told, told
    assert "newest backup" not in await mem(again, "mem stats", group="g1")
    assert svc.path.read_bytes() == broken  # never replaced by an empty store
    assert again.recording.journal.count == 1  # the line waits beside it
