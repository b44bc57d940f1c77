"""The bot's service and an MCP server (its own process) recording into one store at once, as the
README allows: nothing lost, each line its own sequence number, each sees the other's lines."""

from __future__ import annotations

import asyncio

from ..test_mcp_server import call, session
from .conftest import episodes, event

PLACE = "qq:group:g1"
N = 15


async def test_the_bot_and_an_mcp_server_record_into_one_store_at_once(service) -> None:
    service.record_message(event("the bot was here first", "u1", "g1"))
    await service.flush()  # the store exists, the service's writer knows the chat's last number

    async def bot() -> None:
        for i in range(N):
            service.record_message(event(f"bot line {i} about kiwis", "u1", "g1"))
            await service.flush()
            await asyncio.sleep(0.01)

    async with session(service.path, PLACE) as s:
        async def client() -> None:
            for i in range(N):
                await call(s, "record", text=f"client line {i} about mangoes", speaker="Agent")

        await asyncio.gather(bot(), client())
        seen_by_client = await call(s, "recent", n=20)
        recalled_by_client = await call(s, "recall", query="kiwis", k=20)
    eps = [e for e in await episodes(service) if e.place == PLACE]
    expected = {"the bot was here first", *(f"bot line {i} about kiwis" for i in range(N)),
                *(f"client line {i} about mangoes" for i in range(N))}
    assert sorted(e.content for e in eps) == sorted(expected)  # nothing lost, nothing twice
    assert sorted(e.seq for e in eps) == list(range(1, len(expected) + 1))  # each its own number
    assert f"bot line {N - 1} about kiwis" in seen_by_client  # the client reads the bot's lines
    assert "about kiwis" in recalled_by_client.split("\n")[1]  # the best hit for kiwis is a bot line
    hits = await service.recall(service.audience(event("?", "u1", "g1")), "mangoes", 20)
    assert {f"client line {i} about mangoes" for i in range(N)} <= {h.text for h in hits}  # and the bot its
