"""A real full disk for the disk-full tests: a tmpfs of a few hundred KB mounted on a folder.

Mounting needs root (this project's test machines run as root); elsewhere the tests that need it
are skipped with that reason, and the disk-full behaviour is still covered by the tests that fill
the store with SQLite's ``PRAGMA max_page_count`` (the same SQLITE_FULL error a full disk gives).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def small_disk(folder: Path, size_kb: int) -> Iterator[Path]:
    """``folder`` as a tmpfs of ``size_kb`` KB for the block (skips the test when it cannot mount)."""
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        pytest.skip("a real full disk needs a tmpfs, and mounting one needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kb}k", "tmpfs", str(folder)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=True)


def fill(folder: Path, leave: int = 0) -> Path:
    """Fill the disk holding ``folder`` up to ``leave`` bytes free; returns the filler to delete."""
    filler = folder / "filler"
    with filler.open("wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 4096)
        except OSError:  # full
            pass
    if leave:
        with filler.open("r+b") as f:
            f.truncate(max(0, filler.stat().st_size - leave))
    return filler


def remount(folder: Path, mode: str) -> None:
    """The tmpfs at ``folder`` made ``ro`` (read-only) or ``rw`` again (nothing may be open for writing)."""
    subprocess.run(["mount", "-o", f"remount,{mode}", str(folder)], check=True)
