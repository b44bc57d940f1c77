"""The MCP server (issue 31) through a real MCP client session of the official SDK, over stdio, with the
server in its own process as a client would start it: what it offers, what it sees, what it refuses."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult, TextContent, TextResourceContents
from pydantic import AnyUrl

from astrbot_plugin_engram.memory import Audience, Engram, Episode, Memory, NoEmbedder

HERE = "qq:group:1"
OTHER = "qq:group:2"
WRITING = {"record", "remember", "forget"}


@asynccontextmanager
async def session(db: Path | str, place: str = HERE, *flags: str,
                  folder: Path | None = None) -> AsyncIterator[ClientSession]:
    """A client session with ``python -m astrbot_plugin_engram.memory --db DB mcp --place PLACE``
    (``folder``: the data folder of a ``postgresql://`` store, ``--folder``)."""
    where = ["--folder", str(folder)] if folder is not None else []
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "astrbot_plugin_engram.memory", "--db", str(db), *where, "--embedder", "none", "mcp",
              "--place", place, *flags],
        env=dict(os.environ))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        yield s


def text(result: CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, TextContent))


async def call(s: ClientSession, tool: str, **args: Any) -> str:
    result = await s.call_tool(tool, args)
    assert not result.isError, text(result)
    return text(result)


async def resource(s: ClientSession, uri: str) -> str:
    return "".join(c.text for c in (await s.read_resource(AnyUrl(uri))).contents
                   if isinstance(c, TextResourceContents))


async def refused(s: ClientSession, tool: str, args: dict[str, Any]) -> str:
    result = await s.call_tool(tool, args)
    assert result.isError, f"{tool}({args!r}) was not refused: {text(result)}"
    return text(result)


async def seeded(db: Path | str, folder: Path | None = None) -> dict[str, int]:
    """A store with a line and a memory here, and another place's secret line and memory; the
    identity files in its data folder (``folder``, else the store file's)."""
    folder = folder if folder is not None else Path(db).parent
    e = await Engram.open(db, NoEmbedder(), background=False, folder=folder)
    try:
        ids = {
            "here_line": await e.record(Episode(place=HERE, content="Alice plays the cello on Sundays",
                                                actor="qq:11", actor_name="Alice")),
            "other_line": await e.record(Episode(place=OTHER, content="Bob's secret: the vault code is 4471",
                                                 actor="qq:22", actor_name="Bob")),
            "here_memory": await e.add_memory(Memory(text="Alice plays the cello", scope=f"space:{HERE}",
                                                     subjects=("qq:11",))),
            "other_memory": await e.add_memory(Memory(text="Bob keeps the vault code 4471",
                                                      scope=f"space:{OTHER}", subjects=("qq:22",))),
            "owner_memory": await e.add_memory(Memory(text="the owner's vault is in Zurich", scope="owner")),
        }
    finally:
        await e.close()
    (folder / "identity").mkdir(exist_ok=True)
    (folder / "identity" / "self.md").write_text("I am Mira, a patient cellist bot.", encoding="utf-8")
    (folder / "identity" / "self-image.md").write_text("I like quiet Sundays.", encoding="utf-8")
    return ids


async def test_a_client_lists_the_tools_records_recalls_and_reads_the_identity(tmp_path: Path) -> None:
    db = tmp_path / "engram.db"
    await seeded(db)
    async with session(db) as s:
        tools = {t.name for t in (await s.list_tools()).tools}
        assert tools == {"recall", "recent", "about", "stats", "record", "remember", "forget"}
        said = await call(s, "record", text="Carol brought a new viola bow", speaker="Carol",
                          speaker_id="qq:33")
        eid = re.search(r"e(\d+)", said)
        assert eid, said
        answer = await call(s, "recall", query="viola bow", k=5)
        assert "Carol said" in answer and "new viola bow" in answer
        assert f"[e{eid.group(1)}, said here]" in answer  # where the hit came from
        remembered = await call(s, "remember", text="Carol's viola is from 1921", about="Carol")
        assert "in this chat" in remembered  # about someone: it stays in this place
        about = await call(s, "about", person="Carol")
        assert "from 1921" in about and "learned here" in about
        assert "from 1921" in await call(s, "about", person="qq:33")  # by id too
        assert "Carol brought" in await call(s, "recent", n=3)
        assert "I am Mira" in await resource(s, "engram://identity")
        assert "quiet Sundays" in await resource(s, "engram://self-image")
        assert "lines said here" in await call(s, "stats")
    e = await Engram.open(db, NoEmbedder(), background=False)  # what the client wrote is in the store
    try:
        hits = await e.recall("viola", Audience(HERE), k=10)
        assert {"Carol brought a new viola bow", "Carol's viola is from 1921"} <= {h.text for h in hits}
        assert not await e.recall("viola", Audience(OTHER), k=10)  # and only in its place
    finally:
        await e.close()


async def test_a_client_sees_only_what_its_place_may_see(tmp_path: Path) -> None:
    db = tmp_path / "engram.db"
    ids = await seeded(db)
    async with session(db) as s:
        for q in ("vault code", "Bob secret", "vault", "cello"):
            answer = await call(s, "recall", query=q, k=20)
            assert "4471" not in answer and "Zurich" not in answer, answer
        assert "4471" not in await call(s, "about", person="Bob")
        assert "4471" not in await call(s, "recent", n=20)
        # another place's ids and the owner's are refused as unknown, and stay
        for key in (f"m{ids['other_memory']}", f"e{ids['other_line']}", f"m{ids['owner_memory']}"):
            assert "nothing was forgotten" in await refused(s, "forget", {"ids": [key]})
    async with session(db, OTHER) as s:
        assert "4471" in await call(s, "recall", query="vault code", k=5)
    async with session(db, "qq:private:1", "--owner") as s:
        assert "Zurich" in await call(s, "recall", query="vault", k=5)


async def test_read_only_offers_no_writing_tool_and_refuses_one_called_by_name(tmp_path: Path) -> None:
    db = tmp_path / "engram.db"
    ids = await seeded(db)
    async with session(db, HERE, "--read-only") as s:
        tools = {t.name for t in (await s.list_tools()).tools}
        assert tools == {"recall", "recent", "about", "stats"}
        await refused(s, "record", {"text": "written anyway"})
        await refused(s, "remember", {"text": "kept anyway"})
        await refused(s, "forget", {"ids": [f"m{ids['here_memory']}"]})
        assert "cello" in await call(s, "recall", query="cello", k=5)  # and the server lives on
    e = await Engram.open(db, NoEmbedder(), background=False)
    try:
        assert not await e.recall("anyway", Audience(HERE), k=5)
        assert (await e.get(ids["here_memory"])).text == "Alice plays the cello"
    finally:
        await e.close()


BAD: list[tuple[str, dict[str, Any]]] = [
    ("recall", {"query": 42}),
    ("recall", {"query": "cello", "k": "many"}),
    ("recall", {"query": "cello", "k": 500}),
    ("recall", {"query": ""}),
    ("recall", {"query": "x" * 1_000_000}),
    ("recent", {"n": -1}),
    ("about", {"person": ["Alice"]}),
    ("about", {"person": "@"}),
    ("record", {"text": None}),
    ("record", {"text": "y" * 1_000_000}),
    ("remember", {"text": "z" * 1_000_000}),
    ("remember", {"text": "fine", "about": "w" * 1_000_000}),
    ("forget", {"ids": ["m999999"]}),
    ("forget", {"ids": ["not an id"]}),
    ("forget", {"ids": "m1"}),
    ("forget", {"ids": []}),
    ("nonexistent", {}),
]


async def test_bad_arguments_are_mcp_errors_and_the_server_lives_on(tmp_path: Path) -> None:
    db = tmp_path / "engram.db"
    await seeded(db)
    async with session(db) as s:
        for tool, args in BAD:
            await refused(s, tool, args)
            assert "cello" in await call(s, "recall", query="cello", k=5)
        assert "1 lines said here" in await call(s, "stats")  # nothing of it was recorded


async def test_a_lone_surrogate_is_an_answer_not_a_dead_server(tmp_path: Path) -> None:
    """The SDK's client cannot even send a lone surrogate (it encodes UTF-8): the messages go raw, as
    another client may write them, ``\\ud83d`` escaped in valid JSON."""
    db = tmp_path / "engram.db"
    await seeded(db)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "astrbot_plugin_engram.memory", "--db", str(db), "--embedder", "none", "mcp",
        "--place", HERE, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    assert proc.stdin and proc.stdout

    async def send(message: dict[str, Any]) -> None:
        assert proc.stdin
        proc.stdin.write((json.dumps(message) + "\n").encode("ascii"))  # json escapes the surrogate
        await proc.stdin.drain()

    async def answer(n: int) -> dict[str, Any]:
        assert proc.stdout
        while True:
            line = json.loads(await asyncio.wait_for(proc.stdout.readline(), 60))
            if line.get("id") == n or line.get("params", {}).get("level") == "error":
                return dict(line)  # the answer, or the error the SDK says for a message it cannot read

    def call_tool(n: int, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": n, "method": "tools/call",
                "params": {"name": tool, "arguments": args}}

    try:
        await send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}})
        await answer(1)
        await send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await send(call_tool(2, "record", {"text": "broken emoji \ud83d here"}))
        first = await answer(2)  # the SDK's JSON parser refuses the message: an error, said
        assert first.get("params", {}).get("level") == "error" or first["result"]["isError"], first
        await send(call_tool(3, "recall", {"query": "broken emoji \udc00"}))
        third = await answer(3)
        assert third.get("params", {}).get("level") == "error" or "result" in third, third
        await send(call_tool(4, "recall", {"query": "cello"}))
        assert "cello" in (await answer(4))["result"]["content"][0]["text"]  # the server lives on
        await send(call_tool(5, "stats", {}))
        assert "1 lines said here" in (await answer(5))["result"]["content"][0]["text"]  # nothing half-kept
    finally:
        proc.stdin.close()
        await asyncio.wait_for(proc.wait(), 60)


PLACES = ("qq:group:1", "qq:group:2", "qq:private:9")
WORDS = ("kiwi", "cello", "vault", "harbour")
world = st.lists(st.tuples(st.sampled_from(("line", "memory")), st.sampled_from(PLACES),
                           st.sampled_from(("public", "self", "owner", "place")),
                           st.lists(st.sampled_from(WORDS), min_size=1, max_size=3)), min_size=1, max_size=12)


def allowed(kind: str, where: str, scope: str, place: str, owner: bool) -> bool:
    """The rule, written out again: a line only in its place; a memory public, the bot's, its own
    place's, or the owner's in the owner's private view."""
    if kind == "line":
        return where == place
    return (scope in ("public", "self") or (scope == "place" and where == place)
            or (scope == "owner" and owner))


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(items=world, place=st.sampled_from(PLACES), owner=st.booleans())
def test_no_tool_shows_what_its_place_may_not_see(tmp_path_factory: Any, items: list[Any], place: str,
                                                  owner: bool) -> None:
    db = tmp_path_factory.mktemp("mcp") / "engram.db"

    async def run() -> None:
        e = await Engram.open(db, NoEmbedder(), background=False)
        keys: dict[str, tuple[str, bool]] = {}  # token -> its key, and whether this audience may see it
        try:
            for n, (kind, where, scope, words) in enumerate(items):
                token = f"tok{n}x"
                body = f"{' '.join(words)} {token}"
                if kind == "line":
                    ep = Episode(place=where, content=body, actor="qq:5", actor_name="Eve")
                    key = f"e{await e.record(ep)}"
                else:
                    s = f"space:{where}" if scope == "place" else scope
                    key = f"m{await e.add_memory(Memory(text=body, scope=s))}"
                keys[token] = (key, allowed(kind, where, scope, place, owner))
        finally:
            await e.close()
        async with session(db, place, *(["--owner"] if owner else [])) as s:
            shown = " ".join([await call(s, "recall", query=w, k=20) for w in WORDS]
                             + [await call(s, "recent", n=20), await call(s, "about", person="Eve")])
            for token, (key, visible) in keys.items():
                assert visible or token not in shown, f"{key} ({token}) leaked to {place}"
                if not visible:
                    await refused(s, "forget", {"ids": [key]})
        e = await Engram.open(db, NoEmbedder(), background=False)
        try:  # every refused forget left its item in place
            assert (await e.counts())["episodes"] == sum(1 for i in items if i[0] == "line")
        finally:
            await e.close()

    asyncio.run(run())
