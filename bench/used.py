#!/usr/bin/env python
"""Calibrating the "used" detector (memory/recall/used.py) on hand-labelled replies, per language:
precision and recall of "this reply used this note" over thresholds, and at the shipped one.

    .venv/bin/python bench/used.py [--data bench/data/used-replies.json]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from astrbot_plugin_engram.memory.recall.used import AT_LEAST, SHARE, overlap

HERE = Path(__file__).resolve().parent


def pr(rows: list[tuple[int, float, bool]], share: float, at_least: int) -> tuple[float, float]:
    said = [(c >= at_least and p >= share, y) for c, p, y in rows]
    tp = sum(s and y for s, y in said)
    return tp / max(1, sum(s for s, _ in said)), tp / max(1, sum(y for _, y in said))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=HERE / "data" / "used-replies.json")
    args = ap.parse_args()
    rows: dict[str, list[tuple[int, float, bool]]] = {}
    for inj in json.loads(args.data.read_text(encoding="utf-8"))["injections"]:
        for i, note in enumerate(inj["notes"]):
            rows.setdefault(inj["lang"], []).append((*overlap(inj["reply"], note), i in inj["used"]))
    print("| language | notes (used) | share | at least | precision | recall |")
    print("|---|---|---|---|---|---|")
    for lang, rs in rows.items():
        for at_least in (1, 2, 3):
            for share in (0.1, 0.15, 0.2, 0.25, 0.3, 0.4):
                p, r = pr(rs, share, at_least)
                mark = " **(shipped)**" if (share, at_least) == (SHARE, AT_LEAST) else ""
                n = f"{len(rs)} ({sum(y for *_, y in rs)})"
                print(f"| {lang} | {n} | {share}{mark} | {at_least} | {p:.2f} | {r:.2f} |")


if __name__ == "__main__":
    main()
