"""The paging client of bench/dashboard.py: memories pages as fast as answers come, in its own process.

Prints ``ready`` after its first page and, on SIGTERM, how many pages it was served.
"""

from __future__ import annotations

import asyncio
import random
import signal
import sys

import aiohttp


async def page_forever(base: str, token: str, pages: int) -> None:
    done = 0
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    rng = random.Random(5)
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {token}"}) as http:
        while not stop.is_set():
            async with http.get(f"{base}/memories?page={rng.randrange(1, pages + 1)}") as r:
                await r.read()
                assert r.status == 200, r.status
            done += 1
            if done == 1:
                print("ready", flush=True)
    print(done, flush=True)


if __name__ == "__main__":
    asyncio.run(page_forever(sys.argv[1], sys.argv[2], int(sys.argv[3])))
