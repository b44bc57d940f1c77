"""Person names found in short chat lines: precision and recall of the name guesser, per language
and per kind of case, for this tree and for another git ref (``main`` by default).

    .venv/bin/python bench/names.py                 # this tree against main
    .venv/bin/python bench/names.py --ref HEAD~3    # against another commit
    .venv/bin/python bench/names.py --misses        # also list each line's misses and false names
    .venv/bin/python bench/names.py --data bench/data/names-heldout.json   # lines written after the rules
    .venv/bin/python bench/names.py --corpus [FILE] # unlabelled chats (MemoryBank's Chinese by default)

The set (``bench/data/names.json``) is hand-written: each line with the names it holds. The guesser
is what the leak check runs on a private line on its own (``person_names.guess_names``: ``@``-mentions,
English names, Chinese names by jieba's tagger), without the store's known names or the other
lines, so it measures the guessing alone. The other ref is read from ``git archive`` into a
temporary folder and imported from there.
"""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench" / "data" / "names.json"
Guess = Callable[[list[str]], list[set[str]]]


def guesser(pkg: str) -> Guess:
    """The package's guesser: ``person_names.guess_names`` where it exists, else its parts."""
    pn: ModuleType = importlib.import_module(f"{pkg}.memory.text.person_names")
    if hasattr(pn, "guess_names"):
        return pn.guess_names  # type: ignore[no-any-return]
    zh = importlib.import_module(f"{pkg}.memory.text.chinese_names")
    return lambda texts: [pn.mentions(t) | pn.english_names(t) | zh.chinese_names(t) for t in texts]


def archived(ref: str, into: Path) -> str:
    """``ref``'s tree as an importable package under ``into``; its name."""
    name = "engram_" + "".join(c if c.isalnum() else "_" for c in ref)
    (into / name).mkdir()
    tar = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "memory"], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into / name)], input=tar.stdout, check=True)
    (into / name / "__init__.py").write_text("")
    sys.path.insert(0, str(into))
    return name


def score(rows: list[dict], found: list[set[str]]) -> dict[str, list[int]]:
    """Per group (all, each language, each kind): [true names found, false names, names missed,
    lines with a false name]."""
    out: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0, 0, 0]))
    for row, got in zip(rows, found):
        gold = set(row["names"])
        counts = [len(got & gold), len(got - gold), len(gold - got), int(bool(got - gold))]
        for key in ("all", f"lang:{row['lang']}", f"kind:{row['kind']}"):
            out["x"][key] = [a + b for a, b in zip(out["x"][key], counts)]
    return out["x"]


def pr(c: list[int]) -> str:
    tp, fp, fn, _ = c
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 1.0
    return f"{p:.2f} / {r:.2f} ({tp}/{tp + fn}, {fp} false)"


def corpus_lines(path: Path) -> list[str]:
    """Every line of a chat set: LoCoMo's shape (``bench/data/memorybank-cn.json``) or MemoryBank's
    own (``memory_bank_en.json``: users, days, query and response)."""
    data = json.loads(path.read_text("utf-8"))
    if isinstance(data, dict):
        return [turn[k] for user in data.values() for day in user["history"].values() for turn in day
                for k in ("query", "response")]
    return [turn["text"] for sample in data for key, turns in sample["conversation"].items()
            if key.startswith("session_") and isinstance(turns, list) for turn in turns]


def corpus(before: list[set[str]], after: list[set[str]], ref: str) -> None:
    """Names per 100 lines on unlabelled chats, and the names only one side finds (to read for false ones)."""
    counts = [Counter(n for names in found for n in names) for found in (before, after)]
    for side, c in zip((ref, "this tree"), counts):
        print(f"{side}: {sum(c.values()) * 100 / len(before):.1f} names per 100 lines, {len(c)} distinct")
    for side, (a, b) in ((f"only {ref}", counts), ("only this tree", counts[::-1])):
        print(f"{side}: " + ", ".join(f"{n} {k}" for n, k in (a - b).most_common(40)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ref", default="main", help="the git ref to compare with (default main)")
    ap.add_argument("--data", type=Path, default=DATA, help="the labelled lines (default names.json)")
    ap.add_argument("--corpus", type=Path, nargs="?", const=ROOT / "bench" / "data" / "memorybank-cn.json",
                    help="unlabelled chats instead: names per 100 lines (default MemoryBank's Chinese)")
    ap.add_argument("--misses", action="store_true", help="list the misses and false names of this tree")
    args = ap.parse_args()
    rows = [] if args.corpus else json.loads(args.data.read_text("utf-8"))
    texts = corpus_lines(args.corpus) if args.corpus else [r["text"] for r in rows]
    with tempfile.TemporaryDirectory() as tmp:
        before = guesser(archived(args.ref, Path(tmp)))(texts)
        after = guesser("astrbot_plugin_engram")(texts)
    if args.corpus:
        corpus(before, after, args.ref)
        return
    old, new = score(rows, before), score(rows, after)
    keys = ["all", *sorted(k for k in new if k[:5] in ("lang:", "kind:"))]
    lines = {k: sum(k in ("all", f"lang:{r['lang']}", f"kind:{r['kind']}") for r in rows) for k in keys}
    print(f"{len(rows)} lines, {sum(len(r['names']) for r in rows)} names; precision / recall "
          f"(names found/names, false names)\n")
    print(f"| group | lines | {args.ref} | this tree |\n|---|---|---|---|")
    for k in keys:
        trap = f"; {old[k][3]} -> {new[k][3]} lines with a false name" if k == "kind:trap" else ""
        print(f"| {k} | {lines[k]} | {pr(old[k])} | {pr(new[k])}{trap} |")
    if args.misses:
        print()
        for row, got in zip(rows, after):
            gold = set(row["names"])
            if got != gold:
                print(f"{row['kind']:16} {row['text']!r}: missed {sorted(gold - got)}, "
                      f"false {sorted(got - gold)}")


if __name__ == "__main__":
    main()
