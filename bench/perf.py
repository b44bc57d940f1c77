"""Latency, throughput and memory of the core: `bench/perf.py [--sizes 10000,100000] [--json OUT]`.

`--only throughput` runs the recording phase alone (no recall stores are built; with `--store-dir` and
a size from a million, recording into a copy of that store too); `--only recall` skips recording.

For each size a store is built through the public API (episodes with `record_many`, memories with
`add_memory`, 384-dim random unit vectors stored by `embed_pending` through a fake embedder), then
a fresh process opens it and measures recall latency (query embedding excluded: the query vectors
are precomputed) in the largest space, the real LocalE5 query embedding time, and its RSS. A second
store of the same size with everything in one space gives the worst case. Recording throughput is
measured on an empty store: concurrent `record()` calls awaiting their ids (group commit), and
`record_many`, as episodes per second and CPU µs per episode (every thread of the process, the
writer's included). Each phase runs in its own process so RSS and timings do not leak between them.

At a million (sizes from ``SCALE`` on, issue 33) the store holds that many episodes and a tenth as
many memories over 1,000 places, the largest 200k (``_perf_corpus.scale_items``); it is built
streaming (episodes by ``record_many``, memories by ``commit_memories`` a thousand at a time, the
vectors embedded a thousand a batch), the everything-in-one-place store is not built, and the
plugin's query is also timed in the typical place (that of the median episode, ~16k episodes):
``typical`` in the JSON, and recording is timed again into a copy of the million
(``throughput_1000000``). ``--store-dir DIR`` keeps the stores there and reuses one already built
(its build figures in ``DIR/<size>-<layout>.json``): building a million takes tens of minutes.

``--db postgresql://user@host/db`` (issue 33) builds each size's spread store in PostgreSQL too, in a
database of its own made on that server (``engram_perf_<size>``, dropped first), and measures it beside
the SQLite one in the same run: recall (wall, and CPU as the client's plus the server backend's that
answered its reads, from /proc when the server is on this machine) and recording, with the ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench helpers (bench/ is not a package)

from _perf_corpus import conversation_windows, dialogue_queries, items, queries, scale_items  # noqa: E402

from astrbot_plugin_engram.memory import (  # noqa: E402
    Audience,
    Engram,
    Episode,
    LocalE5,
    Memory,
    RecallSettings,
)
from astrbot_plugin_engram.memory.compose import pool_depth, recall_query  # noqa: E402
from astrbot_plugin_engram.plugin.config import Settings  # noqa: E402

DIM = 384
MODEL = "bench/random-384"
WORST_SPACE = "qq:group:everyone"
SCALE = 1_000_000  # from this size on: the million's layout (scale_items)


class RandomEmbedder:
    """Random unit vectors: the latency of the index does not depend on what the vectors mean."""

    name = MODEL
    asymmetric = True  # items get a second vector too, as with the bundled model (as_query_model)

    def __init__(self, table: dict[str, np.ndarray] | None = None, seed: int = 0):
        self.rng = np.random.default_rng(seed)
        self.table = table or {}

    async def embed(self, texts: list[str], kind: str = "passage") -> np.ndarray:
        if kind == "query" and all(t in self.table for t in texts):
            return np.stack([self.table[t] for t in texts])
        v = self.rng.standard_normal((len(texts), DIM)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)


def rss_mb() -> float:
    import psutil  # dev-only (comes with astrbot); the core never needs it

    return float(psutil.Process().memory_info().rss / 2**20)


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# ---- workers (each runs in its own process) ------------------------------------------------------
def is_url(path: object) -> bool:
    return str(path).startswith(("postgresql://", "postgres://"))


def folder_of(path: object) -> Path:
    """The data folder beside a store (a PostgreSQL one: a temporary folder, nothing is kept there)."""
    return Path(tempfile.gettempdir()) if is_url(path) else Path(str(path)).parent


def fresh_database(server: str, name: str) -> str:
    """The URL of an empty database ``name`` on the server of ``server`` (dropped and made again)."""
    import psycopg

    with psycopg.connect(server, autocommit=True) as db:
        db.execute(f"DROP DATABASE IF EXISTS {name}")  # type: ignore[arg-type]
        db.execute(f"CREATE DATABASE {name} TEMPLATE template0")  # type: ignore[arg-type]
    head, _, _ = server.rpartition("/")
    return f"{head}/{name}"


def server_cpu_s(eng: Engram) -> float:
    """CPU seconds the PostgreSQL backend of the store's reader has used (0 when it is not readable here)."""
    pid = getattr(getattr(getattr(eng.store, "_reader", None), "conn", None), "info", None)
    try:
        fields = Path(f"/proc/{pid.backend_pid}/stat").read_text().rsplit(")", 1)[1].split()  # type: ignore[union-attr]
    except (OSError, AttributeError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def build(path: str, n: int, one_place: bool) -> dict[str, Any]:
    """Fill a store with ``n`` items; returns the time taken and the largest space."""
    if n >= SCALE:
        return await build_scale(path, n)
    eng = await Engram.open(path, RandomEmbedder(), background=False, folder=folder_of(path))
    eps: list[Episode] = []
    mems: list[Memory] = []
    for it in items(n, WORST_SPACE if one_place else None):
        (eps if isinstance(it, Episode) else mems).append(it)
    t0 = time.perf_counter()
    for i in range(0, len(eps), 5000):
        await eng.record_many(eps[i : i + 5000])
    t1 = time.perf_counter()
    for m in mems:
        await eng.add_memory(m)
    t2 = time.perf_counter()
    await eng.embed_pending()
    t3 = time.perf_counter()
    await eng.close()
    if is_url(path):
        import psycopg

        with psycopg.connect(path) as db:
            file_mb = db.execute("SELECT pg_database_size(current_database())").fetchone()[0] / 2**20  # type: ignore[index]
            second_bytes = db.execute("SELECT coalesce(sum(length(vec)), 0) FROM vectors WHERE model LIKE %s",
                                      ("%#as-query",)).fetchone()[0]  # type: ignore[index]
    else:
        second = sqlite3.connect(path)  # what the second vectors (cos_qq) take in the file
        second_bytes = second.execute("SELECT coalesce(sum(length(vec)), 0) FROM vectors WHERE model LIKE ?",
                                      ("%#as-query",)).fetchone()[0]
        second.close()
        file_mb = Path(path).stat().st_size / 2**20  # noqa: ASYNC240 (a bench worker, after the store closed)
    places = Counter(e.place for e in eps)
    largest, count = places.most_common(1)[0]
    return {"episodes": len(eps), "memories": len(mems), "spaces": len(places),
            "largest_space": largest, "largest_count": count, "record_many_s": t1 - t0,
            "add_memory_s": t2 - t1, "embed_pending_s": t3 - t2, "file_mb": file_mb,
            "second_vectors_mb": second_bytes / 2**20}


async def build_scale(path: str, n: int) -> dict[str, Any]:
    """Fill a store with ``n`` episodes and ~n/10 memories over 1,000 places, streaming."""
    from astrbot_plugin_engram.memory.index import indexer as indexing

    indexing.EMBED_BATCH = 1000  # the same vectors, in fewer transactions (random: nothing to batch for)
    eng = await Engram.open(path, RandomEmbedder(), background=False)
    places: Counter[str] = Counter()
    eps: list[Episode] = []
    mems: list[tuple[Memory, int | None]] = []
    spent = {"record_many_s": 0.0, "add_memory_s": 0.0}
    memories = 0

    async def flush(final: bool = False) -> None:
        nonlocal eps, mems
        if len(eps) >= 5000 or final and eps:
            t = time.perf_counter()
            await eng.record_many(eps)
            spent["record_many_s"] += time.perf_counter() - t
            eps = []
        if len(mems) >= 1000 or final and mems:
            t = time.perf_counter()
            await eng.commit_memories(mems, {})
            spent["add_memory_s"] += time.perf_counter() - t
            mems = []

    for it in scale_items(n):
        if isinstance(it, Episode):
            eps.append(it)
            places[it.place] += 1
        else:
            mems.append((it, None))
            memories += 1
        await flush()
    await flush(final=True)
    t = time.perf_counter()
    await eng.embed_pending()
    spent["embed_pending_s"] = time.perf_counter() - t
    await eng.close()
    second = sqlite3.connect(path)
    second_bytes = second.execute("SELECT coalesce(sum(length(vec)), 0) FROM vectors WHERE model LIKE ?",
                                  ("%#as-query",)).fetchone()[0]
    second.close()
    ranked = places.most_common()
    half, typical = sum(places.values()) / 2, ranked[0]
    for place, count in ranked:  # the place of the median episode
        half -= count
        if half <= 0:
            typical = (place, count)
            break
    return {"episodes": sum(places.values()), "memories": memories, "spaces": len(places),
            "largest_space": ranked[0][0], "largest_count": ranked[0][1], "typical_space": typical[0],
            "typical_count": typical[1], **spent,
            "file_mb": Path(path).stat().st_size / 2**20,  # noqa: ASYNC240 (closed)
            "second_vectors_mb": second_bytes / 2**20}


PLUGIN_K = pool_depth(Settings().recall_k, 40)  # what the plugin asks for in a conversation under way


def plugin_queries(n: int) -> list[str]:
    """The plugin's recall queries: the latest message and four earlier turns, built by its own function."""
    return [recall_query(q, turns) for q, turns in conversation_windows(n)]


class BackgroundPassages:
    """The bundled model embedding passage batches on another thread, as a live bot's indexer does."""

    def __init__(self) -> None:
        self.e5 = LocalE5()
        self.batch = queries(32, seed=3)
        self.stop = threading.Event()
        self.batches = 0
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.stop.is_set():
            self.e5.embed_sync(self.batch, "passage")
            self.batches += 1

    def __enter__(self) -> BackgroundPassages:
        self.e5.embed_sync(["warm up"], "passage")
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()


async def timed_recalls(eng: Engram, qs: list[str], aud: Audience,
                        k: int) -> tuple[list[float], list[float], int]:
    """Wall and CPU milliseconds of each recall, and how many hits came back in all."""
    lat, cpu, hits = [], [], 0
    for q in qs:
        t, c = time.perf_counter(), time.process_time()
        hits += len(await eng.recall(q, aud, k=k))
        lat.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c) * 1000)  # all threads: shows the cost on a busy machine
    return lat, cpu, hits


async def query(path: str, place: str, nq: int, shape: str = "question") -> dict[str, Any]:
    """Recall latency over ``nq`` questions in ``space`` with k = 10 (``shape`` "plugin": the plugin's
    queries, a message with the turns before it), the plugin's queries with its k (also beside a
    background passage batch), LocalE5 query time, and RSS."""
    qs = dialogue_queries(nq) if shape == "plugin" else queries(nq)
    pqs = plugin_queries(nq)
    rng = np.random.default_rng(1)
    table = {q: v / np.linalg.norm(v)
             for q in qs + pqs for v in [rng.standard_normal(DIM).astype(np.float32)]}
    t0, c0 = time.perf_counter(), time.process_time()
    eng = await Engram.open(path, RandomEmbedder(table), background=False, folder=folder_of(path))
    open_s, open_cpu_s = time.perf_counter() - t0, time.process_time() - c0
    aud = Audience(place=place)
    await eng.recall(pqs[0], aud, k=PLUGIN_K)  # the first answered: the plugin's query, as a bot's first
    first_recall_s, first_recall_cpu_s = time.perf_counter() - t0, time.process_time() - c0
    # a big place's inverted file is made beside the loop after its first search (the place scanned
    # whole meanwhile): the latencies below are those of the settled index
    settle = getattr(eng.index, "wait_built", None)  # None: an earlier Engram's (bench/ab.py), made at once
    if settle is not None:
        settle()
    built_s = time.perf_counter() - t0
    for q in qs[:20]:  # warm the page cache and jieba
        await eng.recall(q, aud)
    lat, cpu, hits = await timed_recalls(eng, qs, aud, 10)
    for q in pqs[:20]:
        await eng.recall(q, aud, k=PLUGIN_K)
    served = server_cpu_s(eng)
    plat, pcpu, phits = await timed_recalls(eng, pqs, aud, PLUGIN_K)
    server_ms = (server_cpu_s(eng) - served) * 1000 / len(pqs)  # PostgreSQL's share (0: SQLite, in-process)
    with BackgroundPassages() as busy:
        blat, _, _ = await timed_recalls(eng, pqs, aud, PLUGIN_K)
    # the second vectors' read (cos_qq) against none, taking turns in this process: what it costs
    second, with_qq, without_qq = eng.indexes.second, [], []
    for _ in range(2):
        with_qq += (await timed_recalls(eng, pqs, aud, PLUGIN_K))[0]
        eng.indexes.second = None
        without_qq += (await timed_recalls(eng, pqs, aud, PLUGIN_K))[0]
        eng.indexes.second = second
    plugin = {"recall_plugin_p50_ms": _pct(plat, 50), "recall_plugin_p99_ms": _pct(plat, 99),
              "recall_plugin_cpu_p50_ms": _pct(pcpu, 50), "recall_plugin_cpu_p99_ms": _pct(pcpu, 99),
              "recall_plugin_cpu_mean_ms": statistics.fmean(pcpu),
              "recall_plugin_server_cpu_mean_ms": server_ms,
              "recall_plugin_busy_p50_ms": _pct(blat, 50), "recall_plugin_busy_p99_ms": _pct(blat, 99),
              "plugin_k": PLUGIN_K, "plugin_hits_per_recall": phits / len(pqs),
              "plugin_query_words": statistics.fmean(len(q.split()) for q in pqs),
              "busy_passage_batches": busy.batches, "second_vectors": second is not None,
              "plugin_with_qq_p50_ms": _pct(with_qq, 50), "plugin_without_qq_p50_ms": _pct(without_qq, 50),
              "plugin_with_qq_p99_ms": _pct(with_qq, 99), "plugin_without_qq_p99_ms": _pct(without_qq, 99)}
    e5 = LocalE5()
    e5.embed_sync(["warm up"], "query")
    emb = []
    for q in qs[:100]:
        t = time.perf_counter()
        e5.embed_sync([q], "query")
        emb.append((time.perf_counter() - t) * 1000)
    out = {"recall_p50_ms": _pct(lat, 50), "recall_p99_ms": _pct(lat, 99), "recall_mean_ms":
           statistics.fmean(lat), "recall_cpu_p50_ms": _pct(cpu, 50), "recall_cpu_p99_ms": _pct(cpu, 99),
           "loadavg": os.getloadavg()[0], "embed_query_ms": _pct(emb, 50), "rss_mb": rss_mb(),
           "peak_rss_mb": peak_rss_mb(), "open_s": open_s, "open_cpu_s": open_cpu_s,
           "first_recall_s": first_recall_s, "first_recall_cpu_s": first_recall_cpu_s, "built_s": built_s,
           "queries": len(qs),
           "hits_per_recall": hits / len(qs), "indexed": len(eng.index or ()), **plugin}
    await eng.close()
    return out


async def throughput(path: str, n: int, durable: bool) -> dict[str, Any]:
    """Episodes per second, durably acknowledged, through record() and record_many(); CPU µs each."""
    eps = [e for e in items(3 * n, seed=5) if isinstance(e, Episode)][: 3 * n]
    eng = await Engram.open(path, RandomEmbedder(), background=False, durable=durable, folder=folder_of(path))
    await eng.record(eps[0])  # opens the file, loads the segmenter
    out: dict[str, Any] = {}

    async def timed(key: str, count: int, work: Any) -> None:
        t, c = time.perf_counter(), time.process_time()  # CPU of every thread: the writer's too
        await work
        out[f"{key}_per_s"] = count / (time.perf_counter() - t)
        out[f"{key}_cpu_us"] = (time.process_time() - c) / count * 1e6

    await timed("record_gather", n - 1, asyncio.gather(*(eng.record(e) for e in eps[1:n])))
    chunk = eps[n : 2 * n]
    producers = 64  # e.g. 64 busy chats, each awaiting its ack before the next message

    async def produce(mine: list[Episode]) -> None:
        for e in mine:
            await eng.record(e)

    await timed("record_64_producers", len(chunk),
                asyncio.gather(*(produce(chunk[i::producers]) for i in range(producers))))

    async def batches() -> None:
        for i in range(2 * n, 3 * n, 1000):
            await eng.record_many(eps[i : i + 1000])

    await timed("record_many", n, batches())
    await eng.close()
    return out


def _pct(xs: list[float], p: float) -> float:
    return float(np.percentile(np.asarray(xs), p))


def _worker(argv: list[str]) -> None:
    kind, *rest = argv
    if kind == "build":
        res = asyncio.run(build(rest[0], int(rest[1]), rest[2] == "1"))
    elif kind == "query":
        res = asyncio.run(query(rest[0], rest[1], int(rest[2]), *rest[3:4]))
    else:
        res = asyncio.run(throughput(rest[0], int(rest[1]), rest[2] == "1"))
    print(json.dumps(res))


def run(*args: object) -> dict[str, Any]:
    """Run one worker in a fresh process; its last stdout line is its JSON result."""
    out = subprocess.run([sys.executable, __file__, "--_worker", *map(str, args)],
                         check=True, capture_output=True, text=True)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


# ---- the command -----------------------------------------------------------------------------
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="10000,100000", help="store sizes, comma-separated")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--queries", type=int, default=300, help="recalls timed per store")
    ap.add_argument("--records", type=int, default=20000, help="episodes per throughput mode")
    ap.add_argument("--no-worst", action="store_true", help="skip the everything-in-one-space stores")
    ap.add_argument("--only", choices=("throughput", "recall"),
                    help="run only this phase: throughput (no recall stores; with --store-dir and a size from"
                         " a million, recording into a copy of that store too) or recall (no recording)")
    ap.add_argument("--store-dir", help="build the stores here and reuse those already built (kept)")
    ap.add_argument("--db", help="also measure PostgreSQL: a server's URL (postgresql://user@host/db); "
                    "a database per size is made on it")
    ap.add_argument("--_worker", nargs="+", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a._worker:
        return _worker(a._worker)
    sizes = [int(s) for s in a.sizes.split(",") if s.strip()]
    scaled = [n for n in sizes if n >= SCALE and (a.only != "throughput" or a.store_dir)]
    if a.only == "throughput":
        sizes = []
    res: dict[str, Any] = {"machine": _machine(), "settings": vars(RecallSettings()), "sizes": {},
                           "worst_case": {}, "typical": {}, "build": {}}
    with tempfile.TemporaryDirectory(prefix="engram-perf-") as tmp:
        for n in sizes:
            for worst in (False,) if a.no_worst or n >= SCALE else (False, True):
                name = f"{n}-{'one' if worst else 'spread'}"
                b = built(a.store_dir or tmp, name, n, worst)
                path = f"{a.store_dir or tmp}/{name}.db"
                q = run("query", path, b["largest_space"], a.queries)
                (res["worst_case"] if worst else res["sizes"])[str(n)] = q
                res["build"][name] = b
                _row(n, "one space" if worst else f"largest of {b['spaces']}", b, q)
                if "typical_space" in b:
                    res["typical"][str(n)] = t = run("query", path, b["typical_space"], a.queries)
                    _row(n, "typical place", {**b, "largest_count": b["typical_count"]}, t)
        if a.only != "recall":
            res["throughput"] = run("throughput", f"{tmp}/tp.db", a.records, 0)
            res["throughput_durable"] = run("throughput", f"{tmp}/tpd.db", a.records, 1)
        if a.db:
            res["postgres"] = beside_sqlite(a.db, sizes, res, a.queries, a.records)
        for n in scaled if a.only != "recall" else ():  # recording into the million itself (a copy of it)
            if a.only == "throughput":
                built(a.store_dir, f"{n}-spread", n, False)
            copy = Path(a.store_dir or tmp) / f"{n}-recording.db"
            shutil.copy(Path(a.store_dir or tmp) / f"{n}-spread.db", copy)
            os.sync()  # the copy's gigabytes written back now, not during the timing
            try:
                res[f"throughput_{n}"] = run("throughput", copy, a.records, 0)
            finally:
                for tail in ("", "-wal", "-shm", "-clean"):
                    Path(f"{copy}{tail}").unlink(missing_ok=True)
    if "throughput" in res:
        res["episodes_per_s"] = res["throughput"]["record_gather_per_s"]
    _print_throughput(res)
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=2))


def beside_sqlite(server: str, sizes: list[int], res: dict[str, Any], nq: int, records: int
                  ) -> dict[str, Any]:
    """Each size's spread store built and measured in PostgreSQL, and recording into it; printed beside
    SQLite's figures of this run, with the ratios (PostgreSQL / SQLite)."""
    out: dict[str, Any] = {"sizes": {}, "build": {}}
    print("\nPostgreSQL beside SQLite (the plugin's query in the largest place; CPU: client + server)")
    print(f"{'items':>8} {'store':<10} {'p50 ms':>7} {'p99 ms':>7} {'cpu ms':>7} {'load':>5}")
    for n in (n for n in sizes if n < SCALE):
        url = fresh_database(server, f"engram_perf_{n}")
        b = out["build"][str(n)] = run("build", url, n, 0)
        q = out["sizes"][str(n)] = run("query", url, b["largest_space"], nq)
        s = res["sizes"][str(n)]
        cpu = {k: v["recall_plugin_cpu_mean_ms"] + v["recall_plugin_server_cpu_mean_ms"] for k, v in
               (("sqlite", s), ("postgres", q))}
        for name, v in (("sqlite", s), ("postgres", q)):
            print(f"{n:>8} {name:<10} {v['recall_plugin_p50_ms']:>7.1f} {v['recall_plugin_p99_ms']:>7.1f} "
                  f"{cpu[name]:>7.2f} {v['loadavg']:>5.1f}")
        q["ratio_p50"] = q["recall_plugin_p50_ms"] / s["recall_plugin_p50_ms"]
        q["ratio_p99"] = q["recall_plugin_p99_ms"] / s["recall_plugin_p99_ms"]
        q["ratio_cpu"] = cpu["postgres"] / cpu["sqlite"]
        per_s = n / max(b["record_many_s"], 1e-9)
        print(f"{'':>8} PostgreSQL / SQLite: p50 x{q['ratio_p50']:.2f}, p99 x{q['ratio_p99']:.2f}, CPU "
              f"x{q['ratio_cpu']:.2f}; built in {b['record_many_s']:.0f} s ({per_s:.0f} items/s)")
    out["throughput"] = t = run("throughput", fresh_database(server, "engram_perf_recording"), records, 0)
    print("episodes/s, durably acknowledged, PostgreSQL | SQLite (NORMAL):")
    for k in t:
        print(f"  {k:<32} {t[k]:>8.0f} | {res['throughput'][k]:>8.0f}")
    return out


def built(where: str, name: str, n: int, worst: bool) -> dict[str, Any]:
    """The build figures of the store ``where/name.db``, building it unless a finished one is there."""
    done = Path(where) / f"{name}.json"
    if done.exists():
        return dict(json.loads(done.read_text()))
    for tail in ("", "-wal", "-shm", "-clean"):  # an unfinished build: start over
        Path(f"{where}/{name}.db{tail}").unlink(missing_ok=True)
    b = run("build", f"{where}/{name}.db", n, int(worst))
    done.write_text(json.dumps(b))
    return b


def _machine() -> dict[str, Any]:
    import sqlite3

    return {"python": platform.python_version(), "sqlite": sqlite3.sqlite_version, "cpus": os.cpu_count(),
            "platform": platform.platform(), "loadavg": os.getloadavg()}


def _row(n: int, where: str, b: dict[str, Any], q: dict[str, Any]) -> None:
    if not getattr(_row, "done", False):
        print(f"{'items':>8} {'audience':<18} {'visible eps':>11} {'p50 ms':>7} {'p99 ms':>7} "
              f"{'cpu p50':>7} {'embed q ms':>10} {'RSS MB':>7} {'peak MB':>7} {'open s':>6} {'load':>5}"
              f"  plugin p50/p99 (busy p50/p99)")
        _row.done = True  # type: ignore[attr-defined]
    print(f"{n:>8} {where:<18} {b['largest_count']:>11} {q['recall_p50_ms']:>7.1f} "
          f"{q['recall_p99_ms']:>7.1f} {q['recall_cpu_p50_ms']:>7.1f} {q['embed_query_ms']:>10.1f} "
          f"{q['rss_mb']:>7.0f} {q['peak_rss_mb']:>7.0f} {q['open_s']:>6.1f} "
          f"{q['loadavg']:>5.1f}  {q['recall_plugin_p50_ms']:.1f}/{q['recall_plugin_p99_ms']:.1f} "
          f"({q['recall_plugin_busy_p50_ms']:.1f}/{q['recall_plugin_busy_p99_ms']:.1f})", flush=True)
    print(f"{'':>8} the plugin's query with / without the second vectors (cos_qq), taking turns: p50 "
          f"{q['plugin_with_qq_p50_ms']:.1f} / {q['plugin_without_qq_p50_ms']:.1f} ms, p99 "
          f"{q['plugin_with_qq_p99_ms']:.1f} / {q['plugin_without_qq_p99_ms']:.1f} ms; file "
          f"{b['file_mb']:.0f} MB, of which second vectors {b['second_vectors_mb']:.0f} MB", flush=True)
    print(f"{'':>8} opening {q['open_s']:.1f} s (CPU {q['open_cpu_s']:.1f} s); to the first answered recall "
          f"{q['first_recall_s']:.1f} s (CPU {q['first_recall_cpu_s']:.1f} s), its inverted files made at "
          f"{q['built_s']:.1f} s; the plugin's query CPU "
          "p50 / p99 "
          f"{q['recall_plugin_cpu_p50_ms']:.1f} / {q['recall_plugin_cpu_p99_ms']:.1f} ms", flush=True)


def _print_throughput(res: dict[str, Any]) -> None:
    if "throughput" in res:
        print("\nepisodes/s, durably acknowledged (synchronous=NORMAL | durable=True -> FULL):")
        for k in res["throughput"]:
            print(f"  {k:<32} {res['throughput'][k]:>8.0f} | {res['throughput_durable'][k]:>8.0f}")
    for key in (k for k in res if k.startswith("throughput_") and k != "throughput_durable"):
        print(f"into the {int(key.split('_')[1]):,}-episode store (NORMAL):")
        for k, v in res[key].items():
            print(f"  {k:<32} {v:>8.0f}")


if __name__ == "__main__":
    main()
