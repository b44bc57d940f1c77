"""The plugin must import on Python 3.10 (AstrBot's floor), though the tests run on 3.12.

Checked without a 3.10 interpreter: every source file parses with 3.10's grammar, and none uses a
standard-library name added in 3.11 or later.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted([ROOT / "main.py", *(ROOT / "memory").rglob("*.py"), *(ROOT / "plugin").rglob("*.py"),
                  *(ROOT / "dashboard").rglob("*.py"),
                  *(ROOT / "scheduler").rglob("*.py")])

# (module, attribute) pairs new in 3.11+; a bare module name means the whole module is new.
NEWER = {
    ("asyncio", "TaskGroup"), ("asyncio", "timeout"), ("asyncio", "timeout_at"), ("asyncio", "Runner"),
    ("datetime", "UTC"), ("typing", "Self"), ("typing", "LiteralString"), ("typing", "Never"),
    ("typing", "assert_never"), ("typing", "reveal_type"), ("typing", "override"),
    ("typing", "TypeAliasType"),
    ("enum", "StrEnum"), ("enum", "verify"), ("contextlib", "chdir"), ("itertools", "batched"),
    ("tomllib", ""), ("builtins", "ExceptionGroup"), ("builtins", "BaseExceptionGroup"),
}


def newer_names(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found += [f"{node.module}.{a.name}" for a in node.names if (node.module, a.name) in NEWER]
            if (node.module, "") in NEWER:
                found.append(node.module)
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names if (a.name, "") in NEWER]
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if (node.value.id, node.attr) in NEWER:
                found.append(f"{node.value.id}.{node.attr}")
        elif isinstance(node, ast.Name) and ("builtins", node.id) in NEWER:
            found.append(node.id)
    return found


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_source_parses_as_python_310_and_uses_no_newer_library_names(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path), feature_version=(3, 10))
    assert newer_names(tree) == []


def test_the_check_catches_what_it_looks_for() -> None:
    sample = "import tomllib\nfrom typing import Self\nimport asyncio\nasyncio.TaskGroup()\n"
    assert newer_names(ast.parse(sample)) == ["tomllib", "typing.Self", "asyncio.TaskGroup"]
    with pytest.raises(SyntaxError):
        ast.parse("try:\n    pass\nexcept* ValueError:\n    pass\n", feature_version=(3, 10))
