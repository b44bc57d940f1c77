"""Messages the store cannot take survive a kill: the plugin keeps them in the journal beside the
store (``memory/kept.py``), and the next start writes them, in order and once.

A real child process runs the plugin's service (``tests/_kept_child.py``); the test fills a real disk
(a small tmpfs; skipped where it cannot mount one) or has the store found damaged, lets the child
record messages, kills it with SIGKILL, gives the disk room again (or replaces the damaged store),
and starts the service anew."""

from __future__ import annotations

import logging
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from astrbot_plugin_engram.memory.recording.journal import kept_path

from .._kept_child import said
from ..small_disk import fill, small_disk
from .conftest import MakeService, episodes, event
from .test_commands import mem

ROOT = Path(__file__).resolve().parents[2]
N = 40


def run_child(data: Path, mode: str, prepare: Callable[[], object] = lambda: None) -> tuple[int, int]:
    """Run the child until it says what it kept (in the journal, in memory only), then kill it;
    ``prepare`` runs once the store is open ("before" written), before the child goes on."""
    child = subprocess.Popen([sys.executable, "-m", "tests._kept_child", str(data), mode, str(N)], cwd=ROOT,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert child.stdin is not None and child.stdout is not None and child.stderr is not None
        for expected in (b"@open", b"@kept "):
            line = child.stdout.readline()
            while line and not line.startswith(b"@"):  # AstrBot's log lines
                line = child.stdout.readline()
            assert line.startswith(expected), (line, child.stderr.read() if child.poll() is not None else "")
            if expected == b"@open":
                prepare()
                child.stdin.write(b"go\n")
                child.stdin.flush()
        journal, memory = map(int, line.split()[1:])
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(30)
    return journal, memory


async def test_messages_said_on_a_full_disk_survive_a_kill_and_are_written_at_the_next_start(
        tmp_path: Path, make_service: MakeService, caplog: pytest.LogCaptureFixture) -> None:
    """Before: they were kept in memory only, so a kill (or a crash, the OOM killer) lost them all."""
    with small_disk(tmp_path / "disk", 4096) as disk:
        data = disk / "data"
        fillers: list[Path] = []
        journal, memory = run_child(data, "full", lambda: fillers.append(fill(disk)))
        fillers[0].unlink()  # room again
        svc = make_service(data_dir=data)
        with caplog.at_level(logging.INFO, "engram"):
            await svc.memory()
            await svc.flush()
            got = [e.content for e in await episodes(svc)]
        assert got == ["before", *(said(k) for k in range(N))]  # all, in order, once
        assert (journal, memory) == (N, 0)  # all on disk, in the reserve written while the disk was full
        assert f"{N} kept messages written" in caplog.text
        assert svc.recording.pending == 0 and kept_path(svc.path).read_bytes().strip(b"\0") == b""
        await svc.close()
        again = make_service(data_dir=data)  # and the next start writes nothing twice
        await again.memory()
        await again.flush()
        assert len(await episodes(again)) == N + 1
        await again.close()


async def test_messages_said_after_the_store_was_found_damaged_are_written_once_it_is_replaced(
        tmp_path: Path, make_service: MakeService, caplog: pytest.LogCaptureFixture) -> None:
    """Before: after the weekly check found the store damaged every later message was dropped (the
    log said so once), and so was every message after the restart, which refuses the file."""
    data = tmp_path / "data"
    journal, memory = run_child(data, "damaged")
    with (data / "engram.db").open("r+b") as f:  # the damage the check found, now in the file itself
        f.write(b"garbage, not a header " * 5)
    svc = make_service(data_dir=data)
    with caplog.at_level(logging.INFO, "engram"):
        svc.record_message(event("while refused", "u1", "g1"))
        await svc.flush()
        await svc.close()  # the next start refused the file: nothing written, everything kept
    assert f"closing with {N + 1} messages kept in {kept_path(svc.path)}" in caplog.text
    moved = tmp_path / "damaged"
    moved.mkdir()
    for old in data.glob("engram.db*"):  # the owner moves the damaged file away (or puts a repaired one)
        if not old.name.endswith("-kept"):
            shutil.move(str(old), moved / old.name)
    svc = make_service(data_dir=data)
    await svc.memory()
    await svc.flush()
    assert [e.content for e in await episodes(svc)] == [*(said(k) for k in range(N)), "while refused"]
    assert (journal, memory) == (N, 0)


async def test_stats_names_the_messages_kept_while_the_store_is_damaged(service: Any) -> None:
    service.record_message(event("before", "u1", "g1"))
    await service.flush()
    (await service.memory()).store.damage = "the store is damaged (found by the check in the background)"
    for n in range(2):
        service.record_message(event(f"after {n}", "u1", "g1"))
    await service.flush()
    said_ = await mem(service, "mem stats")
    assert "2 messages said while the store could not be written are kept in engram.db-kept" in said_
    assert "kept in" not in await mem(service, "mem stats", sender="u1", group="g1")  # the owner's only
