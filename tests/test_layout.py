"""The layout's rules, checked on the source: SQLite only under memory/store/sqlite/, and memory/ never
imports astrbot or the plugin."""

from __future__ import annotations

import ast
import re
from pathlib import Path

MEMORY = Path(__file__).resolve().parents[1] / "memory"
SQLITE = MEMORY / "store" / "sqlite"
SQL = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE|PRAGMA|MATCH|CREATE TABLE)\b ")


def imported(path: Path) -> set[str]:
    """The top-level names of every module ``path`` imports (relative imports by their dots)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            out.add("." * node.level + (node.module or "").split(".")[0])
    return out


def strings(path: Path) -> list[str]:
    return [n.value for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def test_sqlite_is_known_only_under_store_sqlite() -> None:
    outside = [p for p in MEMORY.rglob("*.py") if SQLITE not in p.parents]
    assert len(outside) > 20
    for path in outside:
        assert not imported(path) & {"sqlite3", "aiosqlite"}, path
        assert not [s for s in strings(path) if SQL.search(s)], path


def test_the_core_never_imports_astrbot_or_the_plugin() -> None:
    for path in MEMORY.rglob("*.py"):
        names = imported(path)
        depth = len(path.relative_to(MEMORY).parts)  # memory/x.py: 1; memory/store/x.py: 2
        assert "astrbot" not in names, path
        assert "." * (depth + 1) + "plugin" not in names and "astrbot_plugin_engram" not in names, path
