"""The polling client of bench/dashboard.py, in its own process: every page in turn (overview,
memories, a memory, a place, recall explained, the graph, the diary, the identity), as fast as
answers come (or one every ``interval`` seconds: a person clicking through, a page refreshing).

Prints ``ready`` after its first page and, on SIGTERM, how many pages it was served.
"""

from __future__ import annotations

import asyncio
import random
import signal
import sys
from urllib.parse import quote

import aiohttp


async def page_forever(base: str, token: str, pages: int, place: str = "", interval: float = 0.0) -> None:
    done = 0
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    rng = random.Random(5)
    where = quote(place)
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {token}"}) as http:
        first = (await (await http.get(f"{base}/api/memories?size=1")).json())["items"]
        one = first[0]["id"] if first else 1
        while not stop.is_set():
            for path in (f"/memories?page={rng.randrange(1, pages + 1)}", "/", f"/memories/{one}",
                         f"/place?space={where}&page={rng.randrange(1, 200)}" if place else "/diary",
                         f"/recall?q=coffee&space={where}" if place else "/identity",
                         "/graph", "/diary", "/identity"):
                if stop.is_set():
                    break
                async with http.get(base + path) as r:
                    await r.read()
                    assert r.status == 200, (path, r.status)
                done += 1
                if done == 1:
                    print("ready", flush=True)
                if interval:
                    await asyncio.sleep(interval)
    print(done, flush=True)


if __name__ == "__main__":
    place, interval = (sys.argv[4:5] or [""])[0], float((sys.argv[5:6] or ["0"])[0])
    asyncio.run(page_forever(sys.argv[1], sys.argv[2], int(sys.argv[3]), place, interval))
