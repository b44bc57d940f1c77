"""The bot's identity documents, read for the identity page and never written.

The core identity (``identity/self.md``), the self-image (``identity/self-image.md``) with every
earlier version in ``identity/history/``, and the identity proposals still waiting for the owner
(``identity/proposals.json``). Only reads: ``IdentityFolder.core()`` is not used because it copies an
old ``identity.md`` into place; a file that cannot be read is shown with the reason.
"""

from __future__ import annotations

import re
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..memory.self.identity import IdentityFolder, read_document
from ..memory.self.proposals import PENDING, Proposals

MAX_HISTORY = 50  # versions listed, newest first
STAMP = re.compile(r"\.(\d{8}T\d{6}\d*)Z\.md$")


def _document(path: Path) -> dict[str, Any] | None:
    doc = read_document(path)
    if not doc.text and not doc.problem:
        return None
    return {"text": doc.text, "problem": doc.problem or None}


def _kept_at(path: Path) -> str | None:
    """When a history copy was replaced (its file name's stamp), as ISO time; None if unreadable."""
    m = STAMP.search(path.name)
    if m is None:
        return None
    stamp = m.group(1)
    try:
        at = datetime.strptime(stamp[:15], "%Y%m%dT%H%M%S").replace(tzinfo=timezone.utc)
    except ValueError:
        return None
    return at.isoformat(timespec="seconds")


def history(folder: IdentityFolder, name: str) -> list[dict[str, Any]]:
    """Earlier versions of ``name`` (``self`` or ``self-image``), newest first, at most MAX_HISTORY."""
    out = []
    for path in reversed(folder.history(name)[-MAX_HISTORY:]):
        doc = read_document(path)
        out.append({"file": path.name, "replaced_at": _kept_at(path), "text": doc.text,
                    "problem": doc.problem or None})
    return out


def open_proposals(folder: IdentityFolder) -> tuple[list[dict[str, Any]], str | None]:
    """The proposals waiting for the owner, oldest first; and why the file could not be read, if so."""
    try:
        items = Proposals(folder).all()
    except (OSError, ValueError, TypeError, AttributeError) as e:  # missing keys, bad JSON, not a list
        return [], f"{folder.root / 'proposals.json'} cannot be read: {type(e).__name__}: {e}"
    return [asdict(p) for p in items if p.status == PENDING], None


def identity(data_dir: Path | None, note: str) -> dict[str, Any]:
    """Everything the identity page shows; ``note`` is what the host injects (its fallback)."""
    if data_dir is None:
        return {"folder": None, "core": {"text": note, "problem": None} if note else None,
                "self_image": None, "history": [], "core_history": [], "proposals": [],
                "proposals_problem": None}
    folder = IdentityFolder(data_dir)
    core = _document(folder.self_path)
    if core is None and note:
        core = {"text": note, "problem": None}
    proposals, problem = open_proposals(folder)
    return {
        "folder": str(folder.root),
        "core": core,
        "self_image": _document(folder.image_path),
        "history": history(folder, "self-image"),
        "core_history": history(folder, "self"),
        "proposals": proposals,
        "proposals_problem": problem,
    }

