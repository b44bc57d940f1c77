"""The self-image's two homes kept together: its memory (recalled, followed by forgets) and its file
``identity/self-image.md`` (injected into replies).

A new self-image is committed as a memory first, then written to the file; a note in the identity
folder (``.self-image-pending.json``: the id of the memory it replaces, no text) says the file may
still be behind. The next open (or the next self-image) finds the note and, when the memory moved,
writes the file from the memory (the file's version kept in ``history/``). A file the owner edited
by hand, with no note, is left as it is.
"""

from __future__ import annotations

import json
import logging
from datetime import datetime
from pathlib import Path

from ..kernel import Kernel
from ..model import SELF, Memory
from ..scopes import SELF as SELF_SCOPE
from .diary_files import data_folder
from .identity import FOLDER, IdentityFolder, atomic_write

log = logging.getLogger("engram.self_image")

KIND = "reflection"
DIARIES = 7  # recent diaries a self-image is written from
PENDING = ".self-image-pending.json"


async def current_self_image(engram: Kernel) -> Memory | None:
    """The active self-image memory: the latest ``reflection`` scoped ``self`` about the bot alone."""
    found = await engram.store.get_memories(await engram.store.memory_ids_of_kind(KIND))
    mine = [m for m in found.values() if m.scope == SELF_SCOPE and m.subjects == (SELF,)]
    return max(mine, key=lambda m: m.id or 0) if mine else None


def pending_path(folder: Path) -> Path:
    return folder / FOLDER / PENDING


def note_pending(folder: Path, replaced: Memory | None) -> None:
    """Before the memory is committed: the file may be behind it until ``done``."""
    atomic_write(pending_path(folder), json.dumps({"replaced": replaced.id if replaced else None}))


def done(folder: Path) -> None:
    pending_path(folder).unlink(missing_ok=True)


async def finish_self_image(engram: Kernel, folder: Path | None = None, now: datetime | None = None) -> bool:
    """A self-image stopped between its memory and its file (a kill, a full disk): the file follows
    the memory now; True if it was written. A note that cannot be acted on stays for the next time."""
    folder = folder or data_folder(engram)
    path = pending_path(folder)
    if not path.exists():
        return False
    try:
        replaced = json.loads(path.read_text("utf-8")).get("replaced")
        memory = await current_self_image(engram)
        ids = IdentityFolder(folder)
        wrote = False
        if memory is not None and memory.id != replaced and ids.self_image().text != memory.text.strip():
            ids.replace(ids.image_path, memory.text, now)
            wrote = True
            log.warning("Engram: a new self-image was stopped before its file was written; %s is "
                        "written now from its memory (m%s)", ids.image_path, memory.id)
        done(folder)
        return wrote
    except Exception:  # never a reason not to open; tried again next time
        log.exception("Engram: finishing an interrupted self-image (%s) failed", path)
        return False
