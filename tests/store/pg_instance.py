"""A second Engram instance in a process of its own, on the PostgreSQL database given (for
``test_postgres_instances``): it answers one command a line on stdin with one JSON line on stdout."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from astrbot_plugin_engram.memory import Audience, Engram, Episode, NoEmbedder

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)


async def main(url: str, folder: str) -> None:
    e = await Engram.open(url, NoEmbedder(), folder=Path(folder))
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    turn = None
    try:
        while line := (await reader.readline()).decode().strip():
            cmd, _, arg = line.partition(" ")
            out: object = None
            if cmd == "record":  # record N lines in a place, each awaited apart (as a bot's messages)
                place, n, word = arg.split()
                ids = await asyncio.gather(*(e.record(Episode(
                    place=place, content=f"{word} number {i}", actor="qq:b", actor_name="Bee",
                    time=T0 + timedelta(seconds=i))) for i in range(int(n))))
                out = ids
            elif cmd == "wait-recall":  # seconds until a recall there finds the word (None: not in 10 s)
                place, word = arg.split()
                start = time.monotonic()
                out = None
                while time.monotonic() - start < 10:
                    hits = await e.recall(word, Audience(place), k=5)
                    if any(word in h.text for h in hits):
                        out = round(time.monotonic() - start, 3)
                        break
                    await asyncio.sleep(0.05)
            elif cmd == "wait-gone":  # seconds until a recall no longer finds the word (None: still there)
                place, word = arg.split()
                start = time.monotonic()
                out = None
                while time.monotonic() - start < 10:
                    hits = await e.recall(word, Audience(place), k=5)
                    if not any(word in h.text for h in hits):
                        out = round(time.monotonic() - start, 3)
                        break
                    await asyncio.sleep(0.05)
            elif cmd == "take-turn":
                turn = e.store.turn(arg)
                out = await turn.__aenter__()
            elif cmd == "give-turn":
                assert turn is not None
                await turn.__aexit__(None, None, None)
                out = True
            print(json.dumps(out), flush=True)
    finally:
        await e.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
