"""Two writers on one file: the bot's service and the command line, as the README allows."""

from __future__ import annotations

import asyncio
import subprocess
import sys

from .conftest import episodes, event


async def test_the_cli_writing_beside_the_service_never_shares_a_place_in_a_chat(service) -> None:
    expected = [f"bot line {i}" for i in range(3)]
    for text in expected:
        service.record_message(event(text, "u1", "g1"))
    await service.flush()  # the service's writer now knows the chat's last sequence number
    cli = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "astrbot_plugin_engram.memory", "--db", str(service.path), "--embedder",
        "none", "record", "cli line", "--space", "qq:group:g1", stdout=subprocess.DEVNULL)
    while cli.returncode is None:  # the service keeps writing while the other process does
        text = f"while the cli runs {len(expected)}"
        service.record_message(event(text, "u1", "g1"))
        expected.append(text)
        await service.flush()
        try:
            await asyncio.wait_for(cli.wait(), 0.05)
        except asyncio.TimeoutError:
            pass
    assert cli.returncode == 0
    service.record_message(event("after the cli", "u1", "g1"))
    expected += ["cli line", "after the cli"]
    eps = [e for e in await episodes(service) if e.place == "qq:group:g1"]
    assert sorted(e.content for e in eps) == sorted(expected)  # nothing lost to a clash
    assert [e.seq for e in eps] == list(range(1, len(expected) + 1))  # unique, in the order written
