"""Load: 500 places, 50 messages a second for 60 s, an injection for one message in five, on a 100k store.

    .venv/bin/python bench/load.py [--rate 50] [--seconds 60] [--places 500] [--size 100000] [--flood 0.4]

The plugin's own service (``plugin/service.py``) takes real AstrBot events: each message is recorded
through its recording queue, every fifth one also gets a memory block injected (``service.inject``,
timed: the reply waits for it), while consolidation runs as the plugin's job runs it (every few seconds
here, the plugin's settings: a place is due at 30 new lines, at most three batches per place per run)
against a scripted model that answers after ``--model-delay`` seconds. One place floods (``--flood``:
its share of all messages); the others share the rest by a Zipf law, so a few dozen of them also become
due. The store is built once (``bench/_perf_corpus.py``, 100k items, 384-dim vectors) and copied for
each run. The query embedding is a fast fake (``tests/conftest.HashEmbedder``, 384 dimensions): the
real model's query time is measured by ``bench/perf.py``; here the store, the queue and the locks are.

Reports: messages and injections per second actually achieved; injection latency p50 / p99 / max;
"database is locked" and any other error in the log (target 0); messages lost (sent, not in the store
after the flush; target 0); RSS every second (bounded: the last 20 s grow no more than the first 20);
and starvation: every place other than the flood that became due was consolidated during the run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import random
import resource
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import Counter
from contextlib import closing
from pathlib import Path
from typing import Any

if "ASTRBOT_ROOT" not in os.environ:  # AstrBot makes data/ under its root when first imported
    _ROOT = tempfile.mkdtemp(prefix="engram-bench-load-")
    os.environ["ASTRBOT_ROOT"] = _ROOT
    import atexit

    atexit.register(shutil.rmtree, _ROOT, True)
os.environ.setdefault("ASTRBOT_DISABLE_METRICS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _perf_corpus import dialogue_queries, items  # noqa: E402

from astrbot_plugin_engram.memory import Engram, Episode, Memory  # noqa: E402
from astrbot_plugin_engram.memory.chat import ChatResult  # noqa: E402
from astrbot_plugin_engram.memory.consolidation import ConsolidationSettings, Consolidator  # noqa: E402
from tests.conftest import HashEmbedder  # noqa: E402
from tests.fake_openai import contract_answer  # noqa: E402

CACHE = Path(__file__).resolve().parent / ".cache"
DIM = 384
CONSOLIDATE_EVERY = 5.0  # seconds between consolidation runs (the plugin: minutes, or 30 new lines)


async def build(path: Path, n: int) -> None:
    """A store of ``n`` items (episodes and memories over 300 skewed places), vectors stored."""
    tmp = path.with_suffix(".building")
    for old in tmp.parent.glob(tmp.name + "*"):
        old.unlink()
    eng = await Engram.open(tmp, HashEmbedder(DIM, "hash-384"), background=False)
    eps: list[Episode] = []
    mems: list[Memory] = []
    for it in items(n):
        (eps if isinstance(it, Episode) else mems).append(it)
    for i in range(0, len(eps), 5000):
        await eng.record_many(eps[i:i + 5000])
    for m in mems:
        await eng.add_memory(m)
    await eng.embed_pending()
    async with eng.store.transaction() as tx:  # consolidated so far, as a store in use all along is:
        for place, _, last, _, _ in await eng.store.episode_backlog({}):  # the load's lines are what is due
            await tx.set_cursor(f"consolidate:{place}", last)
    await eng.close()
    tmp.rename(path)
    for left in tmp.parent.glob(tmp.name + "*"):  # the clean-close marker names the old path
        left.unlink()


class ScriptedModel:
    """The consolidation model: answers after ``delay`` seconds, one memory per four lines."""

    name = "scripted"

    def __init__(self, delay: float):
        self.delay = delay
        self.calls = 0

    async def complete(self, messages: list[Any], *, json: bool = False, timeout: float = 60.0) -> ChatResult:
        self.calls += 1
        await asyncio.sleep(self.delay)
        return ChatResult(contract_answer({"messages": messages}))


class Counting(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.locked = 0
        self.errors: Counter[str] = Counter()

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if "locked" in text.lower():
            self.locked += 1
        if record.levelno >= logging.ERROR:
            self.errors[text[:120]] += 1


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


async def run(path: Path, args: argparse.Namespace) -> dict[str, Any]:
    from astrbot_plugin_engram.plugin.config import Settings
    from astrbot_plugin_engram.plugin.providers import Providers
    from astrbot_plugin_engram.plugin.service import EngramService
    from tests.plugin.conftest import FakeContext, event, request  # AstrBot, under its temporary root

    counting = Counting()
    logging.getLogger().addHandler(counting)
    logging.getLogger("engram").addHandler(counting)
    logging.getLogger("engram").propagate = False
    s = Settings(owner_ids=("owner1",))
    svc = EngramService(s, path.parent, Providers(FakeContext(), s.embedding_provider_id, s.chat_provider_id),
                        embedder=HashEmbedder(DIM, "hash-384"))
    mem = await svc.memory()
    with closing(sqlite3.connect(path)) as db:
        before = db.execute("SELECT count(*) FROM episodes").fetchone()[0]
        top = db.execute("SELECT coalesce(max(id), 0) FROM episodes").fetchone()[0]
    rng = random.Random(5)
    places = [f"{1000 + i}" for i in range(args.places)]  # groups g1000.. (the store's first 60 among them)
    flood = places[0]
    weights = [1 / (i + 1) for i in range(1, len(places))]
    texts = dialogue_queries(2000)
    model = ScriptedModel(args.model_delay)
    settings = ConsolidationSettings(min_new=s.consolidate_after_episodes)
    runs: list[dict[str, int]] = []
    latencies: list[float] = []
    inject_failures = 0
    sent: Counter[str] = Counter()
    rss: list[float] = []
    lags: list[float] = []
    stop = asyncio.Event()

    async def consolidate() -> None:
        while not stop.is_set():
            report = await Consolidator(mem, model, settings).run()
            runs.append({p: sum(c.values()) for p, c in report.places.items()})
            try:
                await asyncio.wait_for(stop.wait(), CONSOLIDATE_EVERY)
            except asyncio.TimeoutError:
                pass

    async def sample() -> None:
        while not stop.is_set():
            rss.append(rss_mb())
            try:
                await asyncio.wait_for(stop.wait(), 1.0)
            except asyncio.TimeoutError:
                pass

    async def lag() -> None:  # how late the event loop wakes a 10 ms sleep: time no reply can run
        while not stop.is_set():
            t = time.perf_counter()
            await asyncio.sleep(0.01)
            lags.append(time.perf_counter() - t - 0.01)

    async def inject(ev: Any, text: str) -> None:
        nonlocal inject_failures
        req = request(text)
        t = time.perf_counter()
        inj = await svc.inject(ev, req)
        latencies.append(time.perf_counter() - t)
        if inj is None:
            inject_failures += 1

    jobs = [asyncio.create_task(consolidate()), asyncio.create_task(sample()), asyncio.create_task(lag())]
    injections: list[asyncio.Task[None]] = []
    loop = asyncio.get_running_loop()
    start = loop.time()
    total = int(args.rate * args.seconds)
    for k in range(total):
        due = start + k / args.rate
        if (wait := due - loop.time()) > 0:
            await asyncio.sleep(wait)
        group = flood if rng.random() < args.flood else rng.choices(places[1:], weights)[0]
        text = f"{texts[k % len(texts)][-300:]} #{k}"
        ev = event(text, f"u{rng.randrange(40)}", group)
        svc.record_message(ev)
        sent[f"qq:group:{group}"] += 1
        if k % 5 == 0:
            injections.append(asyncio.create_task(inject(ev, text)))
    sending = loop.time() - start
    await asyncio.gather(*injections)
    await svc.flush(120)
    took = loop.time() - start
    stop.set()
    await asyncio.gather(*jobs)
    with closing(sqlite3.connect(path)) as db:
        after = db.execute("SELECT count(*) FROM episodes").fetchone()[0]
        got = Counter(dict(db.execute("SELECT space, count(*) FROM episodes WHERE id > ? GROUP BY space",
                                      (top,))))
        cursors = dict(db.execute("SELECT name, value FROM cursors WHERE name LIKE 'consolidate:%'"))
        firsts = dict(db.execute("SELECT space, min(id) FROM episodes WHERE id > ? GROUP BY space", (top,)))
    await svc.close()
    due = [p for p, n in sent.items() if n >= settings.min_new and p != f"qq:group:{flood}"]
    reached = [p for p in due if cursors.get(f"consolidate:{p}", 0) >= firsts.get(p, 1 << 62)]
    lost = sum((sent - got).values())
    quarter = max(1, len(rss) // 3)
    return {
        "messages": total, "send_s": sending, "total_s": took, "msg_per_s": total / sending,
        "injections": len(latencies), "inject_per_s": len(latencies) / sending,
        "p50_ms": 1000 * statistics.median(latencies),
        "p99_ms": 1000 * statistics.quantiles(latencies, n=100, method="inclusive")[98],
        "max_ms": 1000 * max(latencies),
        "lag_p50_ms": 1000 * statistics.median(lags),
        "lag_p99_ms": 1000 * statistics.quantiles(lags, n=100, method="inclusive")[98],
        "inject_failures": inject_failures, "locked": counting.locked, "errors": dict(counting.errors),
        "lost": lost, "stored": after - before,
        "rss_first_mb": rss[0] if rss else 0.0, "rss_peak_mb": max(rss) if rss else 0.0,
        "rss_growth_first_third_mb": (rss[quarter] - rss[0]) if rss else 0.0,
        "rss_growth_last_third_mb": (rss[-1] - rss[-quarter - 1]) if rss else 0.0,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "consolidation_runs": len(runs), "model_calls": model.calls,
        "flood_sent": sent[f"qq:group:{flood}"],
        "flood_consolidated": cursors.get(f"consolidate:qq:group:{flood}", 0) >= firsts.get(
            f"qq:group:{flood}", 1 << 62),
        "flood_batches": sum(r.get(f"qq:group:{flood}", 0) > 0 for r in runs),
        "others_due": len(due), "others_consolidated": len(reached),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rate", type=float, default=50.0, help="messages a second")
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--places", type=int, default=500)
    ap.add_argument("--size", type=int, default=100_000, help="items in the store before the load")
    ap.add_argument("--flood", type=float, default=0.4, help="the flooding place's share of the messages")
    ap.add_argument("--model-delay", type=float, default=0.5, help="seconds the model takes per batch")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    built = CACHE / f"load-{args.size}.db"
    if not built.exists():
        t = time.monotonic()
        print(f"building a store of {args.size:,} items in {built} (once)", file=sys.stderr, flush=True)
        CACHE.mkdir(exist_ok=True)
        asyncio.run(build(built, args.size))
        print(f"built in {time.monotonic() - t:.0f} s", file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory(prefix="engram-load-") as tmp:
        path = Path(tmp) / "engram.db"
        shutil.copy(built, path)
        res = asyncio.run(run(path, args))
    if args.json:
        args.json.write_text(json.dumps(res, indent=1))
    rows = [
        ("messages sent / a second achieved",
         f"{res['messages']:,} / {res['msg_per_s']:.1f} (asked {args.rate:g})"),
        ("injections / a second", f"{res['injections']:,} / {res['inject_per_s']:.1f}"),
        ("injection latency p50 / p99 / max", f"{res['p50_ms']:.0f} / **{res['p99_ms']:.0f}** / "
                                              f"{res['max_ms']:.0f} ms (target p99 <= 100 ms)"),
        ("the event loop's lag (a 10 ms sleep woken late) p50 / p99",
         f"{res['lag_p50_ms']:.0f} / {res['lag_p99_ms']:.0f} ms"),
        ("injections that went without memories", res["inject_failures"]),
        ('"database is locked" in the log', res["locked"]),
        ("errors in the log", sum(res["errors"].values())),
        ("messages lost (sent, not stored)", f"{res['lost']} (stored {res['stored']:,})"),
        ("RSS first / peak; growth first third / last third", f"{res['rss_first_mb']:.0f} / "
         f"{res['rss_peak_mb']:.0f} MB; +{res['rss_growth_first_third_mb']:.0f} / "
         f"+{res['rss_growth_last_third_mb']:.0f} MB"),
        ("consolidation runs / model calls", f"{res['consolidation_runs']} / {res['model_calls']}"),
        ("flood place: messages / runs that took a batch of it",
         f"{res['flood_sent']:,} / {res['flood_batches']}"),
        ("other places due (>= 30 new lines) / consolidated during the run",
         f"{res['others_due']} / {res['others_consolidated']}"),
        ("wall time (sending, then flush)", f"{res['send_s']:.0f} s, {res['total_s']:.0f} s"),
    ]
    print("| figure | value |\n|---|---|")
    for name, value in rows:
        print(f"| {name} | {value} |")
    for text, n in res["errors"].items():
        print(f"error x{n}: {text}")


if __name__ == "__main__":
    main()
