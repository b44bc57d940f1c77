"""Does the store shrink after a forget? A store of N lines in two places, one place forgotten: its
size before and after, made as a new store is (``auto_vacuum=INCREMENTAL``: the erase gives the pages
back) and as an older one was (none: the file keeps its size; the command line's ``vacuum`` rewrites
it once, timed).

    .venv/bin/python bench/vacuum.py [--lines 50000]

Keyword-only (no embedder): the sizes are the lines, their keyword index and the counts beside them.
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from astrbot_plugin_engram.memory import Engram, Episode, NoEmbedder

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
WORDS = "tea cake river mountain bike violin garden window winter summer letter market".split()


def line(i: int, place: str) -> Episode:
    said = " ".join(WORDS[(i * k) % len(WORDS)] for k in (1, 3, 5, 7, 11)) + f" note{i} 今天天气很好"
    return Episode(place=place, content=said, actor=f"qq:{i % 50}", actor_name=f"P{i % 50}",
                   time=T0 + timedelta(seconds=i))


def mb(path: Path) -> float:
    return path.stat().st_size / 2**20


async def build(path: Path, n: int) -> None:
    e = await Engram.open(path, NoEmbedder(), background=False)
    for start in range(0, n, 5000):
        await e.record_many([line(i, f"qq:group:{i % 2}") for i in range(start, min(n, start + 5000))])
    await e.close()


async def forget_half(path: Path) -> float:
    e = await Engram.open(path, NoEmbedder(), background=False)
    start = time.perf_counter()
    await e.forget_place("qq:group:1")
    took = time.perf_counter() - start
    await e.close()
    return took


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=50_000)
    n = ap.parse_args().lines
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        new, old = Path(tmp) / "new.db", Path(tmp) / "old.db"
        await build(new, n)
        full = mb(new)
        took = await forget_half(new)
        rows.append(("new store (incremental)", full, mb(new), took, "-"))
        await build(old, n)
        with sqlite3.connect(old) as db:
            db.execute("PRAGMA auto_vacuum=NONE")
            db.execute("VACUUM")
        full = mb(old)
        took = await forget_half(old)
        kept = mb(old)
        e = await Engram.open(old, NoEmbedder(), background=False)
        start = time.perf_counter()
        await e.store.vacuum()
        vac = time.perf_counter() - start
        await e.close()
        rows.append(("older store, then `vacuum`", full, kept, took, f"{vac:.1f} s -> {mb(old):.1f} MB"))
    print(f"{n} lines in two places; one place ({n // 2} lines) forgotten\n")
    print("| store | MB before | MB after the forget | forget s | vacuum once |")
    print("|---|---|---|---|---|")
    for name, before, after, seconds, vacuumed in rows:
        print(f"| {name} | {before:.1f} | {after:.1f} | {seconds:.1f} | {vacuumed} |")


if __name__ == "__main__":
    asyncio.run(main())
