"""Backups of the store: online copies with SQLite's backup API, the newest ``keep`` kept, and a
restore that does not bring back what was forgotten since.

**Backup.** ``take_backup`` copies the store page by page through SQLite's backup API on its own
connection, in a thread, a few hundred pages at a time, so the bot goes on recording and replying
while it runs (a write between steps restarts the copy of what changed: the copy is always one
consistent moment). It is written as ``backups/engram-<UTC time>.db.part`` beside the store (a second
backup in the same second: ``engram-<UTC time>-2.db``, never over another), checked
(SQLite's quick check), flushed to disk and then renamed, so a file named ``.db`` in ``backups/`` is
always a whole store. The oldest past ``keep`` are deleted.

**A forget reaches the backups.** After its erase in the store, a hard forget erases the same ids,
and the whole erase list again, from every backup in ``backups/`` (``erase_in_backups``), so no file
beside the store keeps what was forgotten; each backup stays one file (a rollback journal, not a
write-ahead log). A forget stopped before it reached every backup (a kill) is caught up at the next
open (``backups_behind``: ``backups/.erased-reached`` holds the checksum of the list the backups all
had); a backup an erase was stopped in is finished or rolled back by SQLite before anything reads it
(``settle``). A copy kept elsewhere is reached by the erase list when it is restored.

**The erase list.** Every hard forget notes what it erases in ``<store>-erased`` beside the store
before it erases it: the episode and memory ids (never given out again by the store, so an id names
one line forever), and the people and places forgotten as salted hashes (no name, no text, no plain
id: a hash can only confirm a guess). ``restore`` re-applies the whole list to the backup before it
takes the store's place, so a backup taken before a forget comes back without what was forgotten; the
restore says how much it erased again. The list is never cut (a copy kept outside ``backups/`` may be
restored any day), but past ``COMPACT_AT`` forgets it is rewritten as one record, ids as runs.

**Restore.** With the bot stopped: the backup is copied, checked, the erase list applied to the copy,
then the current store (and its write-ahead log) moved aside as ``<store>.before-restore-<time>`` and
the copy renamed into its place. Nothing is deleted: the owner removes the set-aside store when content.
The files beside the store (diaries, identity) are not part of a backup and stay as they are.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from .errors import InvalidInputError, StoreError
from .store.sqlite import open_store
from .store.sqlite.copies import copy_store, ids_in, settle, sync_folder

log = logging.getLogger("engram.backup")

FOLDER = "backups"
KEEP = 7  # backups kept by default (one a day: a week)
# engram-<UTC time>.db; a second backup in the same second gets -2, -3... (never the same file twice)
_NAME = re.compile(r"^engram-(\d{8}T\d{6}Z)(?:-(\d+))?\.db$")
_TAKING: set[Path] = set()  # names chosen by backups under way in this process (not yet on disk)
ERASED_SUFFIX = "-erased"
COMPACT_AT = 1_000  # forgets noted one a line before the erase list is rewritten as one record
REACHED = ".erased-reached"  # in backups/: the checksum of the erase list every backup there has had


@dataclass(frozen=True)
class Restored:
    """What a restore did: the backup restored, where the replaced store was set aside, and how many
    lines and memories forgotten since the backup were erased again."""

    backup: Path
    set_aside: Path | None
    episodes_erased: int
    memories_erased: int
    people_erased: int
    places_erased: int


def backup_folder(store: Path) -> Path:
    return Path(store).resolve().parent / FOLDER


def backups(store: Path) -> list[Path]:
    """The whole backups of ``store``, newest first."""
    folder = backup_folder(store)
    if not folder.is_dir():
        return []
    return sorted((p for p in folder.iterdir() if _NAME.match(p.name)), key=_taken_when, reverse=True)


def _taken_when(path: Path) -> tuple[str, int]:
    """A backup's time and its number within that second (the first is 1), from its name."""
    m = _NAME.match(path.name)
    assert m is not None
    return m.group(1), int(m.group(2) or 1)


def _new_name(folder: Path, at: datetime) -> Path:
    """A name no backup has, finished or under way (here, or in another process: its ``.part``)."""
    stamp = f"engram-{at:%Y%m%dT%H%M%SZ}"
    n = 1
    while True:
        target = folder / (f"{stamp}.db" if n == 1 else f"{stamp}-{n}.db")
        part = target.with_name(target.name + ".part")
        if target not in _TAKING and not target.exists() and not part.exists():
            return target
        n += 1


def newest_backup(store: Path) -> Path | None:
    found = backups(store)
    return found[0] if found else None


def newest_backup_line(store: Path) -> str:
    """What the log says of the backups of a store that cannot be opened: the newest, and how to put it
    in place (never done by itself: the owner decides)."""
    newest = newest_backup(store)
    if newest is None:
        return f"there is no backup of {store} in {backup_folder(store)}"
    return (f"the newest backup is {newest}: with the bot stopped, `python -m astrbot_plugin_engram.memory "
            f"--db {store} restore {newest}` puts it in place (what was forgotten since stays forgotten)")


async def take_backup(store: Path, *, keep: int = KEEP, now: datetime | None = None) -> Path:
    """An online backup of ``store`` in ``backups/`` beside it; the oldest past ``keep`` deleted
    (``keep`` 0: none deleted). Raises ``StoreError`` when the store cannot be read or the copy fails."""
    store = Path(store)
    if not store.is_file():
        raise StoreError(f"no store at {store} to back up", code="backup_no_store", path=store)
    at = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    folder = backup_folder(store)
    folder.mkdir(parents=True, exist_ok=True)
    target = _new_name(folder, at)
    _TAKING.add(target)
    try:
        await asyncio.to_thread(copy_store, store, target)
    finally:
        _TAKING.discard(target)
    if keep > 0:
        for old in backups(store)[keep:]:
            old.unlink(missing_ok=True)
    log.info("Engram: store backed up to %s", target)
    return target


# ---- the erase list --------------------------------------------------------------------------------
def erase_list_path(store: Path) -> Path:
    return Path(store).with_name(Path(store).name + ERASED_SUFFIX)


def _salt(path: Path) -> str:
    """The list's salt, from its first line (written with the first forget)."""
    if path.exists():
        with open(path, encoding="utf-8") as f:
            head = json.loads(f.readline() or "{}")
        if isinstance(head, dict) and isinstance(head.get("salt"), str):
            return str(head["salt"])
    salt = secrets.token_hex(16)
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps({"erase_list": 1, "salt": salt}) + "\n")
        f.flush()
        os.fsync(f.fileno())
    return salt


def _hashed(salt: str, key: str) -> str:
    return hashlib.sha256(f"{salt}\0{key}".encode("utf-8", "surrogatepass")).hexdigest()


def note_erase(store: Path, episodes: Sequence[int], memories: Sequence[int], *,
               people: Sequence[str] = (), places: Sequence[str] = ()) -> None:
    """Add one forget to the erase list (before its erase, flushed to disk); past ``COMPACT_AT`` lines
    the list is rewritten as one record (``_compact``)."""
    if not (episodes or memories or people or places) or str(store) in ("", ":memory:"):
        return
    path = erase_list_path(store)
    salt = _salt(path)
    record = {"episodes": sorted(set(episodes)), "memories": sorted(set(memories)),
              "people": sorted({_hashed(salt, p) for p in people}),
              "places": sorted({_hashed(salt, p) for p in places})}
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")
        f.flush()
        os.fsync(f.fileno())
    with open(path, "rb") as f:
        lines = sum(1 for _ in f)
    if lines > COMPACT_AT:
        _compact(path)


def _compact(path: Path) -> None:
    """The erase list as its salt and one record holding every entry, ids as runs ``[first, last]``
    (a forgotten place's lines are mostly one run): written beside it, flushed, renamed over it, so a
    kill leaves the old list or the new one. Nothing is dropped: the list also reaches a copy kept
    outside ``backups/`` (restore takes any file), which no count of the backups can vouch for."""
    erased = read_erase_list(path.with_name(path.name.removesuffix(ERASED_SUFFIX)))
    record = {"episodes": _runs(erased.episodes), "memories": _runs(erased.memories),
              "people": sorted(erased.people), "places": sorted(erased.places)}
    part = path.with_name(path.name + ".part")
    with open(part, "w", encoding="utf-8") as f:
        f.write(json.dumps({"erase_list": 1, "salt": erased.salt}) + "\n" + json.dumps(record) + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(part, path)
    sync_folder(path.parent)


def _runs(ids: set[int]) -> list[list[int]]:
    out: list[list[int]] = []
    for i in sorted(ids):
        if out and out[-1][1] == i - 1:
            out[-1][1] = i
        else:
            out.append([i, i])
    return out


def _ids(items: list[object]) -> set[int]:
    """Ids as noted: each a number, or a run ``[first, last]`` (a compacted list)."""
    out: set[int] = set()
    for x in items:
        if isinstance(x, list) and len(x) == 2:
            out.update(range(int(x[0]), int(x[1]) + 1))
        else:
            out.add(int(x))  # type: ignore[call-overload]
    return out


@dataclass
class EraseList:
    episodes: set[int]
    memories: set[int]
    people: set[str]  # salted hashes
    places: set[str]
    salt: str


def read_erase_list(store: Path) -> EraseList:
    """Every forget noted beside ``store`` (empty when none was); a line cut by a kill is skipped."""
    path = erase_list_path(store)
    out = EraseList(set(), set(), set(), set(), "")
    if not path.exists():
        return out
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f):
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if i == 0:
                out.salt = str(rec.get("salt", ""))
                continue
            out.episodes |= _ids(rec.get("episodes", []))
            out.memories |= _ids(rec.get("memories", []))
            out.people.update(str(x) for x in rec.get("people", []))
            out.places.update(str(x) for x in rec.get("places", []))
    return out


async def erase_in_backups(store: Path, episodes: Sequence[int], memories: Sequence[int], *,
                           people: Sequence[str] = (), places: Sequence[str] = ()) -> int:
    """A forget carried into every backup in ``backups/`` (after the store's own erase), so no file
    beside the store keeps what was forgotten; returns how many backups were reached. With this forget
    each backup gets the whole erase list again: a forget an earlier kill kept from a backup is caught
    up. A backup that cannot be reached is logged and left to the erase list (applied again at the
    next forget, at the next open, and when it is restored)."""
    digest, erased = _digest(store), read_erase_list(store)
    reached, found = 0, backups(store)
    for backup in found:
        try:
            await _erase_in(backup, erased, episodes, memories, people, places)
            reached += 1
        except Exception as e:  # the forget itself is done; restoring this one re-applies the list
            log.error("Engram: a forget could not reach the backup %s (%s); the erase list is applied "
                      "again at the next forget or open, and if it is ever restored", backup, e)
    if found and reached == len(found) and digest:
        marker = backup_folder(store) / REACHED
        part = marker.with_name(marker.name + ".part")
        try:
            part.write_text(digest + "\n", "utf-8")
            os.replace(part, marker)
        except OSError as e:  # the backups are erased; the next open applies the list to them again
            log.error("Engram: could not note that every backup had the forget (%s)", e)
    return reached


def backups_behind(store: Path) -> bool:
    """Whether a backup may still hold something on the erase list: a forget was stopped (a kill, an
    error) before it had reached every backup (``REACHED`` is not the list as it is now)."""
    digest = _digest(store)
    if not digest or not backups(store):
        return False
    marker = backup_folder(store) / REACHED
    try:
        return marker.read_text("utf-8").strip() != digest
    except OSError:
        return True


def _digest(store: Path) -> str:
    """The erase list's checksum ("" when there is none)."""
    try:
        return hashlib.sha256(erase_list_path(store).read_bytes()).hexdigest()
    except FileNotFoundError:
        return ""


async def _erase_in(path: Path, erased: EraseList, episodes: Sequence[int] = (), memories: Sequence[int] = (),
                    people: Sequence[str] = (), places: Sequence[str] = ()
                    ) -> tuple[list[int], list[int], list[str], list[str]]:
    """Erase from the store file at ``path`` (a backup, or a copy being restored) what ``erased`` lists
    and the ids and people and places given; it stays one file in a rollback journal's mode, readable
    read-only. Returns the episodes, memories, people and places erased."""
    await asyncio.to_thread(settle, path)
    named = await asyncio.to_thread(_matching, path, "people", erased.people, erased.salt)
    people = sorted({*people, *named})
    named = await asyncio.to_thread(_matching, path, "places", erased.places, erased.salt)
    places = sorted({*places, *named})
    opened = await open_store(path)
    try:
        async with opened.transaction() as tx:
            eps, mems = await tx.erase(sorted({*episodes, *erased.episodes}),
                                       sorted({*memories, *erased.memories}), people=people, places=places)
    finally:
        await opened.close()
    await asyncio.to_thread(settle, path, always=True)
    return eps, mems, people, places


# ---- restore ---------------------------------------------------------------------------------------
async def restore(store: Path, backup: Path, *, now: datetime | None = None) -> Restored:
    """Put ``backup`` in the place of ``store`` (the bot stopped), with the erase list applied first."""
    store, backup = Path(store), Path(backup)
    if not backup.is_file():
        raise InvalidInputError(f"no backup at {backup}")
    at = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    copy = store.with_name(f"{store.name}.restoring")
    for leftover in (copy, *_beside(copy)):
        leftover.unlink(missing_ok=True)
    await asyncio.to_thread(settle, backup)  # an erase in it a kill stopped: finished or dropped first
    await asyncio.to_thread(copy_store, backup, copy)
    eps, mems, people, places = await _erase_in(copy, read_erase_list(store))
    set_aside = None
    if store.exists():
        set_aside = store.with_name(f"{store.name}.before-restore-{at:%Y%m%dT%H%M%SZ}")
        os.replace(store, set_aside)
        for side in _beside(store):  # the old write-ahead log must never meet the restored file
            if side.exists():
                os.replace(side, Path(f"{set_aside}{side.name[len(store.name):]}"))
    for side in _beside(copy):
        side.unlink(missing_ok=True)
    os.replace(copy, store)
    sync_folder(store.parent)
    log.warning("Engram: %s restored from %s (%d lines and %d memories forgotten since erased again)%s",
                store, backup, len(eps), len(mems),
                f"; the store it replaced is kept as {set_aside}" if set_aside else "")
    return Restored(backup, set_aside, len(eps), len(mems), len(people), len(places))


def _beside(store: Path) -> list[Path]:
    return [store.with_name(store.name + s) for s in ("-wal", "-shm", "-journal")]


def _matching(path: Path, which: str, hashes: set[str], salt: str) -> list[str]:
    """The people (or places) of the store at ``path`` whose salted hash is in ``hashes``."""
    if not hashes:
        return []
    return [key for key in ids_in(path, which) if _hashed(salt, key) in hashes]
