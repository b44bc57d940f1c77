"""``DayReads``: the bot's days and its sense of time.
Run on every backend (``conftest.BACKENDS``)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from astrbot_plugin_engram.memory import Episode
from astrbot_plugin_engram.memory.store import Store

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=timezone(timedelta(hours=8)))
A, B = "qq:group:1", "qq:group:2"


def ep(text: str, place: str = A, minutes: float = 0, **kw: object) -> Episode:
    return Episode(place=place, content=text, time=T0 + timedelta(minutes=minutes), **kw)  # type: ignore[arg-type]


async def test_last_episode_time_of_a_place(store: Store) -> None:
    async with store.transaction() as tx:
        await tx.add_episodes([ep("a", A, 0), ep("b", A, 10), ep("c", B, 20)])
    assert await store.last_episode_time(A) == T0 + timedelta(minutes=10)
    assert await store.last_episode_time(A, before=T0 + timedelta(minutes=5)) == T0
    assert await store.last_episode_time("elsewhere") is None
