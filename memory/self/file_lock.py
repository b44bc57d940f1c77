"""One read-modify-write of a small JSON file beside the store at a time, across processes.

The bot and the command line (another process) both change ``identity/proposals.json`` and
``diary/.rewrite-pending.json`` by reading, changing and writing them whole. Each write is atomic
(``identity.atomic_write``), but two such changes at the same moment would both start from the same
old file and the last rename would drop the other's change. ``locked(path)`` holds an exclusive
advisory lock (``fcntl.flock``) on ``.<name>.lock`` beside ``path`` for the whole change.

The lock file is empty and stays (removing it while another process waits on it would let two in at
once); it does not end in ``.tmp``, so a forget's clean-up of cut writes (``identity.temporaries``)
leaves it. A lock is reentrant within one thread (a change that calls another change of the same
file, directly or through a helper, goes on instead of waiting for itself forever); the code holds no
``await`` under it, so one thread is one task. Other threads and processes wait as before.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no flock; the two processes' changes are not serialised there
    fcntl = None  # type: ignore[assignment]


def lock_path(path: Path) -> Path:
    return path.parent / f".{path.name}.lock"


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold the exclusive lock of ``path`` (waiting for another process's change to end)."""
    if fcntl is None:
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    key = os.path.realpath(lock_path(path))
    held: set[str] = _held.__dict__.setdefault("paths", set())
    if key in held:  # this thread holds it already: a second flock on a new descriptor would wait
        yield        # for the first, that is for itself, for ever
        return
    fd = os.open(key, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        held.add(key)
        try:
            yield
        finally:
            held.discard(key)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


_held = threading.local()  # the lock files this thread holds
