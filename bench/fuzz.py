"""Fuzzing every surface: 100,000 generated inputs each, target 0 unhandled.

    .venv/bin/python bench/fuzz.py [--n 100000] [--surface commands ...] [--seed N] [--jobs 2]

Surfaces (``tests/fuzzing.py``): ``/mem`` command lines, messages through the hooks (record, inject,
reply), the model's tools with arguments of every JSON type, the dashboard's routes with any query
parameters, the model's answers to consolidation, merging, the diary and the self-image, and a soul
bundle (a good export with one file changed, its manifest resealed or not, imported or merged).
Unhandled: an exception out of the surface (beyond the typed refusals it documents), a 500, a log
record with a traceback, a store whose integrity check fails (at the end, and for the model-answer
surfaces at each fresh store, every 2,000 inputs), a refused bundle that changed the store. Prints
one table, then each finding with its first input and traceback.

Where the time goes (measured 2026-12-03 at 300-3,000 inputs): not a store or a service per input
(each surface opens one and feeds it every input), nor a store that grows slower (the CPU per input is
the same at 300 and 3,000); it is the real work of each input, 3-10 ms of CPU (the hooks and
consolidation commit lines, merging embeds and compares), hypothesis's own ~1 ms, and on a disk the
fsync of every commit (merging: half its wall time). So the stores live in ``/dev/shm``
(``tests/fuzzing.FAST_TMP``), and ``--jobs`` surfaces run at once, each in a process of its own.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

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
    ap.add_argument("--jobs", type=int, default=2, help="surfaces run at once, each in its own process")
    ap.add_argument("--minutes", type=float, default=None,
                    help="stop feeding a surface this long after it started (the table says how many it got)")
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # a worker: one surface, JSON out
    args = ap.parse_args()
    if args.one:
        print(json.dumps(_run_one(args.surface[0], args.n, args.seed, args.minutes)))
        return
    rows: list[dict[str, Any]] = []
    started = time.monotonic()
    waiting, running = list(args.surface), list[tuple[str, subprocess.Popen[str]]]()
    while waiting or running:
        while waiting and len(running) < max(1, args.jobs):
            name = waiting.pop(0)
            cmd = [sys.executable, __file__, "--one", "--n", str(args.n), "--surface", name]
            if args.minutes is not None:
                cmd += ["--minutes", str(args.minutes)]
            if args.seed is not None:
                cmd += ["--seed", str(args.seed)]
            running.append((name, subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)))
        time.sleep(0.5)
        for name, proc in [r for r in running if r[1].poll() is not None]:
            running.remove((name, proc))
            out = proc.stdout.read() if proc.stdout else ""
            try:
                row = json.loads(out.strip().splitlines()[-1])
            except (ValueError, IndexError):
                row = {"name": name, "tried": 0, "found": {"the worker failed": f"exit {proc.returncode}"},
                       "wall": 0.0, "cpu": 0.0}
            rows.append(row)
            print(f"{name}: {row['tried']} inputs, {len(row['found'])} kinds unhandled, {row['wall']:.0f} s",
                  file=sys.stderr, flush=True)
    took = time.monotonic() - started
    rows.sort(key=lambda r: args.surface.index(r["name"]))
    print(f"{len(rows)} surfaces, {args.jobs} at once: {took:.0f} s in all; load {os.getloadavg()[0]:.1f}",
          file=sys.stderr)
    print("| surface | inputs | unhandled (kinds) | time | CPU per input |\n|---|---|---|---|---|")
    for r in rows:
        short = " (time limit)" if r["tried"] < args.n else ""
        print(f"| {r['name']} | {r['tried']:,}{short} | {len(r['found'])} | {r['wall']:.0f} s | "
              f"{1000 * r['cpu'] / max(1, r['tried']):.1f} ms |")
    for r in rows:
        for kind, detail in r["found"].items():
            print(f"\n## {r['name']}: {kind}\n{detail}")


def _run_one(name: str, n: int, seed: int | None, minutes: float | None) -> dict[str, object]:
    from tests.plugin import conftest  # noqa: F401  # a temporary AstrBot root before AstrBot loads

    logging.getLogger("engram").propagate = False  # the table only (tracebacks are caught, not printed)
    logging.getLogger("aiohttp").setLevel(logging.CRITICAL)  # its access log; a 400 for a too-long URL
    started, cpu = time.monotonic(), time.process_time()
    f = run_surface(SURFACES[name], n, seed=seed, until=None if minutes is None else started + 60 * minutes)
    return {"name": name, "tried": f.tried, "found": f.found, "wall": time.monotonic() - started,
            "cpu": time.process_time() - cpu}


if __name__ == "__main__":
    main()
