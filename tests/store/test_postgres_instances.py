"""Several instances, one memory (issue 33): two Engram processes on one PostgreSQL database, each
recording, each recalling the other's new lines within a bounded time (the change log polled every
second: ``store/postgres/following``), sequence numbers unique per place, one consolidation turn per
place across them, and a hard forget erased in both."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from astrbot_plugin_engram.memory import Audience, Engram, Episode, NoEmbedder

from ..conftest import HashEmbedder

ROOT = Path(__file__).resolve().parents[2]
T0 = datetime(2024, 5, 1, 13, 0, tzinfo=timezone.utc)
PLACE = "qq:group:1"
BOUND = 3.0  # seconds: one look at the log a second, with room for a loaded machine


class Instance:
    """The other process (``pg_instance.py``)."""

    def __init__(self, proc: asyncio.subprocess.Process):
        self.proc = proc

    async def ask(self, line: str) -> Any:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write((line + "\n").encode())
        await self.proc.stdin.drain()
        answer = await asyncio.wait_for(self.proc.stdout.readline(), 60)
        assert answer, "the other instance stopped"
        return json.loads(answer)


@pytest.fixture
async def database(postgres_server: Any) -> str:
    return str(postgres_server.fresh_database())


@pytest.fixture
async def other(database: str, tmp_path: Path) -> AsyncIterator[Instance]:
    (tmp_path / "b").mkdir()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.store.pg_instance", database, str(tmp_path / "b"), cwd=ROOT,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    yield Instance(proc)
    assert proc.stdin is not None
    proc.stdin.close()
    await asyncio.wait_for(proc.wait(), 30)


async def wait_for(check: Any, seconds: float = 10) -> float:
    start = asyncio.get_running_loop().time()
    while asyncio.get_running_loop().time() - start < seconds:
        if await check():
            return asyncio.get_running_loop().time() - start
        await asyncio.sleep(0.05)
    raise AssertionError("not within 10 s")


async def test_two_instances_record_recall_forget_and_take_turns(database: str, other: Instance,
                                                                  tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    a = await Engram.open(database, NoEmbedder(), folder=tmp_path / "a")
    try:
        await other.ask("record qq:group:0 1 warmup")  # both open, both migrated
        # both record into one place at once: every line gets its own sequence number
        mine = asyncio.gather(*(a.record(Episode(place=PLACE, content=f"zebra number {i}", actor="qq:a",
                                                 actor_name="Ann", time=T0 + timedelta(seconds=i)))
                                for i in range(60)))
        theirs = await other.ask(f"record {PLACE} 60 walrus")
        ours = await mine
        assert len(set(ours) | set(theirs)) == 120
        lines = await a.store.place_episodes(PLACE, limit=500)
        assert sorted(int(e.seq or 0) for e in lines) == list(range(1, 121))

        # each recalls the other's new lines within the bound
        seen = await other.ask(f"wait-recall {PLACE} zebra")
        assert seen is not None and seen < BOUND

        async def a_sees_walrus() -> bool:
            return any("walrus" in h.text for h in await a.recall("walrus", Audience(PLACE), k=5))
        assert await wait_for(a_sees_walrus) < BOUND

        # one consolidation turn per place across the instances
        assert await other.ask("take-turn consolidate:qq:group:1") is True
        async with a.store.turn("consolidate:qq:group:1") as mine_turn:
            assert mine_turn is False
        async with a.store.turn("consolidate:qq:group:2") as other_place:
            assert other_place is True
        assert await other.ask("give-turn") is True
        async with a.store.turn("consolidate:qq:group:1") as mine_turn:
            assert mine_turn is True

        # a hard forget in one instance is erased in the other's recall, and from the database
        secret = await a.record(Episode(place=PLACE, content="the vault code is marzipan", actor="qq:c",
                                        actor_name="Cid", time=T0 + timedelta(minutes=5)))
        assert await other.ask(f"wait-recall {PLACE} marzipan") is not None
        await a.forget_person("qq:c")
        gone = await other.ask(f"wait-gone {PLACE} marzipan")
        assert gone is not None and gone < BOUND
        assert await a.store.get_episodes([secret]) == {}
        assert await a.store.episodes_where(mentions=["marzipan"]) == []
        assert "qq:c" not in {p for p, _, _ in await a.store.people()}
    finally:
        await a.close()


class Counting(HashEmbedder):
    """The hash embedder, counting the texts it was asked to embed (what an endpoint would bill)."""

    def __init__(self) -> None:
        super().__init__(dim=16)
        self.texts = 0

    async def embed(self, texts: list[str], kind: str = "passage") -> Any:
        self.texts += len(texts)
        await asyncio.sleep(0.01)  # a model takes its time: the other instance tries meanwhile
        return await super().embed(texts, kind)  # type: ignore[arg-type]


async def test_two_instances_embed_each_new_line_once(database: str, tmp_path: Path) -> None:
    one, two = Counting(), Counting()
    a = await Engram.open(database, one, background=False, folder=tmp_path)
    b = await Engram.open(database, two, background=False, folder=tmp_path)
    try:
        await a.record_many([Episode(place=PLACE, content=f"line {i} about otters",
                                     time=T0 + timedelta(seconds=i)) for i in range(300)])
        await asyncio.gather(a.embed_pending(), b.embed_pending(), a.embed_pending(), b.embed_pending())
        assert one.texts + two.texts == 300  # each line embedded once, by one of them

        async def both_indexed() -> bool:
            return len(a.index or ()) == 300 and len(b.index or ()) == 300
        assert await wait_for(both_indexed) < BOUND  # the other's vectors heard, as any change
    finally:
        await a.close()
        await b.close()


async def test_a_place_another_instance_is_consolidating_is_left_to_it(database: str, tmp_path: Path,
                                                                       fake_openai: Any) -> None:
    """One consolidation batch per place across instances: while one holds the place's turn (its model
    call under way), the other sends nothing for that place, and takes it up once the turn is free."""
    from astrbot_plugin_engram.memory.chat import OpenAIChat
    from astrbot_plugin_engram.memory.consolidation import ConsolidationSettings, Consolidator
    from astrbot_plugin_engram.memory.consolidation.run import CURSOR

    a = await Engram.open(database, NoEmbedder(), background=False, folder=tmp_path)
    b = await Engram.open(database, NoEmbedder(), background=False, folder=tmp_path)
    try:
        await a.record_many([Episode(place=PLACE, content=f"line {i}", actor="qq:a", actor_name="Ann",
                                     time=T0 + timedelta(minutes=i)) for i in range(3)])
        fake_openai.default_reply = '{"actions": [{"op": "none"}]}'
        con = Consolidator(b, OpenAIChat("m", fake_openai.base_url), ConsolidationSettings(timeout=5.0))
        async with a.store.turn(CURSOR + PLACE) as mine:  # a's batch of this place, under way
            assert mine
            report = await con.run(force=True)
        assert report.calls == 0 and fake_openai.chat_requests() == []
        report = await con.run(force=True)
        assert report.calls == 1 and report.episodes == 3
    finally:
        await a.close()
        await b.close()
