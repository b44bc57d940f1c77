#!/usr/bin/env python
"""Recall latency of this checkout against an earlier commit: `bench/ab.py --base REV [--rounds R]`.

The earlier code (``git archive REV``, whose bench/perf.py must have the ``query`` worker: session 3
on) builds a store with its perf.py ``build``; a copy of the store serves this checkout, which
migrates it on open when its schema is newer. Both then run perf.py's ``query`` phase (300
questions in the largest space) in fresh processes, taking turns, ``--rounds`` times. Both sides
time the same questions on the same data in the same stretch of a shared machine, so the ratio of
their medians holds when the machine's speed swings.

``--recording N`` also times recording the same way: perf.py's ``throughput`` phase (N episodes
each through concurrent ``record()``, 64 producers awaiting their acks, and ``record_many``) on an
empty store, both sides taking turns, ``--rounds`` times. With ``--into STORE`` (and no recall
phase) each side records into a fresh copy of STORE instead: a store the earlier code opens, e.g.
the million its perf.py built (``--sizes 1000000 --store-dir DIR``: ``DIR/1000000-spread.db``);
this checkout migrates its copy when it opens it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def worker(perf: Path, package_root: Path | None, *args: object) -> dict[str, Any]:
    """Run one perf.py worker; ``package_root``: where the earlier code's package is (None: this one)."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if package_root is not None:
        env["PYTHONPATH"] = str(package_root)  # ahead of site-packages, where this checkout is linked
    out = subprocess.run([sys.executable, str(perf), "--_worker", *map(str, args)], env=env,
                         capture_output=True, text=True)
    if out.returncode:
        sys.exit(f"ab: {perf} {args[0]} failed:\n{out.stderr.strip()}")
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def checkout(rev: str, tmp: Path) -> tuple[Path, Path]:
    """The earlier code as a package under ``tmp/base``: (its package root, its bench/perf.py)."""
    root = tmp / "base"
    (root / "astrbot_plugin_engram").mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev], check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(root / "astrbot_plugin_engram")], input=archive.stdout, check=True)
    return root, root / "astrbot_plugin_engram" / "bench" / "perf.py"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", required=True, help="the earlier commit (anything git rev-parse takes)")
    ap.add_argument("--size", type=int, default=100_000, help="items in the store")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--shape", choices=("question", "plugin"), default="question",
                    help="plugin: the plugin's queries (a message and the turns before it); both sides"
                         " then run this checkout's perf.py, the earlier one against its own package")
    ap.add_argument("--recording", type=int, default=0, metavar="N",
                    help="also time recording N episodes per mode, taking turns (0: no)")
    ap.add_argument("--into", type=Path, metavar="STORE",
                    help="with --recording: only recording, each run into a fresh copy of this store")
    a = ap.parse_args()
    rev = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", a.base], check=True,
                         capture_output=True, text=True).stdout.strip()
    if a.into:
        if not a.recording:
            sys.exit("ab: --into goes with --recording N")
        return recording(rev, a.recording, a.rounds, a.into)
    with tempfile.TemporaryDirectory(prefix="engram-ab-") as tmp:
        root, base_perf = checkout(rev, Path(tmp))
        old, new = f"{tmp}/base.db", f"{tmp}/this.db"
        print(f"building a {a.size:,}-item store with {rev} ...", flush=True)
        built = worker(base_perf, root, "build", old, a.size, 0)
        shutil.copy(old, new)  # closed cleanly: the write-ahead log is empty
        place = built["largest_space"]
        rows: dict[str, list[dict[str, Any]]] = {rev: [], "this": []}
        for r in range(a.rounds):
            if a.shape == "plugin":
                rows[rev].append(worker(HERE / "perf.py", root, "query", old, place, a.queries, "plugin"))
                rows["this"].append(worker(HERE / "perf.py", None, "query", new, place, a.queries, "plugin"))
            else:
                rows[rev].append(worker(base_perf, root, "query", old, place, a.queries))
                rows["this"].append(worker(HERE / "perf.py", None, "query", new, place, a.queries))
            print(f"round {r + 1}: {rev} p50 {rows[rev][-1]['recall_p50_ms']:.1f} ms, "
                  f"this p50 {rows['this'][-1]['recall_p50_ms']:.1f} ms", flush=True)
    print(f"\n{a.size:,} items, largest space ({built['largest_count']:,} episodes), {a.queries} "
          f"{'plugin queries' if a.shape == 'plugin' else 'questions'}")
    print("| code | p50 ms, each round | p99 ms, each round | RSS MB |\n|---|---|---|---|")
    for name, runs in rows.items():
        p50 = " / ".join(f"{q['recall_p50_ms']:.1f}" for q in runs)
        p99 = " / ".join(f"{q['recall_p99_ms']:.1f}" for q in runs)
        print(f"| {name} | {p50} | {p99} | {runs[-1]['rss_mb']:.0f} |")
    if all("recall_plugin_p50_ms" in q for runs in rows.values() for q in runs):  # perf.py since session 5
        print("\nthe plugin's query (a message and four turns before it, the plugin's k)")
        print("| code | p50 ms, each round | p99 ms, each round | CPU p50 ms | RSS MB |")
        print("|---|---|---|---|---|")
        for name, runs in rows.items():
            cells = [" / ".join(f"{q[key]:.1f}" for q in runs) for key in
                     ("recall_plugin_p50_ms", "recall_plugin_p99_ms", "recall_plugin_cpu_p50_ms", "rss_mb")]
            print(f"| {name} | " + " | ".join(cells) + " |")
    for key in ("recall_p50_ms", "recall_p99_ms", "recall_cpu_p50_ms", "recall_cpu_p99_ms",
                "recall_plugin_p50_ms", "recall_plugin_p99_ms", "recall_plugin_cpu_p50_ms",
                "recall_plugin_cpu_p99_ms", "rss_mb"):
        if all(key in q for runs in rows.values() for q in runs):  # CPU: perf.py since session 4
            this, base = (statistics.median(q[key] for q in rows[side]) for side in ("this", rev))
            ratio = this / base
            print(f"{key.removeprefix('recall_').removesuffix('_ms')}: this / {rev} = x{ratio:.2f} (medians)")
    if a.recording:
        recording(rev, a.recording, a.rounds)


def recording(rev: str, n: int, rounds: int, into: Path | None = None) -> None:
    """Recording rates of both sides on empty stores (or copies of ``into``), taking turns; the ratio
    of their medians."""
    rows: dict[str, list[dict[str, Any]]] = {rev: [], "this": []}
    with tempfile.TemporaryDirectory(prefix="engram-ab-") as tmp:
        root, base_perf = checkout(rev, Path(tmp))
        for r in range(rounds):
            for side, perf, package in ((rev, base_perf, root), ("this", HERE / "perf.py", None)):
                path = Path(tmp) / f"{side}{r}.db" if into is None else into.with_name(f"ab-{side}.db")
                if into is not None:
                    shutil.copy(into, path)
                    os.sync()  # the copy's gigabytes written back now, not during the timing
                try:
                    rows[side].append(worker(perf, package, "throughput", path, n, 0))
                finally:
                    if into is not None:
                        for tail in ("", "-wal", "-shm", "-clean"):
                            Path(f"{path}{tail}").unlink(missing_ok=True)
            print(f"recording round {r + 1}: {rev} {rows[rev][-1]['record_64_producers_per_s']:,.0f}/s, "
                  f"this {rows['this'][-1]['record_64_producers_per_s']:,.0f}/s (64 chats awaiting acks)",
                  flush=True)
    modes = ("record_gather", "record_64_producers", "record_many")
    where = f"into copies of {into.name}" if into is not None else "into empty stores"
    print(f"\nrecording {n:,} episodes per mode {where}, episodes/s, each round")
    print("| code | " + " | ".join(modes) + " |\n|---|---|---|---|")
    for name, runs in rows.items():
        cells = (" / ".join(f"{q[m + '_per_s']:,.0f}" for q in runs) for m in modes)
        print(f"| {name} | " + " | ".join(cells) + " |")
    for m in modes:
        ratio = (statistics.median(q[m + "_per_s"] for q in rows["this"])
                 / statistics.median(q[m + "_per_s"] for q in rows[rev]))
        print(f"{m}: this / {rev} = x{ratio:.2f} (medians)")
    for m in modes:  # CPU µs an episode (every thread): steadier than the rate on a shared machine
        if all(m + "_cpu_us" in q for runs in rows.values() for q in runs):
            cpu = {side: statistics.median(q[m + "_cpu_us"] for q in rows[side]) for side in rows}
            print(f"{m} CPU µs an episode: {rev} {cpu[rev]:.0f}, this {cpu['this']:.0f}: "
                  f"this / {rev} = x{cpu['this'] / cpu[rev]:.2f} (medians)")


if __name__ == "__main__":
    main()
