"""A PostgreSQL memory's backup and restore, on a throwaway server (``tests/postgres_server.py``):
how long a backup takes, and how long the bot's event loop is held up meanwhile (the longest pause
of a 10 ms ticker, and how many pauses passed 100 ms), with the snapshot made in a child process at
a lower priority (what Engram does) against one made in a thread of the bot's process, beside an idle
loop and a SQLite store's backup of the same rows in the same run; then a restore of the backup.

    .venv/bin/python bench/postgres_backup.py [--episodes 20000]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from astrbot_plugin_engram.memory import Engram, Episode
from astrbot_plugin_engram.memory.backups import restore, take_backup
from astrbot_plugin_engram.memory.store.opening import store_path
from astrbot_plugin_engram.memory.store.postgres.backups import snapshot_to_file

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.conftest import HashEmbedder  # noqa: E402
from tests.postgres_server import Server  # noqa: E402

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
WORDS = "coffee Berlin 咖啡 北京 runners keeper lighthouse weather birthday vault".split()


def line(i: int) -> Episode:
    said = f"{WORDS[i % 10]} line {i} {WORDS[(i * 7) % 10]} 我们周末去北京的咖啡馆吧"
    return Episode(place=f"qq:group:{i % 50}", content=said, actor=f"qq:{i % 30}", actor_name=f"P{i % 30}",
                   time=T0 + timedelta(seconds=i))


async def paused(work: Callable[[], Awaitable[Any]]) -> tuple[float, float, int]:
    """``work``'s seconds, and the event loop's longest pause (ms) and pauses past 100 ms meanwhile."""
    pauses: list[float] = []
    done = False

    async def ticker() -> None:
        while not done:
            t = time.perf_counter()
            await asyncio.sleep(0.01)
            pauses.append(time.perf_counter() - t - 0.01)

    task = asyncio.create_task(ticker())
    start = time.perf_counter()
    await work()
    took = time.perf_counter() - start
    done = True
    await task
    return took, max(pauses) * 1000, sum(p > 0.1 for p in pauses)


async def run(server: Server, tmp: Path, n: int) -> None:
    url = server.fresh_database()
    e = await Engram.open(url, HashEmbedder(), background=False, folder=tmp)
    for start in range(0, n, 1000):
        await e.record_many([line(i) for i in range(start, min(n, start + 1000))])
    await e.embed_pending()
    store = store_path(url, tmp)
    rows = []
    rows.append(("idle loop (baseline)", *await paused(lambda: asyncio.sleep(5))))
    backup = tmp / "first.db"
    rows.append(("PostgreSQL backup, snapshot in a child (Engram)",
                 *await paused(lambda: take_backup(store, url=url))))
    shutil.copyfile(sorted((tmp / "backups").glob("*.db"))[-1], backup)
    rows.append(("PostgreSQL snapshot in a thread (not kept)",
                 *await paused(lambda: asyncio.to_thread(asyncio.run, snapshot_to_file(url, tmp / "t.db")))))
    local = tmp / "sqlite" / "engram.db"
    local.parent.mkdir()
    shutil.copyfile(backup, local)
    rows.append(("SQLite backup of the same rows", *await paused(lambda: take_backup(local))))
    await e.close()
    began = time.perf_counter()
    await restore(store, backup, url=url)
    print(f"{n} episodes, backup file {backup.stat().st_size / 2**20:.1f} MB; restore into the database "
          f"(set-aside snapshot, erase list, one transaction): {time.perf_counter() - began:.1f} s\n")
    print("| what | seconds | longest pause of the loop | pauses > 100 ms |\n|---|---|---|---|")
    for what, took, longest, over in rows:
        print(f"| {what} | {took:.1f} | {longest:.0f} ms | {over} |")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--episodes", type=int, default=20000)
    args = p.parse_args()
    server = Server().start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            asyncio.run(run(server, Path(tmp), args.episodes))
    finally:
        server.stop()


if __name__ == "__main__":
    main()
