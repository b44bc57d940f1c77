"""The soul bundle's speed (issue 30): export and import of a store of 100k episodes (and ~5k
memories, some with new versions), each to be under a minute on 2 cores, not counting re-embedding
(vectors are not in a bundle). Also checks that the second export is byte-identical to the first.

    .venv/bin/python bench/bundle.py [--episodes 100000]

The store is built once per size into bench/.cache/ (through ``record_many``, no embedder); the
bundle and the imported store go to a temporary folder.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _perf_corpus import items  # noqa: E402

from astrbot_plugin_engram.memory import Engram, Episode, Memory, NoEmbedder  # noqa: E402
from astrbot_plugin_engram.memory.bundle import export_bundle, import_bundle  # noqa: E402

CACHE = Path(__file__).resolve().parent / ".cache"


async def build(path: Path, episodes: int) -> None:
    e = await Engram.open(path, NoEmbedder(), background=False)
    try:
        eps: list[Episode] = []
        mems: list[Memory] = []
        for it in items(int(episodes / 0.95) + 10):
            if isinstance(it, Episode):
                if len(eps) < episodes:
                    eps.append(it)
            else:
                mems.append(it)
        for i in range(0, len(eps), 5000):
            await e.record_many(eps[i:i + 5000])
        ids = []
        for m in mems:
            ids.append(await e.add_memory(m))
        for mid in ids[::10]:  # a tenth of them with a second version
            await e.update(mid, "updated: " + (await e.get(mid)).text)
    finally:
        await e.close()


def files(folder: Path) -> dict[str, bytes]:
    out = {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    out["manifest.json"] = b"\n".join(x for x in out["manifest.json"].split(b"\n") if b"exported_at" not in x)
    return out


async def main(episodes: int) -> None:
    CACHE.mkdir(exist_ok=True)
    source = CACHE / f"bundle-{episodes}.db"
    if not source.exists():
        t = time.perf_counter()
        await build(source.with_suffix(".tmp.db"), episodes)
        for suffix in ("", "-wal", "-shm"):
            p = Path(str(source.with_suffix(".tmp.db")) + suffix)
            if p.exists():  # noqa: ASYNC240 - a bench, once
                p.rename(str(source) + suffix)  # noqa: ASYNC240
        print(f"(built {source.name} in {time.perf_counter() - t:.0f} s)", file=sys.stderr)
    with tempfile.TemporaryDirectory() as d:
        where = Path(d)
        (where / "a").mkdir()
        (where / "b").mkdir()
        shutil.copy(source, where / "a" / "store.db")
        rows = []
        a = await Engram.open(where / "a" / "store.db", NoEmbedder(), background=False)
        try:
            counts = await a.counts()
            t = time.perf_counter()
            r = await export_bundle(a, where / "one")
            rows.append(("export", time.perf_counter() - t, r.size))
        finally:
            await a.close()
        b = await Engram.open(where / "b" / "store.db", NoEmbedder(), background=False)
        try:
            t = time.perf_counter()
            await import_bundle(b, where / "one")
            rows.append(("import (into an empty store)", time.perf_counter() - t,
                         sum(p.stat().st_size for p in (where / "b").glob("store.db*"))))
            t = time.perf_counter()
            r2 = await export_bundle(b, where / "two")
            rows.append(("export of the imported store", time.perf_counter() - t, r2.size))
            t = time.perf_counter()
            again = await import_bundle(b, where / "one", merge=True)
            rows.append(("import --merge again (nothing new)", time.perf_counter() - t, 0))
            assert again.added["episodes"] == 0
        finally:
            await b.close()
        same = files(where / "one") == files(where / "two")
        (where / "c").mkdir()  # the machine's pace now: the store's own write path, for comparison
        c = await Engram.open(where / "c" / "store.db", NoEmbedder(), background=False)
        try:
            lines = [it for it in items(5300, seed=3) if isinstance(it, Episode)][:5000]
            t = time.perf_counter()
            for i in range(0, len(lines), 1000):
                await c.record_many(lines[i:i + 1000])
            pace = len(lines) / (time.perf_counter() - t)
        finally:
            await c.close()
        db = sqlite3.connect(where / "b" / "store.db")
        n = db.execute("SELECT count(*) FROM episodes").fetchone()[0]
        db.close()
    print(f"store: {counts['episodes']:,} episodes, {counts['memories']:,} memories "
          f"(+{counts['superseded']:,} earlier versions), {counts['spaces']} places; "
          f"{os.cpu_count()} cores, Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}")
    print(f"| {'step':<36} | {'seconds':>7} | {'episodes/s':>10} | {'MB':>6} |")
    print(f"|{'-' * 38}|{'-' * 9}|{'-' * 12}|{'-' * 8}|")
    for name, secs, size in rows:
        print(f"| {name:<36} | {secs:7.1f} | {counts['episodes'] / secs:10,.0f} | {size / 2**20:6.1f} |")
    print(f"the machine's pace meanwhile: record_many (batches of 1,000) {pace:,.0f} episodes/s; load "
          f"{os.getloadavg()[0]:.1f}")
    print(f"second export byte-identical to the first (export time aside): {same}; imported episodes: {n:,}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--episodes", type=int, default=100_000)
    asyncio.run(main(ap.parse_args().episodes))
