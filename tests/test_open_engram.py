"""The ``open_engram`` fixture (tests/conftest.py) closes every store a test opened, also when the test
fails. A store left open keeps threads alive: pytest reports the failure and then never exits. Shown
on a test that fails on purpose, run by pytest in a child process, with and without the fixture."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
WITH_FIXTURE = """
from astrbot_plugin_engram.memory import NoEmbedder


async def test_fails_with_two_stores_open(open_engram, tmp_path):
    first = await open_engram(NoEmbedder(), background=True)
    second = await open_engram(path=tmp_path / "other.db")
    assert first is second, "failed on purpose"
"""
WITHOUT = """
from astrbot_plugin_engram.memory import Engram, NoEmbedder


async def test_fails_with_a_store_opened_by_hand(tmp_path):
    store = await Engram.open(tmp_path / "engram.db", NoEmbedder())
    assert store is None, "failed on purpose"
"""


def exits_after_failing(folder: Path, case: str, grace: float) -> bool:
    """Runs ``case`` in a child pytest; once it reported its failure, whether it exits within ``grace``
    seconds (a child that does not is killed)."""
    (folder / "test_case.py").write_text(case, "utf-8")
    out = folder / "out.txt"
    with out.open("wb") as sink:
        child = subprocess.Popen(
            [sys.executable, "-u", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.conftest",
             "-c", str(ROOT / "pyproject.toml"), "--basetemp", str(folder / "tmp"),
             str(folder / "test_case.py")],
            cwd=ROOT, stdout=sink, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 120
            while b"1 failed" not in out.read_bytes():
                assert child.poll() is None and time.monotonic() < deadline, out.read_text("utf-8")
                time.sleep(0.1)
            try:
                child.wait(grace)
            except subprocess.TimeoutExpired:
                return False
            assert child.returncode == 1, out.read_text("utf-8")
            return True
        finally:
            child.kill()
            child.wait()


@pytest.mark.slow
def test_a_test_failing_with_stores_open_still_lets_pytest_exit(tmp_path: Path) -> None:
    (tmp_path / "with").mkdir()
    (tmp_path / "without").mkdir()
    assert exits_after_failing(tmp_path / "with", WITH_FIXTURE, grace=20)
    assert not exits_after_failing(tmp_path / "without", WITHOUT, grace=5)  # why the fixture is there
