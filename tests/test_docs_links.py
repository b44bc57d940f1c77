"""Every relative link in the README and in docs/ points at a file that exists (and, with an anchor,
at a heading that file has), so a reader following one never lands on nothing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def _links(page: Path) -> list[str]:
    text = FENCE.sub("", page.read_text("utf-8"))  # code blocks hold shell and JSON, not links
    return [t for t in LINK.findall(text) if not re.match(r"[a-z]+:", t)]  # http:, mailto: ...


def _anchors(page: Path) -> set[str]:
    """GitHub's anchors: a heading lowercased, punctuation dropped, spaces to hyphens."""
    heads = re.findall(r"^#+\s+(.*)$", FENCE.sub("", page.read_text("utf-8")), re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in heads}


def test_the_docs_are_there() -> None:
    names = {p.name for p in PAGES}
    assert {"README.md", "architecture.md", "configuration.md", "commands.md", "privacy.md",
            "durability.md", "benchmarks.md"} <= names


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for target in _links(page):
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists() or (anchor and dest.suffix == ".md" and anchor not in _anchors(dest)):
            broken.append(target)
    assert not broken, f"{page.relative_to(ROOT)}: links to nothing: {broken}"


CODE_PATH = re.compile(r"`((?:memory|plugin|dashboard|scheduler|bench|tests)/[\w/]+\.(?:py|md|json))`")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_module_a_page_names_exists(page: Path) -> None:
    """A page that names a module by its path (memory/scopes.py) names one that is there: the code
    moves, and a map that points at a file that left misleads the newcomer it was written for."""
    assert [p for p in CODE_PATH.findall(page.read_text("utf-8")) if not (ROOT / p).exists()] == []
