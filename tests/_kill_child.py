"""Child process of the kill harness (tests/test_kill_harness.py, bench/kills.py): the real write path,
busy in every way at once, until the parent's SIGKILL.

Run as ``python -m tests._kill_child PATH ROUND BASE_URL`` from the repository root. It opens the store
as the plugin does (the background indexer embedding behind the recording), then at once:

- ``PRODUCERS`` chats record through the plugin's recording queue (``plugin/hooks/record_queue.py``,
  no AstrBot import), each waiting for the queue's flush before it acknowledges what it put;
- consolidation runs again and again with the real OpenAI client against the parent's fake server
  (``fake_openai.contract_answer``, one memory per line, sourced from it);
- a person who said a few acknowledged lines is forgotten (``Engram.forget_person``);
- online backups are taken at random moments (``backups.take_backup``, the newest three kept).

Each line on stdout is written straight to the pipe once the thing it names is done: ``@ready``,
``@ack <token>`` (committed: the queue's flush returned), ``@doomed <person> <token>`` (a line of the
person to be forgotten, committed), ``@forgot <person> <episode ids> <memory ids>`` (the forget
returned), ``@consolidated <added>``, ``@backup <file name>`` (the backup is whole and in place).
"""

from __future__ import annotations

import asyncio
import os
import random
import sys
import zlib
from pathlib import Path

import anyio._backends._asyncio  # noqa: F401  # imported by the openai client at its first request

from astrbot_plugin_engram.memory import Engram, Episode
from astrbot_plugin_engram.memory.backups import take_backup
from astrbot_plugin_engram.memory.chat import OpenAIChat
from astrbot_plugin_engram.memory.consolidation import ConsolidationSettings, Consolidator
from astrbot_plugin_engram.memory.recording.journal import kept_path
from astrbot_plugin_engram.memory.text.words import episode_words
from astrbot_plugin_engram.plugin.hooks.record_queue import RecordingQueue

from ._record_child import TinyEmbedder

PRODUCERS = 12  # chats recording at once
PLACES = 6  # the chats' places (two producers share a place now and then)
BACKUPS_KEPT = 3
FLUSH_WAIT = 30.0


def say(line: str) -> None:
    os.write(1, f"{line}\n".encode())  # straight to the pipe: nothing buffered is lost to the kill


def content_of(token: str) -> str:
    """The text recorded under ``token`` (the parent rebuilds it to check what survived)."""
    return f"{token} 说起了茶和café, the kiwi count is {zlib.crc32(token.encode()) % 997}."


def place_of(token: str) -> str:
    return f"kill:group:{zlib.crc32(token.encode()) % PLACES}"


def doomed_person(rnd: str) -> str:
    return f"kill:doomed{rnd}"


async def main(path: Path, rnd: str, base_url: str) -> None:
    opened: list[Engram] = []

    async def memory() -> Engram:
        if not opened:
            opened.append(await Engram.open(path, TinyEmbedder(), background=True))
        return opened[0]

    # what loads at first use (the word cutter's dictionary, the openai package) holds up the event loop
    # for seconds on a loaded machine: loaded before the store opens, so the kills land amid the work
    episode_words(Episode(place="warm", content=content_of("warm")))
    chat = OpenAIChat("m", base_url)
    mem = await memory()
    queue = RecordingQueue(memory, [], kept_path(path))
    queue.opened()
    say("@ready")
    rng = random.Random()

    async def produce(p: int) -> None:
        for n in range(10**9):
            tokens = [f"r{rnd}p{p}n{n}k{k}" for k in range(rng.randint(1, 3))]
            for t in tokens:
                queue.put([Episode(place=place_of(t), content=content_of(t), actor=f"kill:{p}",
                                   actor_name=f"Speaker{p}")])
            loop = asyncio.get_running_loop()
            if await queue.flush(FLUSH_WAIT, loop.time() + FLUSH_WAIT):
                say("".join(f"@ack {t}\n" for t in tokens).rstrip("\n"))

    async def doomed() -> None:
        person = doomed_person(rnd)
        for n in range(5):
            t = f"r{rnd}doomed{n}"
            queue.put([Episode(place=place_of(t), content=content_of(t), actor=person,
                               actor_name=f"Qzv{rnd}doomed")])
            loop = asyncio.get_running_loop()
            if await queue.flush(FLUSH_WAIT, loop.time() + FLUSH_WAIT):
                say(f"@doomed {person} {t}")
        await asyncio.sleep(rng.uniform(0.0, 0.3))
        plan = await mem.forget_person(person)
        say(f"@forgot {person} {','.join(map(str, plan.episodes))} {','.join(map(str, plan.memories))}")

    async def consolidate() -> None:
        settings = ConsolidationSettings(batch_episodes=rng.choice((5, 20, 60)))
        while True:
            report = await Consolidator(mem, chat, settings).run(force=True)
            say(f"@consolidated {report.added}")
            await asyncio.sleep(rng.uniform(0.0, 0.2))

    async def back_up() -> None:
        while True:
            await asyncio.sleep(rng.uniform(0.0, 0.5))
            made = await take_backup(path, keep=BACKUPS_KEPT)
            say(f"@backup {made.name}")

    await asyncio.gather(*(produce(p) for p in range(PRODUCERS)), doomed(), consolidate(), back_up())


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), sys.argv[2], sys.argv[3]))
