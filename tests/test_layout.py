"""The layout's rules, checked on the source: SQLite only under memory/store/sqlite/, memory/ never
imports astrbot or the plugin, and the plugin and the dashboard never reach past Engram into its store."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MEMORY = ROOT / "memory"
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


def store_reaches(path: Path) -> list[int]:
    """Lines of ``path`` that read an attribute named ``store`` (``x.store``, ``getattr(x, "store")``)."""
    def reaches(node: ast.Attribute | ast.Call) -> bool:
        if isinstance(node, ast.Attribute):
            return node.attr == "store"
        return (isinstance(node.func, ast.Name)
                and node.func.id in {"getattr", "setattr", "hasattr"} and len(node.args) > 1
                and isinstance(node.args[1], ast.Constant) and node.args[1].value == "store")
    return sorted(n.lineno for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                  if isinstance(n, (ast.Attribute, ast.Call)) and reaches(n))


def test_the_plugin_and_the_dashboard_never_reach_into_an_engrams_store() -> None:
    """They go through Engram's methods (``job_records()`` and ``browser()`` hand out what the scheduler
    and the dashboard read): no attribute named ``store`` is touched there, whatever object it is on, so
    the store can change behind the facade."""
    outside = [ROOT / "main.py", *(ROOT / "plugin").rglob("*.py"), *(ROOT / "dashboard").rglob("*.py")]
    assert len(outside) > 20
    assert {str(p.relative_to(ROOT)): lines for p in outside if (lines := store_reaches(p))} == {}


def test_the_store_check_sees_both_ways_of_reaching_in(tmp_path: Path) -> None:
    code = tmp_path / "x.py"
    code.write_text("a = engram.store.job_runs\nb = getattr(engram, 'store')\nc = engram.stored\n")
    assert store_reaches(code) == [1, 2]
