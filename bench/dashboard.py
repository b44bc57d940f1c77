"""The dashboard at 100k items: `bench/dashboard.py [--size 100000] [--db PATH] [--json OUT]`.

Builds (or reuses, with ``--db``) a store with perf.py's ``build`` (95 % episodes over 300 skewed
chats, 5 % memories, 384-dim random vectors), serves the dashboard over it on 127.0.0.1 as the
plugin does (same process as the memory), and measures over real HTTP:

- render time of the memories page (HTML, random pages, with and without filters and a text search)
  and of recall explained (HTML, questions asked in the largest chat), p50/p99; also a place's
  timeline (random pages of the largest chat), the overview and the graph;
- injection latency (what the plugin runs before a reply: ``memory.compose.Composer``'s recall of the
  notes worth one and its block, with the plugin's default budget and k) alone
  and while a client in another process (``_page_client.py``) polls every page in turn (overview,
  memories, a memory, a place, recall explained, the graph, the diary, the identity) as fast as they
  are answered; the ratio of the two medians, in one run, is what the pages cost a reply.
  The client is paused (SIGSTOP) and resumed every ``--block`` injections, so the two sides alternate
  every few tenths of a second and share each stretch of a busy machine; each round's ratio is
  printed too, to tell a change from the machine's noise.

A 100k store takes a few minutes to build: keep one outside the repository and pass it with ``--db``
(built there on the first run, with its description in ``PATH.json``, and reused after), e.g.
``nice -n 5 .venv/bin/python bench/dashboard.py --db /work/cache/NAME/dash100k.db``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import aiohttp
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench helpers (bench/ is not a package)

from _perf_corpus import queries  # noqa: E402
from perf import DIM, RandomEmbedder, run  # noqa: E402

from astrbot_plugin_engram.dashboard import DashboardServer, DashboardSettings, make_app  # noqa: E402
from astrbot_plugin_engram.memory import Audience, Engram  # noqa: E402
from astrbot_plugin_engram.memory.compose import Composer  # noqa: E402
from astrbot_plugin_engram.memory.model import now_utc  # noqa: E402
from astrbot_plugin_engram.memory.self.diary_files import data_folder  # noqa: E402
from astrbot_plugin_engram.memory.self.selfhood import BlockDefaults, Selfhood  # noqa: E402

TOKEN = "bench-token-0123456789"
CLIENT = Path(__file__).resolve().with_name("_page_client.py")
MEMORY_PAGES = ["", "kind=fact", "status=active", "scope=public", "q=the", "q=喜欢"]
SETTLE = 0.2  # seconds after pausing or resuming the paging client before a block is timed


def pct(xs: list[float], p: float) -> float:
    return float(np.percentile(np.asarray(xs), p))


async def timed_gets(http: aiohttp.ClientSession, urls: list[str]) -> list[float]:
    out = []
    for url in urls:
        t = time.perf_counter()
        async with http.get(url) as r:
            await r.read()
            assert r.status == 200, (url, r.status)
        out.append((time.perf_counter() - t) * 1000)
    return out


async def inject(engram: Engram, composer: Composer, qs: list[str], place: str) -> list[float]:
    """The plugin's injection for each question (wall time: waiting behind a page counts)."""
    aud, out, k = Audience(place=place), [], composer.selfhood.settings.recall_k
    for q in qs:
        t = time.perf_counter()
        hits, _ = await composer.recall_worth(engram, aud, q, k, seen=[q])
        await composer.render(engram, place, hits, now_utc(), audience=aud)
        out.append((time.perf_counter() - t) * 1000)
    return out


async def paired(engram: Engram, composer: Composer, qs: list[str], place: str, client: int,
                 block: int) -> tuple[list[float], list[float]]:
    """The injection with the paging client paused and polling, in alternating blocks of ``block``
    questions (ABBA: paused first, then polling first): both sides share each moment of a busy machine.
    After each switch the server is given ``SETTLE`` seconds, to answer a page asked before a pause."""
    alone: list[float] = []
    polled: list[float] = []
    for n, i in enumerate(range(0, len(qs), block)):
        chunk = qs[i:i + block]
        for polling in ((False, True) if n % 2 == 0 else (True, False)):
            os.kill(client, signal.SIGCONT if polling else signal.SIGSTOP)
            await asyncio.sleep(SETTLE)
            (polled if polling else alone).extend(await inject(engram, composer, chunk, place))
    os.kill(client, signal.SIGCONT)
    return alone, polled


async def measure(db: str, place: str, nq: int, rounds: int, block: int, interval: float) -> dict[str, Any]:
    qs = queries(nq)
    rng = np.random.default_rng(1)
    table = {q: v / np.linalg.norm(v) for q in qs for v in [rng.standard_normal(DIM).astype(np.float32)]}
    engram = await Engram.open(db, RandomEmbedder(table), background=False)
    composer = Composer(Selfhood(data_folder(engram), BlockDefaults(), read_only=True))
    server = DashboardServer(make_app(engram, DashboardSettings(token=TOKEN)), "127.0.0.1", 0)
    assert await server.start()
    base = server.url.rstrip("/")
    headers = {"Authorization": f"Bearer {TOKEN}"}
    res: dict[str, Any] = {}
    try:
        async with aiohttp.ClientSession(headers=headers) as http:
            total = (await (await http.get(f"{base}/api/memories?size=1")).json())["total"]
            pages = max(1, total // 50)
            pick = random.Random(3)
            mem_urls = [f"{base}/memories?page={pick.randrange(1, pages + 1)}" for _ in range(nq)]
            filt_urls = [f"{base}/memories?{pick.choice(MEMORY_PAGES)}" for _ in range(nq)]
            recall_urls = [f"{base}/recall?q={quote(q)}&space={quote(place)}" for q in qs]
            await timed_gets(http, mem_urls[:20] + recall_urls[:20])  # warm up
            place_page = f"{base}/place?space={quote(place)}"
            place_urls = [f"{place_page}&page={pick.randrange(1, 200)}" for _ in range(nq)]
            for key, urls in (("memories_page", mem_urls), ("memories_filtered", filt_urls),
                              ("recall_explained", recall_urls), ("place_timeline", place_urls),
                              ("overview", [f"{base}/"] * 20), ("graph", [f"{base}/graph"] * 20)):
                lat = await timed_gets(http, urls)
                res[key] = {"p50_ms": pct(lat, 50), "p99_ms": pct(lat, 99), "n": len(lat)}
        await inject(engram, composer, qs[:20], place)  # warm up
        alone: list[float] = []
        paging: list[float] = []
        pages_served = 0
        res["rounds"] = []
        for _ in range(rounds):
            client = await asyncio.create_subprocess_exec(
                sys.executable, str(CLIENT), base, TOKEN, str(pages), place, str(interval),
                stdout=asyncio.subprocess.PIPE)
            assert client.stdout is not None
            assert (await client.stdout.readline()).strip() == b"ready"  # paging before the first injection
            one, other = await paired(engram, composer, qs, place, client.pid, block)
            alone += one
            paging += other
            client.terminate()
            out, _ = await client.communicate()
            served = int(out.decode().split()[-1])
            pages_served += served
            res["rounds"].append({"p50": pct(other, 50) / pct(one, 50), "p99": pct(other, 99) / pct(one, 99),
                                  "pages": served, "load": os.getloadavg()[0]})
        res["inject_alone"] = {"p50_ms": pct(alone, 50), "p99_ms": pct(alone, 99), "n": len(alone)}
        res["inject_while_paging"] = {"p50_ms": pct(paging, 50), "p99_ms": pct(paging, 99), "n": len(paging),
                                      "pages_served": pages_served}
    finally:
        await server.stop()
        await engram.close()
    res["loadavg"] = os.getloadavg()[0]
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=100_000, help="items in the store")
    ap.add_argument("--db", help="reuse (or build once) the store at this path")
    ap.add_argument("--queries", type=int, default=200, help="requests / injections per measurement")
    ap.add_argument("--rounds", type=int, default=3, help="paging client sessions (each: --queries injections"
                    " paused and as many polling)")
    ap.add_argument("--block", type=int, default=10, help="injections in a row before the client is switched")
    ap.add_argument("--interval", type=float, default=0.0,
                    help="seconds the client waits between pages (default 0: as fast as they are answered)")
    ap.add_argument("--json", help="write the results here")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="engram-dash-") as tmp:
        db = a.db or f"{tmp}/dash.db"
        meta = Path(db + ".json")
        if Path(db).exists() and meta.exists():
            build = json.loads(meta.read_text())
        else:
            build = run("build", db, a.size, 0)
            meta.write_text(json.dumps(build))
        res = asyncio.run(measure(db, build["largest_space"], a.queries, a.rounds, a.block, a.interval))
    res["build"] = build
    print(f"{a.size:,} items ({build['episodes']:,} episodes, {build['memories']:,} memories), "
          f"recall in {build['largest_space']} ({build['largest_count']:,} episodes); "
          f"load {res['loadavg']:.1f}")
    for key in ("memories_page", "memories_filtered", "recall_explained", "place_timeline", "overview",
                "graph", "inject_alone", "inject_while_paging"):
        r = res[key]
        print(f"  {key:<22} p50 {r['p50_ms']:7.1f} ms   p99 {r['p99_ms']:7.1f} ms   (n={r['n']})")
    pace = f"a page {a.interval:g} s after each answer" if a.interval else "as fast as answered"
    print(f"  pages served to the paging client meanwhile: {res['inject_while_paging']['pages_served']}"
          f" ({pace})")
    paging, alone = res["inject_while_paging"], res["inject_alone"]
    print(f"  injection ratio paging/alone: p50 {paging['p50_ms'] / alone['p50_ms']:.2f}, "
          f"p99 {paging['p99_ms'] / alone['p99_ms']:.2f}")
    for i, r in enumerate(res["rounds"], 1):
        print(f"    round {i}: p50 {r['p50']:.2f}, p99 {r['p99']:.2f} "
              f"({r['pages']} pages served; load {r['load']:.1f})")
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
