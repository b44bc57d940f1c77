"""Fuzzing every surface: 100,000 generated inputs each, target 0 unhandled.

    .venv/bin/python bench/fuzz.py [--n 100000] [--surface commands ...] [--seed N]

Surfaces (``tests/fuzzing.py``): ``/mem`` command lines, messages through the hooks (record, inject,
reply), the model's tools with arguments of every JSON type, the dashboard's routes with any query
parameters, and the model's answers to consolidation, merging, the diary and the self-image. Unhandled:
an exception out of the surface (beyond the typed refusals it documents), a 500, a log record with a
traceback, a store whose integrity check fails at the end. Prints one table, then each finding with
its first input and traceback.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

if "ASTRBOT_ROOT" not in os.environ:  # AstrBot makes data/ under its root when first imported
    _ROOT = tempfile.mkdtemp(prefix="engram-bench-fuzz-")
    os.environ["ASTRBOT_ROOT"] = _ROOT
    import atexit

    atexit.register(shutil.rmtree, _ROOT, True)
os.environ.setdefault("ASTRBOT_DISABLE_METRICS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fuzzing import SURFACES, run_surface  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=100_000, help="inputs per surface")
    ap.add_argument("--surface", nargs="*", choices=list(SURFACES), default=list(SURFACES))
    ap.add_argument("--seed", type=int, default=None, help="derandomise (the same inputs each run)")
    args = ap.parse_args()
    from tests.plugin import conftest  # noqa: F401  # a temporary AstrBot root before AstrBot loads

    logging.getLogger("engram").propagate = False  # the table only (tracebacks are caught, not printed)
    logging.getLogger("aiohttp").setLevel(logging.CRITICAL)  # its access log; a 400 for a too-long URL
    rows, details = [], []
    for name in args.surface:
        started = time.monotonic()
        f = run_surface(SURFACES[name], args.n, seed=args.seed)
        took = time.monotonic() - started
        rows.append((name, f.tried, len(f.found), took))
        details += [f"## {name}: {kind}\n{detail}" for kind, detail in f.found.items()]
        print(f"{name}: {f.tried} inputs, {len(f.found)} kinds unhandled, {took:.0f} s", file=sys.stderr,
              flush=True)
    print("| surface | inputs | unhandled (kinds) | time | inputs/s |\n|---|---|---|---|---|")
    for name, tried, found, took in rows:
        print(f"| {name} | {tried:,} | {found} | {took:.0f} s | {tried / took:.0f} |")
    for d in details:
        print(f"\n{d}")


if __name__ == "__main__":
    main()
