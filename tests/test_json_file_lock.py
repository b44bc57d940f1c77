"""The bot and the command line, two processes, changing the same small JSON file beside the store
at the same moment: neither loses the other's change (``memory/file_lock.py``)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from datetime import date
from pathlib import Path

import pytest

from astrbot_plugin_engram.memory.self.diary_files import (
    REWRITE_FILE,
    rewrite_later,
    rewrites_pending,
    rewritten,
)
from astrbot_plugin_engram.memory.self.file_lock import lock_path, locked
from astrbot_plugin_engram.memory.self.identity import IdentityFolder, atomic_write, temporaries
from astrbot_plugin_engram.memory.self.proposals import PROPOSALS_FILE, Proposals

ROOT = Path(__file__).resolve().parents[1]
N = 200


def both_at_once(kind: str, folder: Path) -> None:
    children = [subprocess.Popen([sys.executable, "-m", "tests._json_file_child", kind, str(folder),
                                  str(start), str(N)], cwd=ROOT, stderr=subprocess.PIPE, text=True)
                for start in (0, N)]
    (folder / "go").touch()
    for child in children:
        _, err = child.communicate(timeout=300)
        assert child.returncode == 0, err


@pytest.mark.skipif(sys.platform == "win32", reason="no fcntl.flock on Windows: no lock there")
def test_two_processes_adding_proposals_at_once_lose_none(tmp_path: Path) -> None:
    both_at_once("proposals", tmp_path)
    items = Proposals(IdentityFolder(tmp_path)).all()
    assert sorted(p.change for p in items) == sorted(f"change {i}" for i in range(2 * N))
    assert sorted(p.id for p in items) == list(range(1, 2 * N + 1))  # no id given out twice
    lock = lock_path(tmp_path / "identity" / PROPOSALS_FILE)
    assert lock.exists() and lock.read_bytes() == b""  # the lock file holds no text


@pytest.mark.skipif(sys.platform == "win32", reason="no fcntl.flock on Windows: no lock there")
def test_two_processes_noting_diaries_to_rewrite_at_once_lose_none(tmp_path: Path) -> None:
    both_at_once("rewrites", tmp_path)
    assert len(rewrites_pending(tmp_path)) == 2 * N
    assert lock_path(tmp_path / "diary" / REWRITE_FILE).read_bytes() == b""


def test_the_lock_file_is_no_cut_write_and_outlives_the_file(tmp_path: Path) -> None:
    """A forget's clean-up of cut writes (``identity.temporaries``) leaves the lock file; an empty
    rewrite note is removed, its lock file stays (a process may wait on it) and is used again."""
    path = tmp_path / "diary" / REWRITE_FILE
    rewrite_later(tmp_path, [date(2026, 1, 1)])
    atomic_write(tmp_path / "diary" / "x.md", "x")
    assert temporaries(path) == []
    rewritten(tmp_path, date(2026, 1, 1))
    assert not path.exists() and lock_path(path).exists()
    rewrite_later(tmp_path, [date(2026, 1, 2)])
    assert json.loads(path.read_text("utf-8")) == {"days": ["2026-01-02"]}


@pytest.mark.skipif(sys.platform == "win32", reason="no fcntl.flock on Windows: no lock there")
def test_a_change_inside_a_change_of_the_same_file_goes_on_and_other_threads_still_wait(
        tmp_path: Path) -> None:
    """Today no change of these files calls another under its lock (proposals.py, diary_files.py);
    one that did (a helper reused under the lock) hung its thread for ever: a second flock on a new
    descriptor waits for the first, held by the same thread. Now it goes on, and the lock still
    keeps another thread (and process) out until the outer change ends."""
    path = tmp_path / "identity" / PROPOSALS_FILE
    order: list[str] = []
    inner_done, outer_may_end = threading.Event(), threading.Event()

    def nested() -> None:
        with locked(path):
            with locked(path):  # the same file again, in the same thread
                order.append("inner")
            inner_done.set()
            outer_may_end.wait(10)
            order.append("outer ends")

    def other() -> None:
        with locked(path):
            order.append("other")

    first = threading.Thread(target=nested, daemon=True)
    first.start()
    assert inner_done.wait(5), "a change inside a change of the same file waited for itself"
    second = threading.Thread(target=other, daemon=True)
    second.start()
    second.join(0.3)
    assert second.is_alive()  # kept out while the outer change holds the lock
    outer_may_end.set()
    first.join(5)
    second.join(5)
    assert order == ["inner", "outer ends", "other"]
