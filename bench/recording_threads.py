#!/usr/bin/env python
"""Where recording's time goes, by thread and statement: `bench/recording_threads.py [--store DB]`.

64 chats each await their previous message's acknowledgement (perf.py's ``record_64_producers``),
into a fresh store and, with ``--store``, into a copy of that store (e.g. perf.py's million,
``DIR/1000000-spread.db``; the copy is deleted after). Printed for each: episodes/s, the batches'
sizes, the CPU of the event loop's thread and of the others (from /proc: the writer's thread is the
busiest of them), and the writer thread's CPU per episode for each deferred statement and the
COMMIT (the store's ``transactions._finish`` timed statement by statement). Linux only (/proc).

``--frames``: what each commit writes into the write-ahead log, by b-tree: 1,280 episodes by the 64
chats into another copy with the background copy of the log switched off, then each log frame's page
named by SQLite's ``dbstat`` (the frames of the biggest tables are counted together, unnamed: walking
them takes minutes at a million).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sqlite3
import struct
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench helpers (bench/ is not a package)

from _perf_corpus import items  # noqa: E402
from perf import RandomEmbedder  # noqa: E402

from astrbot_plugin_engram.memory import Engram, Episode  # noqa: E402
from astrbot_plugin_engram.memory.store.sqlite import log_copier, transactions  # noqa: E402
from astrbot_plugin_engram.memory.store.sqlite.codec import insert_rows  # noqa: E402

PRODUCERS = 64


def thread_cpu() -> dict[int, float]:
    """CPU seconds of each thread of this process, by thread id."""
    out = {}
    tick = os.sysconf("SC_CLK_TCK")
    for tid in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{tid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        out[int(tid)] = (int(fields[11]) + int(fields[12])) / tick
    return out


async def measure(path: Path, n: int) -> dict[str, Any]:
    spent: dict[str, float] = {}
    sizes: list[int] = []
    finish = transactions._finish

    def timed_finish(conn: Any, deferred: Any, guessed: int | None = None) -> int:  # the writer's thread
        if guessed is not None:  # recording's shortcut: the transaction begins in this trip
            t = time.thread_time()
            transactions._open(conn, guessed)
            spent["BEGIN"] = spent.get("BEGIN", 0.0) + time.thread_time() - t
        for sql, rows in deferred:
            t = time.thread_time()
            insert_rows(conn, sql, rows)
            key = " ".join(sql.split()[:3])
            spent[key] = spent.get(key, 0.0) + time.thread_time() - t
            if key.startswith("INSERT INTO episodes("):
                sizes.append(len(rows))
        t = time.thread_time()
        stamp = finish(conn, [])  # the count's read and COMMIT
        spent["COMMIT"] = spent.get("COMMIT", 0.0) + time.thread_time() - t
        return stamp

    eps = [e for e in items(n + 10, seed=5) if isinstance(e, Episode)][: n + 1]
    eng = await Engram.open(path, RandomEmbedder(), background=False, folder=path.parent)
    transactions._finish = timed_finish  # type: ignore[assignment]  # the same signature, timed
    try:
        await eng.record(eps[0])  # the segmenter loaded, the file opened
        spent.clear()
        sizes.clear()

        chunk = eps[1:]
        before, t = thread_cpu(), time.perf_counter()
        await asyncio.gather(*(produce(eng, chunk[i::PRODUCERS]) for i in range(PRODUCERS)))
        wall, after = time.perf_counter() - t, thread_cpu()
    finally:
        transactions._finish = finish  # type: ignore[assignment]
        await eng.close()
    me = os.getpid()
    others = sorted((after[k] - before.get(k, 0.0) for k in after if k != me), reverse=True)
    ranked = sorted(spent.items(), key=lambda kv: -kv[1])
    return {"per_s": len(chunk) / wall, "wall_s": wall, "batch_mean": sum(sizes) / len(sizes),
            "loop_cpu_s": after[me] - before[me], "writer_cpu_s": others[0] if others else 0.0,
            "other_cpu_s": sum(others[1:]),
            "statements_us": {k: v / len(chunk) * 1e6 for k, v in ranked}}


BIG = ("episodes", "episodes_fts_content", "episodes_fts_docsize", "vectors", "vector_codes", "memories")


async def frames(path: Path, n: int = 1280) -> tuple[int, Counter[str]]:
    """(commits, log frames by b-tree) of ``n`` episodes recorded by the 64 chats into ``path``: the
    background copy of the log off, and few enough that the writer's own copy (``SAFETY_NET`` pages)
    does not start the log over."""
    copy_log = log_copier.LogCopier._checkpoint
    log_copier.LogCopier._checkpoint = lambda self: None  # type: ignore[method-assign]
    eps = [e for e in items(n + 10, seed=5) if isinstance(e, Episode)][: n + 1]
    eng = await Engram.open(path, RandomEmbedder(), background=False, folder=path.parent)
    try:
        await eng.record(eps[0])
        wal = Path(f"{path}-wal")
        start = len(await asyncio.to_thread(wal.read_bytes))  # the frames from here on: the 64 chats'
        await asyncio.gather(*(produce(eng, eps[1 + i :: PRODUCERS]) for i in range(PRODUCERS)))
        log = await asyncio.to_thread(wal.read_bytes)
    finally:
        await eng.close()
        log_copier.LogCopier._checkpoint = copy_log  # type: ignore[method-assign]
    size = struct.unpack(">I", log[8:12])[0]
    pages, commits, at = [], 0, max(32, start)
    while at + 24 + size <= len(log):
        page, commit = struct.unpack(">II", log[at : at + 8])
        pages.append(page)
        commits += commit != 0
        at += 24 + size
    owner = {}
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'index')")]
        for name in names:
            if name not in BIG and not name.startswith("sqlite_stat"):
                pages_of = db.execute("SELECT pageno FROM dbstat WHERE name = ?", (name,))
                owner.update({p: name for (p,) in pages_of})
    return commits, Counter(owner.get(p, "(the big tables: rows, keyword text, vectors)") for p in pages)


async def produce(eng: Engram, mine: list[Episode]) -> None:
    for e in mine:
        await eng.record(e)


def show(name: str, r: dict[str, Any]) -> None:
    print(f"{name}: {r['per_s']:,.0f} episodes/s, wall {r['wall_s']:.2f} s, "
          f"batches of {r['batch_mean']:.1f}; CPU of the event loop's thread {r['loop_cpu_s']:.2f} s, "
          f"of the busiest other (the writer's) {r['writer_cpu_s']:.2f} s, "
          f"of the rest {r['other_cpu_s']:.2f} s")
    for k, v in r["statements_us"].items():
        print(f"    {v:6.1f} µs an episode  {k}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--store", type=Path, help="also record into a copy of this store file")
    ap.add_argument("--records", type=int, default=15_000, help="episodes recorded into each store")
    ap.add_argument("--rounds", type=int, default=1,
                    help="windows of --records recorded one after another into the same copy (a longer"
                         " run: FTS5's merge cycle evens out), each printed, then the rate over all")
    ap.add_argument("--frames", action="store_true",
                    help="with --store: also the log frames a commit writes, by b-tree (see above)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="engram-rec-") as tmp:
        show("a fresh store", asyncio.run(measure(Path(tmp) / "fresh.db", a.records)))
        if a.store:
            copy = a.store.parent / f"{a.store.stem}-threads.db"
            shutil.copy(a.store, copy)
            os.sync()  # the copy's gigabytes written back now, not during the timing
            try:
                wall = 0.0
                for r in range(a.rounds):
                    got = asyncio.run(measure(copy, a.records))
                    wall += got["wall_s"]
                    show(f"a copy of {a.store.name}" + (f", window {r + 1}" if a.rounds > 1 else ""), got)
                if a.rounds > 1:
                    print(f"over all {a.rounds} windows: {a.rounds * a.records / wall:,.0f} episodes/s")
                if a.frames:
                    shutil.copy(a.store, copy)
                    commits, by_tree = asyncio.run(frames(copy))
                    print(f"log frames a commit, {commits} commits of 64 chats' lines into a copy:"
                          f" {sum(by_tree.values()) / commits:.0f} in all")
                    for tree, count in by_tree.most_common():
                        print(f"    {count / commits:6.1f}  {tree}")
            finally:
                for tail in ("", "-wal", "-shm", "-clean"):
                    Path(f"{copy}{tail}").unlink(missing_ok=True)


if __name__ == "__main__":
    main()
