"""The MCP server on a PostgreSQL memory (``--db postgresql://... --folder DATA mcp``), through a real
MCP client session over stdio with the server in its own process, on the session's throwaway server:
the same tools and the same privacy as on a SQLite file, the identity read from the data folder, and
beside a running instance on the same database each sees the other's lines."""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path
from typing import Any

from astrbot_plugin_engram.memory import Audience, Engram, Episode, NoEmbedder

from ..test_mcp_server import HERE, OTHER, call, refused, resource, seeded, session


async def test_a_client_of_a_postgres_memory_records_recalls_and_reads_the_identity(
        postgres_server: Any, tmp_path: Path) -> None:
    url = postgres_server.fresh_database()
    ids = await seeded(url, tmp_path)
    async with session(url, folder=tmp_path) as s:
        said = await call(s, "record", text="Carol brought a new viola bow", speaker="Carol",
                          speaker_id="qq:33")
        assert re.search(r"e\d+", said), said
        answer = await call(s, "recall", query="viola bow", k=5)
        assert "Carol said" in answer and "new viola bow" in answer
        assert "in this chat" in await call(s, "remember", text="Carol's viola is from 1921", about="Carol")
        assert "from 1921" in await call(s, "about", person="Carol")
        assert "I am Mira" in await resource(s, "engram://identity")  # from --folder
        for q in ("vault code", "Bob secret", "vault"):  # another place's and the owner's: never
            answer = await call(s, "recall", query=q, k=20)
            assert "4471" not in answer and "Zurich" not in answer, answer
        for key in (f"m{ids['other_memory']}", f"e{ids['other_line']}", f"m{ids['owner_memory']}"):
            assert "nothing was forgotten" in await refused(s, "forget", {"ids": [key]})
    async with session(url, HERE, "--read-only", folder=tmp_path) as s:
        assert {t.name for t in (await s.list_tools()).tools} == {"recall", "recent", "about", "stats"}
        assert "viola bow" in await call(s, "recent", n=5)
    e = await Engram.open(url, NoEmbedder(), background=False, folder=tmp_path)
    try:  # what the client wrote is in the database, in its place only
        hits = await e.recall("viola", Audience(HERE), k=10)
        assert {"Carol brought a new viola bow", "Carol's viola is from 1921"} <= {h.text for h in hits}
        assert not await e.recall("viola", Audience(OTHER), k=10)
    finally:
        await e.close()


async def test_the_mcp_server_beside_a_running_instance_of_a_postgres_memory(postgres_server: Any,
                                                                             tmp_path: Path) -> None:
    url = postgres_server.fresh_database()
    await seeded(url, tmp_path)
    bot = await Engram.open(url, NoEmbedder(), folder=tmp_path)  # the bot, following the database
    try:
        async with session(url, folder=tmp_path) as s:
            await bot.record(Episode(place=HERE, content="the bot heard about the harp", actor="qq:11",
                                     actor_name="Alice"))
            assert "harp" in await call(s, "recall", query="harp", k=5)
            await call(s, "record", text="the client says the oboe is tuned", speaker="Dan",
                       speaker_id="qq:44")
            start = time.monotonic()  # the bot's indexes hear the client's line from the change log
            while not [h for h in await bot.recall("oboe", Audience(HERE), k=5) if "oboe" in h.text]:
                assert time.monotonic() - start < 10, "the bot never saw the client's line"
                await asyncio.sleep(0.1)
    finally:
        await bot.close()
