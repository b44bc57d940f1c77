"""A real full disk for the disk-full tests: a tmpfs of a few hundred KB mounted on a folder.

Mounting needs root (this project's test machines run as root); elsewhere the tests that need it
are skipped with that reason, and the disk-full behaviour is still covered by the tests that fill
the store with SQLite's ``PRAGMA max_page_count`` (the same SQLITE_FULL error a full disk gives).
"""

from __future__ import annotations

import ctypes
import errno
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

MS_RDONLY, MS_REMOUNT, MNT_DETACH = 1, 32, 2  # <sys/mount.h>
BUSY_WAIT = 10.0
_libc = ctypes.CDLL(None, use_errno=True)


@contextmanager
def small_disk(folder: Path, size_kb: int) -> Iterator[Path]:
    """``folder`` as a tmpfs of ``size_kb`` KB for the block (skips the test when it cannot mount)."""
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        pytest.skip("a real full disk needs a tmpfs, and mounting one needs root")
    if _libc.mount(b"tmpfs", str(folder).encode(), b"tmpfs", 0, f"size={size_kb}k".encode()) != 0:
        pytest.skip(f"cannot mount a tmpfs here: {os.strerror(ctypes.get_errno())}")
    try:
        yield folder
    finally:  # detached at once, gone when the last file on it is closed (``umount -l``)
        assert _libc.umount2(str(folder).encode(), MNT_DETACH) == 0, os.strerror(ctypes.get_errno())


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
    """The tmpfs at ``folder`` made ``ro`` (read-only) or ``rw`` again.

    The mount(2) call itself, not mount(8): the command looks the mount up in the system's mount table,
    which other test processes mounting and unmounting their own small disks change meanwhile (exit
    32 now and then with several suites running). Made read-only, the kernel refuses while a file on
    it is open for writing (EBUSY): a thread of the service closed just before may still be letting go
    of one, so that is waited for (up to ``BUSY_WAIT`` s), and named if it lasts."""
    flags = MS_REMOUNT | (MS_RDONLY if mode == "ro" else 0)
    deadline = time.monotonic() + BUSY_WAIT
    while True:
        if _libc.mount(b"tmpfs", str(folder).encode(), b"tmpfs", flags, None) == 0:
            return
        err = ctypes.get_errno()
        if err != errno.EBUSY or time.monotonic() > deadline:
            raise AssertionError(f"remount,{mode} {folder}: {os.strerror(err)}; "
                                 f"open there: {open_in(folder)}")
        time.sleep(0.05)


def open_in(folder: Path) -> list[str]:
    """Which process holds which file under ``folder`` open (or mapped)."""
    out = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            for fd in (proc / "fd").iterdir():
                target = os.readlink(fd)
                if target.startswith(str(folder)):
                    out.append(f"{proc.name}:{fd.name}:{target}")
            for line in (proc / "maps").read_text().splitlines():
                if str(folder) in line:
                    out.append(f"{proc.name}:map:{line.split()[-1]}")
        except OSError:
            continue
    return out
