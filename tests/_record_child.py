"""Child process of test_durability: records episodes as fast as it can, printing each acknowledged id.

Run as ``python -m tests._record_child PATH ROUND DURABLE [SECONDS]`` from the repository root (after
SECONDS of recording, if given, it stops recording and waits to be killed, the indexer still working).
Each line on stdout is ``<episode id>\\t<token>``, written only after ``record()`` (or
``record_many()``) returned the id; the parent kills this process with SIGKILL at a random moment.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
import zlib

import numpy as np

from astrbot_plugin_engram.memory import Engram, Episode

PRODUCERS = 16


def content_of(token: str) -> str:
    """The text recorded under ``token`` (the parent rebuilds it to check what survived)."""
    # The token is written against Chinese text, as names are in Chinese chats ("Bart和同学们…"):
    # the keyword index must cut it out (the durability test finds each episode by its token).
    return (f"{token}在café记下了；the kiwi count is {zlib.crc32(token.encode()) % 997}, "
            f"猕猴桃{zlib.crc32(token.encode()) % 89}个.")


def place_of(token: str) -> str:
    return f"test:group:{zlib.crc32(token.encode()) % 4}"


class TinyEmbedder:
    """Cheap deterministic vectors, so the background indexer writes while episodes are recorded."""

    name = "tiny-8"
    asymmetric = True  # each episode gets a second vector too (embedded as a query)

    async def embed(self, texts: list[str], kind: str = "passage") -> np.ndarray:
        return np.asarray([[zlib.crc32(f"{kind}{t}{j}".encode()) % 100 + 1 for j in range(8)] for t in texts],
                          np.float32)


def ack(pairs: list[tuple[int, str]]) -> None:
    # One write per batch of acks, straight to the pipe: no buffer is lost when the kill comes.
    os.write(1, "".join(f"{i}\t{t}\n" for i, t in pairs).encode())


def episode(token: str, p: int) -> Episode:
    return Episode(place=place_of(token), content=content_of(token), actor=f"test:{p}",
                   actor_name=f"Tester {p}")


async def produce(eng: Engram, rnd: str, p: int, until: float) -> None:
    for n in range(10**9):
        if time.monotonic() > until:  # then quiet: the background indexer catches up until the kill
            await asyncio.sleep(3600)
        if p == 0 and n % 10 == 0:  # one producer also writes whole batches
            tokens = [f"r{rnd}p{p}n{n}b{j}" for j in range(20)]
            ack(list(zip(await eng.record_many([episode(t, p) for t in tokens]), tokens)))
        else:
            token = f"r{rnd}p{p}n{n}"
            ack([(await eng.record(episode(token, p)), token)])


async def main(path: str, rnd: str, durable: bool, seconds: float) -> None:
    eng = await Engram.open(path, TinyEmbedder(), durable=durable)
    until = time.monotonic() + seconds
    await asyncio.gather(*(produce(eng, rnd, p, until) for p in range(PRODUCERS)))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3] == "1", float(sys.argv[4]) if len(sys.argv) > 4
                     else float("inf")))
