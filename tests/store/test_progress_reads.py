"""``ProgressReads``: where background work stands (cursors, what is left to embed, each place's
backlog).
Run on every backend (``conftest.BACKENDS``)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from astrbot_plugin_engram.memory import Episode, Memory
from astrbot_plugin_engram.memory.store import (
    EmbedRow,
    Store,
)

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=timezone(timedelta(hours=8)))
A, B = "qq:group:1", "qq:group:2"


def ep(text: str, place: str = A, minutes: float = 0, **kw: object) -> Episode:
    return Episode(place=place, content=text, time=T0 + timedelta(minutes=minutes), **kw)  # type: ignore[arg-type]


async def test_cursors_start_at_zero_and_keep_what_was_set(store: Store) -> None:
    assert await store.cursor("jobs:diary") == 0
    async with store.transaction() as tx:
        await tx.set_cursor("jobs:diary", 42)
    async with store.transaction() as tx:
        await tx.set_cursor("jobs:diary", 43)
    assert await store.cursor("jobs:diary") == 43


async def test_memories_to_embed_carry_scope_and_status(store: Store) -> None:
    async with store.transaction() as tx:
        old = await tx.add_memory(Memory("v1", "self"))
    async with store.transaction() as tx:
        new = await tx.add_memory(Memory("v2", "owner"), supersedes=old)  # a version keeps the scope
    rows = await store.items_to_embed("m", 0, 10)
    assert rows == [EmbedRow(old, "self", "superseded", "v1"), EmbedRow(new, "self", "active", "v2")]


async def test_a_places_backlog_and_the_episodes_past_its_cursor(store: Store) -> None:
    async with store.transaction() as tx:
        await tx.add_episodes([ep("a", A, 0), ep("b", B, 1), ep("c", A, 2), ep("d", A, 3)])
    backlog = {row[0]: row[1:] for row in await store.episode_backlog({A: 1})}

    def at(minutes: int) -> float:
        return (T0 + timedelta(minutes=minutes)).timestamp()

    assert backlog == {A: (2, 4, at(2), at(3)), B: (1, 2, at(1), at(1))}
    assert await store.episode_backlog({A: 4, B: 2}) == []
    assert [e.content for e in await store.episodes_after(A, 1, 10)] == ["c", "d"]
    assert [e.content for e in await store.episodes_after(A, 0, 2)] == ["a", "c"]


async def test_the_lines_past_a_cursor_whose_own_line_was_erased_or_is_another_places(store: Store) -> None:
    """The cursor is an id: the place's lines past it are those after the place's last line at or
    before it (read by sequence number), whether that line was forgotten or the id is another
    place's."""
    async with store.transaction() as tx:
        ids = await tx.add_episodes([ep("a", A, 0), ep("b", B, 1), ep("c", A, 2), ep("d", B, 3),
                                     ep("e", A, 4), ep("f", A, 5)])
    async with store.transaction() as tx:
        await tx.erase([ids[2]], [])  # "c", the cursor's own line
    for cursor, left in ((ids[2], ["e", "f"]), (ids[3], ["e", "f"]), (ids[1], ["e", "f"]),
                         (ids[0], ["e", "f"]), (0, ["a", "e", "f"]), (ids[4], ["f"]), (ids[5], []),
                         (ids[5] + 9, [])):
        assert [e.content for e in await store.episodes_after(A, cursor, 10)] == left, cursor
        backlog = {row[0]: row[1:3] for row in await store.episode_backlog({A: cursor, B: ids[3]})}
        assert backlog == ({A: (len(left), ids[5])} if left else {}), cursor
    assert [e.content for e in await store.episodes_after(A, 0, 2)] == ["a", "e"]


async def test_cursors_by_prefix_move_with_the_memories_of_one_transaction(store: Store) -> None:
    async with store.transaction() as tx:
        await tx.set_cursor("consolidate:x", 5)
    async with store.transaction() as tx:
        await tx.set_cursor("vectors:m:e", 9)
    with pytest.raises(RuntimeError):
        async with store.transaction() as tx:
            await tx.add_memory(Memory("learned", "public"))
            await tx.set_cursor("consolidate:x", 7)
            raise RuntimeError("the batch failed half way")
    assert await store.cursors("consolidate:") == {"consolidate:x": 5}
    assert (await store.counts())["memories"] == 0
    async with store.transaction() as tx:
        await tx.add_memory(Memory("learned", "public"))
        await tx.set_cursor("consolidate:x", 7)
    assert await store.cursors("consolidate") == {"consolidate:x": 7}
    assert (await store.counts())["memories"] == 1
