"""Child process of tests/test_kept_kill.py: the plugin's service records messages the store cannot
take (a full disk, or a store found damaged), then waits to be killed with SIGKILL.

Run as ``python -m tests._kept_child DATA_DIR MODE N`` from the repository root. It records
"before" (the store opens: the journal's reserve is allocated), empties the write-ahead log, prints
``@open``, waits for a line on
its stdin (the parent fills the disk meanwhile), makes the store unwritable when MODE is ``damaged`` (as
the weekly check does), records N messages, and prints ``@kept <in the journal> <in memory only>``
once the recorder has handled them all.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from astrbot_plugin_engram.plugin.config import Settings
from astrbot_plugin_engram.plugin.providers import Providers
from astrbot_plugin_engram.plugin.service import EngramService
from tests.plugin.conftest import OWNER, FakeContext, event

from .conftest import HashEmbedder

WORDS = " about the long walk to the lake, the rain and the tea we had after it" * 3


def said(n: int) -> str:
    return f"while stuck {n}{WORDS}"


async def main(data: Path, mode: str, n: int) -> None:
    s = Settings(owner_ids=(OWNER,))
    svc = EngramService(s, data, Providers(FakeContext(), s.embedding_provider_id, s.chat_provider_id),
                        embedder=HashEmbedder())
    svc.record_message(event("before", "u1", "g1"))
    await svc.flush()
    # The write-ahead log emptied before the disk fills: SQLite reuses a log's space from its start once
    # it was copied into the file, so with room left in it from "before" (and the indexer's vectors) a
    # few of the messages, or all 40, were committed on the "full" disk, depending on whether the copy
    # in the background had run yet ("journal 0 of 40" now and then). Now every commit needs room.
    mem = await svc.memory()
    await mem.embed_pending()
    assert await mem.store.checkpoint(), "the write-ahead log could not be emptied"
    os.write(1, b"@open\n")
    await asyncio.to_thread(sys.stdin.readline)
    if mode == "damaged":
        store: Any = (await svc.memory()).store
        store.damage = "the store is damaged (found by the check in the background)"
    for k in range(n):
        svc.record_message(event(said(k), "u1", "g1"))
    await svc.recording.flush(30, asyncio.get_running_loop().time() + 30)
    journal = getattr(svc.recording, "journal", None)  # (none before the journal existed)
    os.write(1, f"@kept {journal.count if journal else 0} {len(svc.recording.held)}\n".encode())
    await asyncio.sleep(3600)  # killed here


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])))
