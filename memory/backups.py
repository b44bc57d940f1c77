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
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from .errors import InvalidInputError, StoreError
from .store.erase_records import EraseList, erase_record, hashed, new_salt, parse_records, salt_record
from .store.opening import shown
from .store.sqlite import open_store
from .store.sqlite.copies import copy_store, ids_in, is_engram_store, settle, sync_folder

log = logging.getLogger("engram.backup")

FOLDER = "backups"
KEEP = 7  # backups kept by default (one a day: a week)
# engram-<UTC time>.db; a second backup in the same second gets -2, -3... (never the same file twice)
_NAME = re.compile(r"^engram-(\d{8}T\d{6}Z)(?:-(\d+))?\.db$")
_TAKING: set[Path] = set()  # names chosen by backups under way in this process (not yet on disk)
ERASED_SUFFIX = "-erased"
SNAPSHOT = ".snapshot"  # a database's backup before it is copied into its place (``_database_backup``)
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
        snapshot = target.with_name(target.name + SNAPSHOT)
        if target not in _TAKING and not (target.exists() or part.exists() or snapshot.exists()):
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


async def take_backup(store: Path, *, keep: int = KEEP, now: datetime | None = None,
                      url: str | None = None) -> Path:
    """An online backup of ``store`` in ``backups/`` beside it; the oldest past ``keep`` deleted
    (``keep`` 0: none deleted). ``url``: the store is that PostgreSQL database (``store`` its name in
    the data folder, ``store_path``): the backup is a snapshot of it as a SQLite store file. Raises
    ``StoreError`` when the store cannot be read or the copy fails."""
    store = Path(store)
    if url is None and not store.is_file():
        raise StoreError(f"no store at {store} to back up", code="backup_no_store", path=store)
    at = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    folder = backup_folder(store)
    folder.mkdir(parents=True, exist_ok=True)
    target = _new_name(folder, at)
    _TAKING.add(target)
    try:
        if url is None:
            await asyncio.to_thread(copy_store, store, target)
        else:  # a child process: the rows' words are made off the bot's replies
            await _database_backup(url, target)
    finally:
        _TAKING.discard(target)
    if keep > 0:
        for old in backups(store)[keep:]:
            old.unlink(missing_ok=True)
    log.info("Engram: %s backed up to %s", shown(url) if url else "store", target)
    return target


async def _database_backup(url: str, target: Path) -> None:
    """A snapshot of the database at ``url`` into a scratch SQLite store, then copied to ``target`` as
    every backup is (checked, one file, flushed, renamed): a ``.db`` in ``backups/`` is a whole store."""
    scratch = target.with_name(target.name + SNAPSHOT)
    try:
        for leftover in (scratch, *_beside(scratch)):
            leftover.unlink(missing_ok=True)
        await _snapshot_in_child(url, scratch)
        await asyncio.to_thread(copy_store, scratch, target)
    finally:
        for leftover in (scratch, *_beside(scratch)):
            leftover.unlink(missing_ok=True)


async def _snapshot_in_child(url: str, scratch: Path) -> None:
    """The snapshot written by a child process at a lower priority: making every line's index words is
    CPU work, which in a thread of the bot's process held its event loop up to a second at a time on a
    busy machine (bench/RESULTS.md).
    The URL goes in the child's environment, never its command line (which every user can list);
    where no child can start, the snapshot is made in a thread here."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p), _URL_VARIABLE: url}
    try:
        child = await asyncio.create_subprocess_exec(
            sys.executable, "-c", _CHILD.format(module=f"{__package__}.store.postgres.backups"), str(scratch),
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE, env=env)
    except OSError as e:
        log.warning("Engram: no child process for the backup (%s); it is made in a thread here", e)
        from .store.postgres.backups import snapshot_to_file

        await asyncio.to_thread(asyncio.run, snapshot_to_file(url, scratch))
        return
    try:
        _, said = await child.communicate()
    except BaseException:  # cancelled (the bot stops): the child goes too
        child.kill()
        await child.wait()
        raise
    if child.returncode != 0:
        last = said.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"status {child.returncode}"]
        raise StoreError(f"the backup of {shown(url)} failed: {shown(last[0])}", code="backup_failed",
                         path=shown(url), error=shown(last[0]))


_URL_VARIABLE = "ENGRAM_BACKUP_URL"
_CHILD = ("import asyncio, importlib, os, sys; from pathlib import Path; "
          "hasattr(os, 'nice') and os.nice(10); "  # the bot's own process goes first for the cores
          "m = importlib.import_module('{module}'); "
          f"asyncio.run(m.snapshot_to_file(os.environ['{_URL_VARIABLE}'], Path(sys.argv[1])))")


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
    salt = new_salt()
    with open(path, "w", encoding="utf-8") as f:
        f.write(salt_record(salt) + "\n")
        f.flush()
        os.fsync(f.fileno())
    return salt


def note_erase(store: Path, episodes: Sequence[int], memories: Sequence[int], *,
               people: Sequence[str] = (), places: Sequence[str] = ()) -> None:
    """Add one forget to the erase list (before its erase, flushed to disk); past ``COMPACT_AT`` lines
    the list is rewritten as one record (``_compact``)."""
    if not (episodes or memories or people or places) or str(store) in ("", ":memory:"):
        return
    path = erase_list_path(store)
    record = erase_record(_salt(path), episodes, memories, people, places)
    with open(path, "a", encoding="utf-8") as f:
        f.write(record + "\n")
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
        f.write(salt_record(erased.salt) + "\n" + json.dumps(record) + "\n")
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


def read_erase_list(store: Path) -> EraseList:
    """Every forget noted beside ``store`` (empty when none was); a line cut by a kill is skipped."""
    path = erase_list_path(store)
    if not path.exists():
        return EraseList()
    with open(path, encoding="utf-8") as f:
        return parse_records(f)


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
                    people: Sequence[str] = (), places: Sequence[str] = ()) -> None:
    """Erase from the backup at ``path`` what ``erased`` lists and the ids, people and places given;
    it stays one file in a rollback journal's mode, readable read-only (``settle``)."""
    await asyncio.to_thread(settle, path)
    await _erase_again(path, [erased], episodes, memories, people, places, checked=False)
    await asyncio.to_thread(settle, path, always=True)


# ---- restore ---------------------------------------------------------------------------------------
async def restore(store: Path, backup: Path, *, now: datetime | None = None,
                  url: str | None = None) -> Restored:
    """Put ``backup`` in the place of ``store`` (the bot stopped), with the erase list applied first.
    ``url``: the store is that PostgreSQL database (``store`` its name in the data folder): its rows are
    replaced by the backup's in one transaction (``_restore_database``)."""
    store, backup = Path(store), Path(backup)
    if not backup.is_file():
        raise InvalidInputError(f"no backup at {backup}")
    at = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    if url is not None:
        return await _restore_database(url, store, backup, at)
    copy = store.with_name(f"{store.name}.restoring")
    try:
        await _checked_copy(backup, copy)
        people, places, eps, mems = await _erase_again(copy, [read_erase_list(store)])
    except BaseException:
        for leftover in (copy, *_beside(copy)):
            leftover.unlink(missing_ok=True)
        raise
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


async def _restore_database(url: str, store: Path, backup: Path, at: datetime) -> Restored:
    """A backup restored into the PostgreSQL database at ``url``: checked and erased again (the data
    folder's erase list and the database's own) in a scratch copy; the database opened alone (refused
    while any other instance has it open); what it holds now set aside as a backup file
    (``<store>.before-restore-<time>.db`` in the data folder); then its rows replaced in one transaction."""
    from .store.postgres.backups import open_alone, replace_all, snapshot_to_file

    copy = store.with_name(f"{store.name}.restoring")
    set_aside = store.with_name(f"{store.name}.before-restore-{at:%Y%m%dT%H%M%SZ}.db")
    scratch = set_aside.with_name(set_aside.name + SNAPSHOT)
    try:
        await _checked_copy(backup, copy)
        target = await open_alone(url, store.parent)
        try:
            lists = [read_erase_list(store), parse_records(await target.erase_list_records())]
            people, places, eps, mems = await _erase_again(copy, lists)
            await snapshot_to_file(url, scratch)
            await asyncio.to_thread(copy_store, scratch, set_aside)
            source = await open_store(copy, read_only=True)
            try:
                await replace_all(target, source)
            finally:
                await source.close()
        finally:
            await target.close()
    finally:
        for leftover in (copy, scratch, *_beside(copy), *_beside(scratch)):
            leftover.unlink(missing_ok=True)
    log.warning("Engram: %s restored from %s (%d lines and %d memories forgotten since erased again); what "
                "it held is kept as %s", shown(url), backup, len(eps), len(mems), set_aside)
    return Restored(backup, set_aside, len(eps), len(mems), len(people), len(places))


async def _checked_copy(backup: Path, copy: Path) -> None:
    """``backup`` copied to ``copy`` if it is a whole Engram store; else a clear error, nothing changed."""
    for leftover in (copy, *_beside(copy)):
        leftover.unlink(missing_ok=True)
    try:
        await asyncio.to_thread(settle, backup)  # an erase in it a kill stopped: finished or undone first
        await asyncio.to_thread(copy_store, backup, copy)
    except StoreError as e:
        raise InvalidInputError(f"{backup} is not an Engram backup (not a SQLite file, or damaged: "
                                f"{e.__cause__ or e}); nothing was changed") from e
    if not await asyncio.to_thread(is_engram_store, copy):
        raise InvalidInputError(f"{backup} is not an Engram backup (a SQLite file without Engram's tables); "
                                "nothing was changed")


async def _erase_again(copy: Path, lists: Sequence[EraseList], episodes: Sequence[int] = (),
                       memories: Sequence[int] = (), named: Sequence[str] = (),
                       places_named: Sequence[str] = (), *, checked: bool = True
                       ) -> tuple[list[str], list[str], list[int], list[int]]:
    """Every erase list (and the ids, people and places given) applied to the store file at ``copy``:
    the people and places it matched, the lines and memories it erased. ``checked=False``: a backup,
    opened without the full check (``SQLiteStore.open``)."""
    people: set[str] = set(named)
    places: set[str] = set(places_named)
    for erased in lists:
        people.update(await asyncio.to_thread(_matching, copy, "people", erased.people, erased.salt))
        places.update(await asyncio.to_thread(_matching, copy, "places", erased.places, erased.salt))
    every_episode = sorted(set(episodes).union(*(e.episodes for e in lists)))
    every_memory = sorted(set(memories).union(*(e.memories for e in lists)))
    opened = await open_store(copy, checked=checked)
    try:
        async with opened.transaction() as tx:
            eps, mems = await tx.erase(every_episode, every_memory, people=sorted(people),
                                       places=sorted(places))
    finally:
        await opened.close()
    return sorted(people), sorted(places), eps, mems


def _beside(store: Path) -> list[Path]:
    return [store.with_name(store.name + s) for s in ("-wal", "-shm", "-journal")]


def _matching(path: Path, which: str, hashes: set[str], salt: str) -> list[str]:
    """The people (or places) of the store at ``path`` whose salted hash is in ``hashes``."""
    if not hashes:
        return []
    return [key for key in ids_in(path, which) if hashed(salt, key) in hashes]
