"""A SIGKILL while a batch is being applied leaves all of it or none of it: its memories and its
place's cursor are one transaction."""

from __future__ import annotations

import random
import signal
import sqlite3
import subprocess
import sys
from functools import partial
from pathlib import Path

from astrbot_plugin_engram.memory import Audience, Engram, Episode, NoEmbedder

from .fake_openai import FakeOpenAI, contract_answer

ROOT = Path(__file__).resolve().parents[1]
LINES = 40
SPACE = "test:group:1"


def kill_after(path: Path, server: FakeOpenAI, inserted: int | None) -> list[str]:
    """Run the child; SIGKILL it after ``inserted`` memories were written (None: after the commit)."""
    child = subprocess.Popen([sys.executable, "-m", "tests._consolidate_child", str(path), server.base_url],
                             cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert child.stdout is not None
    seen: list[str] = []
    for raw in child.stdout:
        seen.append(raw.decode().strip())
        if (inserted is not None and seen.count("inserted") == inserted) or seen[-1].startswith("committed"):
            break
    child.send_signal(signal.SIGKILL)
    child.wait(10)
    assert seen, child.stderr.read().decode()  # type: ignore[union-attr]
    return seen


def state(path: Path) -> tuple[int, int, int]:
    """(memories, memories with sources, the place's cursor) read straight from the file."""
    db = sqlite3.connect(path)
    try:
        n = db.execute("SELECT count(*) FROM memories").fetchone()[0]
        sourced = db.execute("SELECT count(DISTINCT memory_id) FROM sources").fetchone()[0]
        row = db.execute("SELECT value FROM cursors WHERE name = ?", (f"consolidate:{SPACE}",)).fetchone()
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        db.close()
    return n, sourced, row[0] if row else 0


async def test_a_kill_while_applying_a_batch_leaves_all_or_nothing(tmp_path: Path,
                                                                   fake_openai: FakeOpenAI) -> None:
    path = tmp_path / "engram.db"
    eng = await Engram.open(path, NoEmbedder(), background=False)
    ids = await eng.record_many([Episode(SPACE, f"line {i} about tea", actor="test:1", actor_name="T")
                                 for i in range(LINES)])
    await eng.close()
    fake_openai.default_reply = partial(contract_answer, per=1)  # type: ignore[assignment]
    rng = random.Random()
    for inserted in sorted(rng.sample(range(1, LINES), 3)):
        seen = kill_after(path, fake_openai, inserted)
        assert seen.count("inserted") == inserted and not any(s.startswith("committed") for s in seen)
        assert state(path) == (0, 0, 0), f"killed after {inserted} of {LINES} inserts"
    seen = kill_after(path, fake_openai, None)
    assert seen[-1] == f"committed {LINES}"
    assert state(path) == (LINES, LINES, ids[-1])
    eng = await Engram.open(path, NoEmbedder(), background=False)
    try:
        assert await eng.store.integrity() == []
        hits = await eng.recall("tea", Audience(SPACE), k=50)
        assert len([h for h in hits if h.kind == "memory"]) > 0
    finally:
        await eng.close()
