"""The bundles written from a store, kept in ``exports.json`` beside it: a forget cannot reach a file
outside the store, so it says which earlier exports still hold what it erased (those still where they
were written: one the owner moved or deleted is not found, and not listed)."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path

from ..self.file_lock import locked
from ..self.identity import atomic_write
from .format import MANIFEST

log = logging.getLogger("engram.bundle")
EXPORTS_FILE = "exports.json"


@dataclass(frozen=True)
class KnownExport:
    path: Path  # the bundle's folder
    time: str  # when it was written (ISO 8601)
    size: int  # bytes
    place: str | None  # the one place it was limited to (None: everything)


def _read(file: Path) -> list[dict[str, object]]:
    try:
        data = json.loads(file.read_text("utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as e:  # a damaged list is started again (the bundles are not touched)
        log.warning("Engram: %s cannot be read (%s); the exports written before are no longer listed",
                    file, e)
        return []
    return [e for e in data if isinstance(e, dict)] if isinstance(data, list) else []


def remember_export(data_folder: Path, export: KnownExport) -> None:
    """Add ``export`` to the list (one entry a folder: a bundle written again in one folder replaces it)."""
    file = data_folder / EXPORTS_FILE
    with locked(file):
        entries = [e for e in _read(file) if e.get("path") != str(export.path)]
        entries.append({"path": str(export.path), "time": export.time, "bytes": export.size,
                        "place": export.place})
        atomic_write(file, json.dumps(entries, ensure_ascii=False, indent=1) + "\n")


def known_exports(data_folder: Path) -> list[KnownExport]:
    """The bundles written from the store in ``data_folder`` that are still where they were written,
    oldest first."""
    out = []
    for e in _read(data_folder / EXPORTS_FILE):
        path = Path(str(e.get("path", "")))
        if e.get("path") and (path / MANIFEST).is_file():
            size = e.get("bytes")
            out.append(KnownExport(path, str(e.get("time", "")), size if isinstance(size, int) else 0,
                                   e.get("place") if isinstance(e.get("place"), str) else None))  # type: ignore[arg-type]
    return out
