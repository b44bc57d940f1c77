"""The layout's rules, checked on the source: SQLite only under memory/store/sqlite/, PostgreSQL only
under memory/store/postgres/ (SQL in the backends alone), memory/ never
imports astrbot or the plugin, imports run one way (main.py -> plugin -> scheduler/dashboard -> memory;
inside the core, facade -> capabilities -> kernel -> recall/index -> store), and the plugin and the
dashboard never reach past Engram into its store."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MEMORY = ROOT / "memory"
SQLITE = MEMORY / "store" / "sqlite"
POSTGRES = MEMORY / "store" / "postgres"
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
        if POSTGRES not in path.parents:  # the other backend speaks SQL too
            assert not [s for s in strings(path) if SQL.search(s)], path


def test_postgresql_is_known_only_under_store_postgres() -> None:
    inside = list(POSTGRES.rglob("*.py"))
    assert any("psycopg" in imported(p) for p in inside)
    for path in MEMORY.rglob("*.py"):
        if POSTGRES not in path.parents:
            assert "psycopg" not in imported(path), path


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


PACKAGE = "astrbot_plugin_engram"
# what each top-level folder may import of this project (besides itself): main.py -> plugin ->
# scheduler/dashboard -> memory
MAY_IMPORT = {"main": {"plugin", "scheduler", "dashboard", "memory"},
              "plugin": {"scheduler", "dashboard", "memory"},
              "scheduler": {"memory"}, "dashboard": {"memory"}, "memory": set()}
FACADE = {"memory.engram", "memory", "memory.__main__"}  # the facade and what offers it
# each takes the kernel
CAPABILITIES = ("memory.consolidation", "memory.metabolism", "memory.self", "memory.bundle", "memory.compose")
USERS = ("memory.cli", "memory.tools")  # the command line and the tools (MCP): users of the facade
BELOW_KERNEL = ("memory.recall", "memory.index", "memory.store", "memory.recording", "memory.text",
                "memory.prompts")


def module_name(path: Path, root: Path = ROOT) -> str:
    """``path``'s dotted name inside the package (``memory.self.diary``; a package by its folder)."""
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_imports(path: Path, root: Path = ROOT) -> set[str]:
    """The modules of this project ``path`` imports, by dotted name (relative imports resolved;
    ``from . import x`` as ``pkg.x``)."""
    here = module_name(path, root).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            bases = [a.name.split(".")[1:] for a in node.names if a.name.split(".")[0] == PACKAGE]
        elif isinstance(node, ast.ImportFrom) and node.level:
            base = package[:len(package) - node.level + 1] + (node.module.split(".") if node.module else [])
            bases = [base] if node.module else [base + [a.name] for a in node.names]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == PACKAGE:
            bases = [node.module.split(".")[1:]] if node.module else []
        else:
            continue
        out |= {".".join(b) for b in bases if b}
    return out


def within(name: str, packages: tuple[str, ...] | set[str]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in packages)


def wrong_way(root: Path = ROOT) -> list[str]:
    """Every import against the direction, as ``importer -> imported``."""
    out = []
    folders = [top for top in MAY_IMPORT if top != "main"]
    for path in [root / "main.py", *(p for top in folders for p in (root / top).rglob("*.py"))]:
        if not path.exists():
            continue
        name = module_name(path, root)
        top = name.split(".")[0]
        for imported in sorted(project_imports(path, root)):
            other = imported.split(".")[0]
            if other in MAY_IMPORT and other != top and other not in MAY_IMPORT[top]:
                out.append(f"{name} -> {imported}")
            elif top != "memory" or other != "memory" or name in FACADE or within(name, USERS):
                continue
            elif within(imported, USERS) or imported == "memory.engram":
                out.append(f"{name} -> {imported}")  # nothing in the core imports the facade back
            elif not within(name, CAPABILITIES) and within(imported, CAPABILITIES):
                out.append(f"{name} -> {imported}")  # the kernel and below never import a capability
            elif within(name, BELOW_KERNEL) and imported == "memory.kernel":
                out.append(f"{name} -> {imported}")
    return out


def test_imports_run_one_way() -> None:
    """main.py -> plugin -> scheduler/dashboard -> memory; in the core, no capability (consolidation/,
    metabolism/, self/, bundle/, compose) and nothing under them imports the facade (engram.py); the
    kernel and what it stands on import no capability; recall, index, store, recording, text and
    prompts not the kernel."""
    assert len(project_imports(MEMORY / "engram.py")) > 10
    assert wrong_way() == []


def test_the_direction_check_sees_a_planted_violation(tmp_path: Path) -> None:
    def write(name: str, *lines: str) -> None:
        (tmp_path / name).write_text("".join(line + "\n" for line in lines))

    for folder in ("memory/self", "memory/store", "plugin", "scheduler", "dashboard"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "__init__.py").write_text("")
    write("main.py", "from .plugin import x")
    write("memory/engram.py", "from .self import diary")
    write("memory/kernel.py", "from .self.diary import write_diary")
    write("memory/self/diary.py", "from ..engram import Engram", "from ..kernel import Kernel")
    write("memory/store/rows.py", "from .. import kernel")
    write("scheduler/jobs.py", "from ..plugin import service",
          "from astrbot_plugin_engram.dashboard import app", "from ..memory import Engram")
    write("dashboard/app.py", "from ..memory.engram import Engram")
    write("plugin/service.py", "from ..dashboard import app", "from ..memory import Engram")
    assert sorted(wrong_way(tmp_path)) == [
        "memory.kernel -> memory.self.diary", "memory.self.diary -> memory.engram",
        "memory.store.rows -> memory.kernel", "scheduler.jobs -> dashboard", "scheduler.jobs -> plugin"]
