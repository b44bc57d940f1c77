"""The on-disk marker search of the forgetting tests: a unique marker (Latin and Chinese) and every
piece of it a file could hold — UTF-8, UTF-16, a word's tail, Chinese bigrams and single characters,
and the Chinese as JSON writes it with ``ensure_ascii`` (``\\u9f98``: a name or an id in an
episode's meta, a proposals file) — looked for in every file under a folder (the store, its WAL, the
diary, the identity folder...). A person whose id holds the Latin marker and whose name is the
Chinese one shows where their id and name stay."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

MARK, ZH = "qzvxmarkr7310", "龘靐齉鱻"


def pieces(mark: str = MARK, zh: str = ZH) -> Iterator[tuple[str, tuple[str, ...]]]:
    """Every piece of the marker a file could hold, with the encodings searched for it."""
    both = ("utf-8", "utf-16-le", "utf-16-be")
    yield mark, both
    yield zh, both
    for i in range(len(mark) - 5):  # the index may store a word's tail only (prefix compression)
        yield mark[i : i + 6], both
    for i in range(len(zh) - 1):  # character bigrams (the Chinese keyword index stores pieces)
        yield zh[i : i + 2], both
    for ch in zh:  # single characters are index tokens too (jieba cuts rare ones one by one)
        yield ch, ("utf-8",)
    for ch in zh:  # as JSON escapes it (``json.dumps`` without ``ensure_ascii=False``), either case
        yield f"\\u{ord(ch):04x}", ("utf-8",)
        yield f"\\u{ord(ch):04X}", ("utf-8",)


def traces(folder: Path, mark: str = MARK, zh: str = ZH) -> list[str]:
    """Where any piece of the marker occurs in any file under ``folder`` (paths relative to it)."""
    found = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        data = path.read_bytes()
        for piece, encodings in pieces(mark, zh):
            for enc in encodings:
                if piece.encode(enc) in data:
                    found.append(f"{path.relative_to(folder)}: {piece!r} ({enc})")
    return found


def files_with_marker(folder: Path, mark: str = MARK, zh: str = ZH) -> set[str]:
    """The files (relative paths) any piece of the marker is found in."""
    return {t.split(": ", 1)[0] for t in traces(folder, mark, zh)}
