"""Child process of test_consolidation_durability: consolidates one place, slowly, until it is killed.

Run as ``python -m tests._consolidate_child PATH BASE_URL`` from the repository root. Each memory
written inside the batch's transaction prints ``inserted`` (then the writer dawdles, so the parent's
SIGKILL lands mid-transaction); ``committed`` is printed once the batch and its cursor are committed.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

from astrbot_plugin_engram.memory import Engram, NoEmbedder
from astrbot_plugin_engram.memory.chat import OpenAIChat
from astrbot_plugin_engram.memory.consolidation import ConsolidationSettings, Consolidator
from astrbot_plugin_engram.memory.store.sqlite.writes import SQLiteWrites


def say(word: str) -> None:
    os.write(1, f"{word}\n".encode())  # straight to the pipe: nothing buffered is lost to the kill


async def main(path: str, base_url: str) -> None:
    eng = await Engram.open(path, NoEmbedder(), background=False)
    insert = SQLiteWrites.add_memory

    async def slow_insert(self: SQLiteWrites, *args: Any, **kwargs: Any) -> Any:
        out = await insert(self, *args, **kwargs)
        say("inserted")
        await asyncio.sleep(0.02)
        return out

    SQLiteWrites.add_memory = slow_insert  # type: ignore[method-assign]
    con = Consolidator(eng, OpenAIChat("m", base_url), ConsolidationSettings(batch_episodes=200))
    report = await con.run(force=True)
    say(f"committed {report.added}")
    await asyncio.sleep(60)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
