"""Metabolism costs: fade() and touch-on-recall at 100k memories; forgetting a person with 10k lines
in a store of 50k, timed, while a reply loop keeps recalling (does the bot keep answering?).

    .venv/bin/python -m bench.metabolism [--memories 100000] [--person-lines 10000] [--lines 50000]

Keyword-only (no embedder), so the numbers are the store's and the core's, not a model's.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from astrbot_plugin_engram.memory import Audience, Engram, Episode, Memory, NoEmbedder, place_scope

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
WORDS = "tea cake river mountain bike violin garden window winter summer letter market".split()


def text(n: int) -> str:
    return " ".join(WORDS[(n * k) % len(WORDS)] for k in (1, 3, 5, 7)) + f" item{n}"


async def fill_memories(e: Engram, n: int) -> None:
    for start in range(0, n, 5000):
        batch = [(Memory(text=text(i), scope=place_scope(f"qq:group:{i % 50}"), created_at=T0,
                         importance=0.9 if i % 10 == 0 else 0.5), None)
                 for i in range(start, min(n, start + 5000))]
        await e.commit_memories(batch, {})


async def bench_fade(folder: Path, n: int) -> dict[str, float]:
    e = await Engram.open(folder / "fade.db", NoEmbedder(), background=False)
    await fill_memories(e, n)
    t = time.perf_counter()
    r1 = await e.fade(T0 + timedelta(days=1))  # nothing weak: one scan
    scan = time.perf_counter() - t
    t = time.perf_counter()
    r2 = await e.fade(T0 + timedelta(days=120))  # 90 % weak (10 % protected): archived
    archive = time.perf_counter() - t
    ids = list(range(1, 11))
    t = time.perf_counter()
    for _ in range(1000):
        e.toucher.touch(ids)  # what the reply path pays
    touch_call = (time.perf_counter() - t) / 1000
    t = time.perf_counter()
    written = await e.toucher.flush()  # the batched write, a moment later, off the reply path
    flush = time.perf_counter() - t
    await e.close()
    assert r1.archived == 0 and r2.archived == n - n // 10 and written == 10
    return {"fade_scan_s": scan, "fade_archive_s": archive, "archived": r2.archived,
            "touch_call_us": touch_call * 1e6, "touch_flush_10_ms": flush * 1e3}


async def bench_forget_person(folder: Path, lines: int, person_lines: int) -> dict[str, float]:
    e = await Engram.open(folder / "forget.db", NoEmbedder(), background=False)
    every = lines // person_lines
    eps = [Episode(place=f"qq:group:{n % 20}", content=text(n),
                   actor="qq:ming" if n % every == 0 else f"qq:p{n % 97}",
                   actor_name="Ming" if n % every == 0 else f"P{n % 97}",
                   time=T0 + timedelta(seconds=n)) for n in range(lines)]
    for start in range(0, lines, 5000):
        await e.record_many(eps[start : start + 5000])
    aud = Audience("qq:group:3")
    base = []
    for _ in range(20):
        t = time.perf_counter()
        await e.recall("tea river bike", aud, k=10)
        base.append(time.perf_counter() - t)
    during: list[float] = []
    done = asyncio.Event()

    async def replies() -> None:  # the reply path: a recall every 50 ms while the forget runs
        while not done.is_set():
            t = time.perf_counter()
            await e.recall("tea river bike", aud, k=10)
            during.append(time.perf_counter() - t)
            await asyncio.sleep(0.05)

    loop = asyncio.create_task(replies())
    t = time.perf_counter()
    gone = await e.forget_person("qq:ming")
    took = time.perf_counter() - t
    done.set()
    await loop
    await e.close()
    return {"forgotten_lines": len(gone.episodes), "forget_s": took, "recalls_during": len(during),
            "recall_ms_median_before": statistics.median(base) * 1e3,
            "recall_ms_median_during": statistics.median(during) * 1e3 if during else float("nan"),
            "recall_ms_max_during": max(during) * 1e3 if during else float("nan")}


async def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--memories", type=int, default=100_000)
    p.add_argument("--lines", type=int, default=50_000)
    p.add_argument("--person-lines", type=int, default=10_000)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as d:
        for k, v in (await bench_fade(Path(d), args.memories)).items():
            print(f"{k}: {v:.3f}" if isinstance(v, float) else f"{k}: {v}")
        for k, v in (await bench_forget_person(Path(d), args.lines, args.person_lines)).items():
            print(f"{k}: {v:.3f}" if isinstance(v, float) else f"{k}: {v}")


if __name__ == "__main__":
    asyncio.run(main())
