"""A seeded store (the demo's Chinese and English chats, plus hostile text) and a dashboard over it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer

from astrbot_plugin_engram.dashboard import DashboardSettings, make_app
from astrbot_plugin_engram.memory import Engram, Episode, Memory
from astrbot_plugin_engram.memory.demo import episodes, load_sample, memories

from ..conftest import HashEmbedder

TOKEN = "test-token-0123456789abcdef"
XSS_TEXT = '<script>window.pwned=1</script><img src=x onerror="window.pwned=2">'
XSS_NAME = '<img src=x onerror="window.pwned=3">Mallory'
XSS_SPACE = "qq:group:<b>666</b>"
OWNER_DM = "qq:private:10001"
GROUP = "qq:group:5150"


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
            Episode(space=XSS_SPACE, content=XSS_TEXT, actor="qq:666", actor_name=XSS_NAME, time=then)
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
    finally:
        await engram.close()
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
    path, ids = seeded
    engram = await Engram.open(path, HashEmbedder(), background=False)
    app = make_app(
        engram,
        DashboardSettings(
            token=TOKEN,
            budget=300,
            recall_k=5,
            identity=lambda: "我是小记，读书会的助手。",
            owner_spaces=lambda s: s == OWNER_DM,
        ),
    )
    client = TestClient(TestServer(app))
    await client.start_server()
    try:
        yield client, engram, ids
    finally:
        await client.close()
        await engram.close()


AUTH = {"Authorization": f"Bearer {TOKEN}"}
