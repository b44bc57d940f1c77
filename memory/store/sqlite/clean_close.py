"""Whether the full check at open (``damage.check_intact``, ~1 s per 100,000 items with the file
cached, ~11 s read from disk) can be skipped: a marker beside the store, ``<store>-clean``.

A clean close writes in it what the store file and its log looked like then (size, modification
time, inode); an open reads it, then marks the store as in use (by this process, on this host) before
anything is written. The check is skipped when

* the last close was clean and neither file changed since: same size, time and inode, and the files
  were last written before the marker was (a change within the same tick of the file system's clock
  could not be told from the close's own writes); or
* another live process on this host (the bot, when the command line runs beside it) opened this
  very file (same inode: not a copy of its folder), checked or trusted it, and holds it still.

Anything else runs the full check: no marker (a first open after an upgrade, a folder copied or
restored), a process killed or a machine that lost power while the store was open, a file written by
another program or replaced by a copy. A weekly check in the background (``SQLiteStore.check``)
covers damage that comes later, on a disk, to a file the stat cannot tell apart.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import time
from pathlib import Path
from typing import Any

log = logging.getLogger("engram.store")

SUFFIX = "-clean"
TICK_WAIT = 0.005  # seconds between tries to date the marker after the file's last write
TICK_TRIES = 100  # at most half a second (file system clocks tick every 1-10 ms; FAT's every 2 s)


def marker(path: Path) -> Path:
    return Path(f"{path}{SUFFIX}")


def trusted(path: Path) -> bool:
    """Whether the store at ``path`` may open without the full check (see the module)."""
    said = _read(path)
    if not said:
        return False
    if any(_alive(user, path) for user in said.get("open", [])):
        return True
    closed = said.get("closed")
    if not isinstance(closed, dict):
        return False
    try:
        written = marker(path).stat().st_mtime_ns
    except OSError:
        return False
    now = _files(path)
    return now == closed and max(v["mtime_ns"] for v in now.values()) < written


def copied(path: Path) -> bool:
    """Whether the marker beside ``path`` says its store was open, but in another file or on another
    host: the folder was copied (marker and all) while a bot had the store open."""
    users = [u for u in _read(path).get("open", []) if isinstance(u, dict)]
    here = (socket.gethostname(), _inode(path))
    return bool(users) and all((u.get("host"), u.get("ino")) != here for u in users)


def opened(path: Path) -> None:
    """Mark the store as in use by this process (before anything is written to it): a process that
    stops without ``closed`` leaves no clean close behind."""
    _write(path, {"closed": None, "open": [*_others(_read(path), path), _me(path)]})


def closed(path: Path, *, clean: bool) -> None:
    """After the store's connections are closed: record the files as they are now, unless another
    process still holds the store or this one found it damaged (``clean`` False)."""
    others = _others(_read(path), path)
    if others or not clean:
        _write(path, {"closed": None, "open": others})
        return
    files = _files(path)
    last = max(v["mtime_ns"] for v in files.values()) if files else 0
    for _ in range(TICK_TRIES):  # dated after the files' last write, or the marker proves nothing
        if not _write(path, {"closed": files, "open": []}):
            return
        try:
            if marker(path).stat().st_mtime_ns > last:
                return
        except OSError:
            return
        time.sleep(TICK_WAIT)
    _write(path, {"closed": None, "open": []})


def _files(path: Path) -> dict[str, dict[str, int]]:
    """Size, modification time and inode of the store file and of its log (when not empty)."""
    out = {}
    for name in (str(path), f"{path}-wal"):
        try:
            st = os.stat(name)
        except OSError:
            continue
        if st.st_size or name == str(path):
            out[Path(name).name] = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "ino": st.st_ino}
    return out


def _inode(path: Path) -> int | None:
    try:
        return os.stat(path).st_ino
    except OSError:
        return None


def _me(path: Path) -> dict[str, Any]:
    return {"pid": os.getpid(), "host": socket.gethostname(), "ino": _inode(path)}


def _alive(user: Any, path: Path) -> bool:
    """Whether ``user`` names another process of this host, still running, that opened this file."""
    if not isinstance(user, dict) or user.get("host") != socket.gethostname():
        return False
    if user.get("ino") is None or user.get("ino") != _inode(path):  # a copy of the folder
        return False
    pid = user.get("pid")
    if not isinstance(pid, int) or pid <= 0 or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: it runs, as another user
        return True
    return True


def _others(said: dict[str, Any], path: Path) -> list[dict[str, Any]]:
    return [u for u in said.get("open", []) if _alive(u, path)]


def _read(path: Path) -> dict[str, Any]:
    try:
        said = json.loads(marker(path).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return said if isinstance(said, dict) else {}


def _write(path: Path, said: dict[str, Any]) -> bool:
    """Replace the marker whole (a reader never sees half of it); False if it cannot be written (a
    read-only folder: the next open checks the file, which is all a marker saves)."""
    target = marker(path)
    tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps(said), "utf-8")
        os.replace(tmp, target)
    except OSError as e:
        log.debug("the marker %s cannot be written: %s", target, e)
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass
        return False
    return True
