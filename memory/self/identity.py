"""The bot's identity documents in its data folder: who it is, how it sees itself, and their history.

``identity/self.md`` is the core identity, written by the owner (the old ``identity.md`` is copied
there once and left in place); ``identity/self-image.md`` is the bot's own "how I see myself";
``identity/history/`` keeps the earlier versions: every one of the owner's ``self.md``; of the
self-image, rewritten by the bot after each diary, every one replaced in the last 30 days and, before
that, the last of each month (``compact``: one file a day for ever otherwise). A file that is too large
or not UTF-8 is reported in one clear sentence and read as far as it can be.
"""

from __future__ import annotations

import logging
import os
import tempfile
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from ..model import now_utc

log = logging.getLogger("engram.identity")

FOLDER, HISTORY = "identity", "history"
SELF_FILE, IMAGE_FILE, OLD_FILE = "self.md", "self-image.md", "identity.md"
MAX_BYTES = 64 * 1024  # an identity document larger than this is read only this far
KEEP_ALL = timedelta(days=30)  # every self-image replaced this recently is kept; before, one a month
STAMP = "%Y%m%dT%H%M%S%fZ"  # a history file's name: ``<name>.<when it was replaced, UTC>.md``


@dataclass(frozen=True)
class Document:
    """A document's text and, when it could not be read whole, why (one sentence for the owner)."""

    text: str
    problem: str = ""


def atomic_write(path: Path, text: str | bytes) -> None:
    """Write ``text`` to ``path`` through a temporary file of its own in the same folder, flushed to
    disk before it is renamed over ``path`` (and the folder after): readers see the old or the new
    file, whole, also after a kill or a power cut, and two processes writing ``path`` at once (the
    bot and the command line) each replace it whole (the last rename wins)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode("utf-8") if isinstance(text, str) else text
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(name, path)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    _sync_folder(path.parent)


def _sync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (a file system that cannot sync a folder is left as is)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def temporaries(path: Path) -> list[Path]:
    """What ``atomic_write`` calls killed midway left beside ``path`` (each write has a temporary
    file of its own, ``.<name>.<random>.tmp``; before session 11 it was ``.<name>.tmp``)."""
    if not path.parent.is_dir():
        return []
    prefix = f".{path.name}."
    return [p for p in path.parent.iterdir()
            if p.name.startswith(prefix) and p.name.endswith(".tmp")]


def _utc(now: datetime | None) -> datetime:
    """``now`` (default: the clock's) in UTC, as the history's file names stamp it (naive: UTC)."""
    t = now or now_utc()
    return t.astimezone(timezone.utc) if t.tzinfo else t


def _replaced_at(path: Path) -> datetime | None:
    """When a history file's version was replaced (naive UTC), from its name; None if it holds none."""
    stamp = path.name[:-len(path.suffix)].rsplit(".", 1)[-1]
    try:
        return datetime.strptime(stamp, STAMP)
    except ValueError:
        return None


def read_document(path: Path, limit: int = MAX_BYTES) -> Document:
    """The text of ``path`` ("" if missing); a huge or non-UTF-8 file gives what can be read, and why."""
    try:
        with path.open("rb") as f:
            raw = f.read(limit + 1)
    except FileNotFoundError:
        return Document("")
    except OSError as e:
        return Document("", f"{path} cannot be read: {e.strerror or e}")
    problem = ""
    if len(raw) > limit:
        raw = raw[:limit]
        problem = (f"{path} is larger than {limit // 1024} KiB; only its first {limit // 1024} KiB are "
                   "used: keep it short (a few paragraphs)")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        if problem and e.start >= len(raw) - 3:  # the cut fell inside a character
            text = raw[: e.start].decode("utf-8-sig")
        else:
            return Document("", f"{path} is not UTF-8 text (byte {raw[e.start]:#04x} at offset {e.start}); "
                                "it is not used until it is saved as UTF-8")
    return Document(text.strip(), problem)


class IdentityFolder:
    """``<data>/identity/``: the documents, their history, and the move of the old ``identity.md``."""

    def __init__(self, data_dir: Path):
        self.data_dir = Path(data_dir)
        self.root = self.data_dir / FOLDER
        self.history_dir = self.root / HISTORY

    @property
    def self_path(self) -> Path:
        return self.root / SELF_FILE

    @property
    def image_path(self) -> Path:
        return self.root / IMAGE_FILE

    @property
    def old_path(self) -> Path:
        """The core identity's old place (``<data>/identity.md``), copied to ``self_path`` once."""
        return self.data_dir / OLD_FILE

    def migrate(self) -> bool:
        """Copy the old ``identity.md`` to ``identity/self.md`` once (the old file stays); True if copied."""
        old = self.old_path
        if self.self_path.exists() or not old.is_file():
            return False
        self.root.mkdir(parents=True, exist_ok=True)
        atomic_write(self.self_path, old.read_bytes())  # a cut copy would never be copied again
        log.info("Engram: %s copied to %s (the core identity lives there now; %s is no longer read)",
                 old, self.self_path, old.name)
        return True

    def core(self) -> Document:
        """The core identity (``identity/self.md``)."""
        self.migrate()
        return read_document(self.self_path)

    def self_image(self) -> Document:
        return read_document(self.image_path)

    def replace(self, path: Path, text: str, now: datetime | None = None) -> Path | None:
        """Write ``text`` to ``path``, its current version kept in ``history/`` first; returns that copy."""
        kept = None
        if path.exists():
            stamp = _utc(now).strftime(STAMP)
            self.history_dir.mkdir(parents=True, exist_ok=True)
            kept = self.history_dir / f"{path.stem}.{stamp}{path.suffix}"
            atomic_write(kept, path.read_bytes())  # never a cut version in the history
        atomic_write(path, text.rstrip() + "\n")
        if path == self.image_path:
            self.compact(path.stem, now)
        return kept

    def compact(self, name: str, now: datetime | None = None) -> list[Path]:
        """Thin out the earlier versions of ``name``: those replaced in the last 30 days stay, and of
        older ones the last replaced in each month (UTC); a file whose name holds no time is left.
        Returns the files removed (a removal that fails is logged and tried again next time)."""
        cutoff = _utc(now).replace(tzinfo=None) - KEEP_ALL
        last_of_month: dict[tuple[int, int], Path] = {}
        removed = []
        for path in self.history(name):  # oldest first: a later one of the month replaces the earlier
            when = _replaced_at(path)
            if when is None or when > cutoff:
                continue
            month = (when.year, when.month)
            earlier = last_of_month.get(month)
            last_of_month[month] = path
            if earlier is not None:
                try:
                    earlier.unlink()
                    removed.append(earlier)
                except OSError as e:
                    log.warning("Engram: an old self-image version (%s) could not be removed: %s", earlier, e)
        return removed

    def history(self, name: str) -> list[Path]:
        """Earlier versions of ``self`` or ``self-image``, oldest first."""
        if not self.history_dir.is_dir():
            return []
        return sorted(self.history_dir.glob(f"{name}.*.md"))
