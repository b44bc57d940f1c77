#!/usr/bin/env python
"""Every dashboard page's render time at 100k items, this checkout against an earlier one:
`bench/dashboard_pages.py --db STORE [--base-root DIR] [--rounds R] [--n N]`.

STORE is bench/dashboard.py's (perf.py's ``build``: 95 % episodes over 300 chats, 5 % memories);
five memories citing lines spread over its largest chat are added once (perf's memories cite
none), so that a memory's page shows its sources. Each page (HTML, English and Chinese) is asked
``--n`` times over real HTTP on 127.0.0.1 by a fresh process per side; the sides take turns
``--rounds`` times (``--base-root``: a folder holding an earlier ``astrbot_plugin_engram``, e.g.
``git archive main`` unpacked, put ahead on PYTHONPATH), so their ratio holds on a busy machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

HERE = Path(__file__).resolve().parent
TOKEN = "bench-token-0123456789"


def pages(largest: str, memory: int) -> dict[str, str]:
    q = quote("what did they say about the weekend")
    return {
        "overview": "/", "memories": "/memories?page=40", "memories_kind": "/memories?kind=fact",
        "memories_search": "/memories?q=the", "memory_with_sources": f"/memories/{memory}",
        "place_latest": f"/place?space={quote(largest)}",
        "place_page": f"/place?space={quote(largest)}&page=7",
        "recall": f"/recall?q={q}&space={quote(largest)}", "graph": "/graph", "diary": "/diary",
        "identity": "/identity", "not_found": "/memories/999999999",
    }


async def add_sourced_memories(db: str, largest: str) -> int:
    from astrbot_plugin_engram.memory import Engram, Memory, NoEmbedder

    engram = await Engram.open(db, NoEmbedder(), background=False)
    try:
        found, _ = await engram.store.list_memories(None, text="[bench] cites", limit=1)
        if found and found[0].id is not None:
            return found[0].id
        total = await engram.store.count_place_episodes(largest)
        mid = 0
        for at in (0.05, 0.3, 0.5, 0.7, 0.95):
            [ep] = await engram.store.place_episodes(largest, 1, int(total * at))
            assert ep.id is not None  # a stored line has its id
            mid = await engram.add_memory(Memory(text=f"[bench] cites e{ep.id}", scope="public",
                                                 sources=(ep.id,)))
        return mid
    finally:
        await engram.close()


async def serve_and_time(db: str, largest: str, memory: int, n: int) -> dict[str, float]:
    import aiohttp

    from astrbot_plugin_engram.dashboard import DashboardServer, DashboardSettings, make_app
    from astrbot_plugin_engram.memory import Engram

    sys.path.insert(0, str(HERE))
    from perf import RandomEmbedder

    engram = await Engram.open(db, RandomEmbedder(), read_only=True)
    server = DashboardServer(make_app(engram, DashboardSettings(token=TOKEN)), "127.0.0.1", 0)
    assert await server.start()
    base, out = server.url.rstrip("/"), {}
    try:
        async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {TOKEN}"}) as http:
            for name, path in pages(largest, memory).items():
                times = []
                for i in range(n + 1):
                    lang = "zh-CN" if i % 2 else "en-US"
                    t = time.perf_counter()
                    async with http.get(base + path, headers={"Accept-Language": lang}) as r:
                        await r.read()
                        assert r.status in (200, 404), (path, r.status)
                    if i:  # the first is a warm-up
                        times.append((time.perf_counter() - t) * 1000)
                out[name] = statistics.median(times)
    finally:
        await server.stop()
        await engram.close()
    return out


def side(root: str | None, db: str, largest: str, memory: int, n: int) -> dict[str, float]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if root:
        env["PYTHONPATH"] = root
    cmd = [sys.executable, __file__, "--db", db, "--_worker", largest, str(memory), str(n)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", required=True)
    ap.add_argument("--base-root", help="a folder holding the earlier astrbot_plugin_engram")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--n", type=int, default=10, help="requests per page and side per round")
    ap.add_argument("--_worker", nargs=3, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a._worker:
        largest, memory, n = a._worker
        print(json.dumps(asyncio.run(serve_and_time(a.db, largest, int(memory), int(n)))))
        return
    largest = json.loads(Path(a.db + ".json").read_text())["largest_space"]
    memory = asyncio.run(add_sourced_memories(a.db, largest))
    runs: dict[str, list[dict[str, float]]] = {"this": [], "base": []}
    for _ in range(a.rounds):
        runs["this"].append(side(None, a.db, largest, memory, a.n))
        if a.base_root:
            runs["base"].append(side(a.base_root, a.db, largest, memory, a.n))
    print(f"load {os.getloadavg()[0]:.1f}; median over {a.rounds} rounds of each round's median ms")
    for name in runs["this"][0]:
        this = statistics.median(r[name] for r in runs["this"])
        line = f"  {name:<22} this {this:8.1f} ms"
        if runs["base"]:
            base = statistics.median(r[name] for r in runs["base"])
            line += f"   base {base:8.1f} ms   this/base {this / base:5.2f}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
