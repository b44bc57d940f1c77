"""Messages kept beside the store while it cannot take them: a journal, ``engram.db-kept``.

When the store cannot be written (a full disk, a store the weekly check found damaged, a store that
cannot be opened), the messages said meanwhile are appended to this file, in order, and flushed to
disk, so a kill, a crash or a stop loses none of them. They are written into the store, in order and
once, as soon as it takes them again: by the running bot, or at the next start (for a damaged
store: the first start after it was repaired or replaced).

**A full disk.** Appending needs room, and a full disk has none: so the file is a *reserve*,
``RESERVE`` bytes of zeros allocated while there is room (when the store opens), and records are
written over those zeros in place, which needs no new room (on file systems that overwrite in place:
ext4, xfs, tmpfs; a copy-on-write one such as btrfs or zfs may refuse it too). Past the reserve the
file grows while the disk lets it.

**Format.** UTF-8 lines of JSON up to the first NUL byte: a header ``{"kept": 1, "gen": "<hex>"}``,
then one episode a line. A line cut by a kill (no newline, or no JSON) is skipped. **Once.** The
records of one generation are numbered from 1; the transaction that writes them into the store also
sets the store's cursor ``kept:<gen>`` to the last number written, so a kill after that commit and
before the file is cleared writes nothing twice. Clearing zeroes the file (keeping the reserve) and
the next record starts a new generation.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import secrets
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import Any

from ..errors import EngramError
from ..model import Episode
from ..validate import checked_episode

log = logging.getLogger("engram")

SUFFIX = "-kept"
RESERVE = 1 << 20  # bytes: about 3,000 chat lines of ordinary length
CURSOR = "kept:"  # + the generation: how many of its records the store holds


def kept_path(store: Path) -> Path:
    """The journal beside the store file ``store``."""
    return store.with_name(store.name + SUFFIX)


def _line(ep: Episode) -> bytes:
    # the journal keeps its stored key "space" (files written before the code said "place")
    d = {("space" if k == "place" else k): v for k, v in asdict(ep).items()
         if v not in (None, "", {}) and k not in ("id", "seq", "section")}
    if ep.time is not None:
        d["time"] = ep.time.isoformat()
    return (json.dumps(d, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def _write_all(f: Any, data: bytes) -> None:
    """``data`` written whole, or OSError (an unbuffered write may take only part of it on a full
    disk, and say so only by its count)."""
    view = memoryview(data)
    while view:
        n = f.write(view)
        if not n:
            raise OSError(errno.ENOSPC, "no space left on device")
        view = view[n:]


def _episode(raw: str) -> Episode | None:
    try:
        d: dict[str, Any] = json.loads(raw)
        if "time" in d:
            d["time"] = datetime.fromisoformat(d["time"])
        if "space" in d:
            d["place"] = d.pop("space")
        return checked_episode(Episode(**d))
    except (ValueError, TypeError, EngramError):
        return None


class KeptJournal:
    """The journal file of one store; its records are read once, when it is first used."""

    def __init__(self, path: Path, reserve: int = RESERVE):
        self.path = path
        self.reserve_bytes = reserve
        self.gen = ""  # "" until the first record of a generation
        self.records: list[Episode | None] = []  # in order; None: a line that could not be read
        self.end = 0  # bytes of text (where the next record goes)
        self.failed = False  # an append found no room: later messages are not in the file (until cleared)
        self._read()

    @property
    def count(self) -> int:
        """Messages in the file that are still to be written into the store."""
        return sum(r is not None for r in self.records)

    def _read(self) -> None:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return
        except OSError as e:
            log.error("Engram: the kept messages in %s cannot be read (%s); they are left there",
                      self.path, e)
            self.failed = True  # never overwrite what could not be read
            return
        text = data.split(b"\0", 1)[0]
        lines = text.split(b"\n")
        whole, cut = lines[:-1], lines[-1]  # the last piece has no newline: cut by a kill (or empty)
        self.end = len(text) - len(cut)
        if not whole:
            self.end = 0
            return
        try:
            self.gen = str(json.loads(whole[0])["gen"])
        except (ValueError, KeyError, TypeError):
            log.error("Engram: %s is not a journal of kept messages; it is left as it is", self.path)
            self.failed = True
            return
        self.records = [_episode(raw.decode("utf-8", "replace")) for raw in whole[1:]]
        if bad := sum(r is None for r in self.records):
            log.error("Engram: %d kept messages in %s cannot be read and are skipped", bad, self.path)

    def reserve(self) -> None:
        """Make the file at least ``reserve_bytes`` long (zeros), while the disk has room."""
        try:
            size = self.path.stat().st_size if self.path.exists() else 0
            if size >= self.reserve_bytes:
                return
            with self.path.open("ab", buffering=0) as f:
                _write_all(f, b"\0" * (self.reserve_bytes - size))
                os.fsync(f.fileno())
        except OSError as e:
            log.warning("Engram: no room for the reserve of kept messages (%s, %d KB): %s; on a full disk "
                        "the messages said meanwhile are kept in memory only", self.path,
                        self.reserve_bytes // 1024, e)

    def append(self, episodes: list[Episode]) -> int:
        """Append ``episodes``, flushed to disk; returns how many are in the file (the first ones:
        after one finds no room, none is appended until the file is cleared)."""
        if self.failed or not episodes:
            return 0
        head = b""
        if not self.gen:
            self.gen = secrets.token_hex(8)
            head = json.dumps({"kept": 1, "gen": self.gen}).encode() + b"\n"
        data = head + b"".join(_line(e) for e in episodes)
        try:
            with self.path.open("r+b" if self.path.exists() else "wb", buffering=0) as f:
                f.seek(self.end)
                _write_all(f, data)
                os.fsync(f.fileno())
        except OSError as e:
            self.failed = True
            self._zero(self.end, len(data))  # a piece that went in must not read as a record later
            log.error("Engram: the messages that cannot be written to the store cannot be kept in %s "
                      "either (%s); from now on they are kept in memory only", self.path, e)
            return 0
        self.end += len(data)
        self.records += episodes
        return len(episodes)

    def _zero(self, start: int, length: int) -> None:
        try:
            with self.path.open("r+b", buffering=0) as f:
                f.seek(start)
                _write_all(f, b"\0" * min(length, max(0, os.fstat(f.fileno()).st_size - start)))
                os.fsync(f.fileno())
        except OSError:
            pass

    def clear(self) -> None:
        """Every record is in the store: zero the file (keeping the reserve); a new generation next."""
        try:
            if self.path.exists():
                with self.path.open("r+b", buffering=0) as f:
                    size = os.fstat(f.fileno()).st_size
                    if size > self.reserve_bytes:
                        f.truncate(self.reserve_bytes)
                    f.seek(0)
                    _write_all(f, b"\0" * min(size, self.reserve_bytes))
                    os.fsync(f.fileno())
        except OSError as e:  # written into the store already (the cursor says so): nothing is lost
            log.warning("Engram: %s could not be cleared (%s); its messages are in the store and are "
                        "not written twice", self.path, e)
            return
        self.gen, self.records, self.end, self.failed = "", [], 0, False




async def record_kept(recorder: Any, journal: KeptJournal) -> int:
    """Write ``journal``'s records into the store (``Recorder.record_kept``: in order, once), then
    clear it; returns how many were written."""
    if not journal.gen:
        return 0
    written = await recorder.record_kept(journal.records, CURSOR + journal.gen)
    journal.clear()
    return len(written)
