"""Child process of test_forget_durability: forgets a person, pausing at a chosen point until killed.

Run as ``python -m tests._forget_child PATH PERSON WHERE`` from the repository root. ``WHERE`` is
``inside`` (the pause is inside the erase's transaction, after the rows are read) or ``committed``
(after the commit, before the write-ahead log is checkpointed); the child prints the word when it
gets there, then sleeps until the parent's SIGKILL.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

from astrbot_plugin_engram.memory import Engram, NoEmbedder
from astrbot_plugin_engram.memory.store.sqlite.transactions import Transactions
from astrbot_plugin_engram.memory.store.sqlite.writes import SQLiteWrites


def say(word: str) -> None:
    os.write(1, f"{word}\n".encode())  # straight to the pipe: nothing buffered is lost to the kill


async def main(path: str, person: str, where: str) -> None:
    eng = await Engram.open(path, NoEmbedder(), background=False)
    erased, checkpoint = SQLiteWrites._erased, Transactions.checkpoint

    async def slow_erased(self: SQLiteWrites, table: str) -> Any:
        if where == "inside":
            say("inside")
            await asyncio.sleep(60)
        return await erased(self, table)

    async def slow_checkpoint(self: Transactions) -> bool:
        if where == "committed":
            say("committed")
            await asyncio.sleep(60)
        return await checkpoint(self)

    SQLiteWrites._erased = slow_erased  # type: ignore[method-assign]
    Transactions.checkpoint = slow_checkpoint  # type: ignore[method-assign]
    await eng.forget_person(person)
    say("done")


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
