"""The store itself: opened read-only it reads and refuses every write; its integrity check.
Run on every backend (``conftest.BACKENDS``)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from astrbot_plugin_engram.memory import Episode, Memory, StoreError
from astrbot_plugin_engram.memory.store import Store

from .conftest import Opener

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=timezone(timedelta(hours=8)))
A, B = "qq:group:1", "qq:group:2"


def ep(text: str, place: str = A, minutes: float = 0, **kw: object) -> Episode:
    return Episode(place=place, content=text, time=T0 + timedelta(minutes=minutes), **kw)  # type: ignore[arg-type]


async def test_a_read_only_store_reads_and_refuses_every_write(open_store: Opener, tmp_path: Path) -> None:
    writer = await open_store(tmp_path)
    try:
        async with writer.transaction() as tx:
            await tx.add_episodes([ep("hello")])
        reader = await open_store(tmp_path, read_only=True)
        try:
            assert reader.read_only and not writer.read_only
            assert (await reader.get_episodes([1]))[1].content == "hello"
            async with writer.transaction() as tx:
                await tx.add_episodes([ep("new, seen at once")])
            assert await reader.last_episode_id() == 2
            with pytest.raises(StoreError, match="read-only"):
                async with reader.transaction() as tx:
                    await tx.add_episodes([ep("refused")])
            with pytest.raises(StoreError, match="read-only"):
                async with reader.transaction() as tx:
                    await tx.set_cursor("c", 1)
            assert await reader.integrity() == []
        finally:
            await reader.close()
    finally:
        await writer.close()


async def test_read_only_needs_an_existing_store(open_store: Opener, tmp_path: Path) -> None:
    with pytest.raises(StoreError):
        await open_store(tmp_path, read_only=True)
    assert not any(tmp_path.iterdir())  # noqa: ASYNC240 - nothing was created


async def test_a_store_reports_itself_sound(store: Store) -> None:
    async with store.transaction() as tx:
        await tx.add_episodes([ep("hello")])
    async with store.transaction() as tx:
        await tx.add_memory(Memory("tea", "self"))
    assert await store.integrity() == []
