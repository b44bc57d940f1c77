"""A seeded store (the demo's Chinese and English chats, plus hostile text) and a dashboard over it."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer

from astrbot_plugin_engram.dashboard import DashboardSettings, make_app
from astrbot_plugin_engram.memory import Engram, Episode, Memory, Store
from astrbot_plugin_engram.memory.cli.demo import episodes, load_sample, memories
from astrbot_plugin_engram.memory.self.identity import IdentityFolder, atomic_write
from astrbot_plugin_engram.memory.self.proposals import Proposals
from astrbot_plugin_engram.memory.self.selfhood import BlockDefaults
from astrbot_plugin_engram.scheduler import Job, JobRegistry, Scheduler

from ..conftest import HashEmbedder

TOKEN = "test-token-0123456789abcdef"
XSS_TEXT = '<script>window.pwned=1</script><img src=x onerror="window.pwned=2">'
XSS_NAME = '<img src=x onerror="window.pwned=3">Mallory'
XSS_SPACE = 'qq:group:"\'><b>666</b>'  # quotes: an id that breaks out of an attribute
OWNER_DM = "qq:private:10001"
GROUP = "qq:group:5150"
JOBS = ("consolidate", "diary", "fading")  # what the host schedules; "fading" never ran


async def seed_job_runs(engram: Engram) -> None:
    """Runs recorded by the real scheduler: consolidation twice (counts, failed and refused calls),
    a diary job that failed with hostile text in its error."""
    stats = iter([{"added": 2, "updated": 1, "calls": 3},
                  {"added": 1, "updated": 0, "calls": 2, "failed.timeout": 1, "refused.scope": 2}])

    async def consolidate() -> dict[str, int]:
        return next(stats)

    async def diary() -> None:
        raise RuntimeError(XSS_TEXT)

    registry = JobRegistry()
    registry.add(Job("consolidate", consolidate))
    registry.add(Job("diary", diary))

    async def records() -> Store:
        return engram.store

    now = time.time()
    clock = iter([now - 7200, now - 7190, now - 3600, now - 3580, now - 60, now - 59])
    scheduler = Scheduler(registry, records, key="dashboard-seed", clock=lambda: next(clock))
    await scheduler.run_now("consolidate")  # two hours ago
    await scheduler.run_now("consolidate")  # an hour ago
    with pytest.raises(RuntimeError):
        await scheduler.run_now("diary")  # a minute ago


SELF_IMAGE = "I host the book club and like quiet mornings. 我主持读书会。" + XSS_TEXT


def seed_identity(data_dir: Path) -> None:
    """The self's documents as the self jobs leave them: a core identity changed by one approved
    proposal (its old version kept), a self-image rewritten once (its old version kept), and
    proposals: one approved, one rejected, one (hostile) still open."""
    folder = IdentityFolder(data_dir)
    atomic_write(folder.self_path, "我是小记，读书会的助手。\n")
    day = datetime(2026, 11, 29, 22, 0, tzinfo=timezone.utc)
    folder.replace(folder.image_path, "I am new here. 我刚来。", now=day)
    folder.replace(folder.image_path, SELF_IMAGE, now=day + timedelta(days=1))
    proposals = Proposals(folder)
    approved = proposals.propose("Call the owner 老板", "she asked me to", OWNER_DM, now=day)
    proposals.propose(XSS_TEXT, XSS_NAME, GROUP, now=day + timedelta(hours=1))
    rejected = proposals.propose("Speak only English", "a guess", GROUP, now=day + timedelta(hours=2))
    proposals.approve(approved.id, now=day + timedelta(hours=3))
    proposals.reject(rejected.id, now=day + timedelta(hours=3))


async def seed(path: Path) -> dict[str, int]:
    """The demo sample, a memory with sources and two versions, a diary entry and hostile text."""
    sample = load_sample()
    engram = await Engram.open(path, HashEmbedder(), background=False)
    try:
        ids = await engram.record_many(episodes(sample, datetime.now(timezone.utc)))
        for m in memories(sample):
            await engram.add_memory(m)
        then = datetime.now(timezone.utc) - timedelta(days=1)
        xss_ep = await engram.record(
            Episode(place=XSS_SPACE, content=XSS_TEXT, actor="qq:666", actor_name=XSS_NAME, time=then)
        )
        first = await engram.add_memory(
            Memory(
                text="王磊喜欢浅烘的咖啡豆",
                scope=f"space:{GROUP}",
                kind="preference",
                subjects=("qq:10003",),
                sources=tuple(ids[9:11]),
            )
        )
        second = await engram.update(first, "王磊喜欢浅烘的埃塞俄比亚咖啡豆 (light roast)")
        xss = await engram.add_memory(
            Memory(text=XSS_TEXT, scope=f"space:{XSS_SPACE}", subjects=("qq:666",), sources=(xss_ep,))
        )
        diary = await engram.add_memory(
            Memory(text="今天读书会很热闹。A lively club day.", scope="self", kind="diary")
        )
        await engram.embed_pending()
        await seed_job_runs(engram)
    finally:
        await engram.close()
    seed_identity(path.parent)
    return {"first": first, "second": second, "xss": xss, "diary": diary, "xss_episode": xss_ep}


@pytest.fixture
async def seeded(tmp_path: Path) -> tuple[Path, dict[str, int]]:
    path = tmp_path / "engram.db"
    return path, await seed(path)


@pytest.fixture
async def dash(
    seeded: tuple[Path, dict[str, int]],
) -> AsyncIterator[tuple[TestClient, Engram, dict[str, int]]]:
    """A test client (unauthenticated) over the dashboard of the seeded store, opened as the bot would."""
    settings = DashboardSettings(token=TOKEN, block=BlockDefaults(inject_budget_tokens=300, recall_k=5),
                                 jobs=lambda: JOBS, identity=lambda: "我是小记，读书会的助手。",
                                 owner_places=lambda s: s == OWNER_DM)
    async for served in serve(seeded, settings):
        yield served


async def serve(seeded: tuple[Path, dict[str, int]],
                settings: DashboardSettings) -> AsyncIterator[tuple[TestClient, Engram, dict[str, int]]]:
    """The seeded store opened as the bot would, and a test client of its dashboard with ``settings``."""
    path, ids = seeded
    engram = await Engram.open(path, HashEmbedder(), background=False)
    client = TestClient(TestServer(make_app(engram, settings)))
    await client.start_server()
    try:
        yield client, engram, ids
    finally:
        await client.close()
        await engram.close()


AUTH = {"Authorization": f"Bearer {TOKEN}"}
