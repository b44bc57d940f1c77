"""The write path under concurrency: ids, order, and what a failed or cancelled caller does to others."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from astrbot_plugin_engram.memory import Audience, Engram, Episode
from astrbot_plugin_engram.memory.store.sqlite import transactions

SPACES = ("qq:group:1", "qq:group:2", "qq:private:3")


class GatedStore:
    """Wraps the real store's transactions: each batch of episodes waits for its gate; a batch holding
    'poison' fails."""

    def __init__(self, engram: Engram, monkeypatch: pytest.MonkeyPatch):
        self.real, self.real_append = engram.store.transaction, engram.store.append_episodes
        self.batches: list[list[str]] = []
        self.gates = [asyncio.Event() for _ in range(10)]
        self.arrived = [asyncio.Event() for _ in range(10)]
        monkeypatch.setattr(engram.store, "transaction", self.transaction)
        monkeypatch.setattr(engram.store, "append_episodes", self.append_episodes)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Any]:
        async with self.real() as tx:
            yield GatedWrites(self, tx)

    async def append_episodes(self, episodes: Sequence[Episode], prepared: Sequence[tuple[str, int]]
                              ) -> list[int] | None:
        """Recording's shortcut (one trip), gated as a transaction's batch is."""
        return await self.add_episodes(None, episodes, prepared)

    async def add_episodes(self, tx: Any, episodes: Sequence[Episode],
                           prepared: Sequence[tuple[str, int]] | None = None) -> list[int]:
        n = len(self.batches)
        self.batches.append([e.content for e in episodes])
        self.arrived[n].set()
        await self.gates[n].wait()
        if any("poison" in e.content for e in episodes):
            raise OSError("disk full")
        if tx is None:  # the shortcut's batch, which falls back to a transaction where it cannot
            assert prepared is not None
            ids = await self.real_append(episodes, prepared)
            if ids is not None:
                return list(ids)
            async with self.real() as tx:
                return list(await tx.add_episodes(episodes, prepared))
        return list(await tx.add_episodes(episodes, prepared))

    async def until_batches(self, n: int) -> None:
        await asyncio.wait_for(self.arrived[n - 1].wait(), 10)


class GatedWrites:
    """One transaction's writes, its batch of episodes through ``GatedStore.add_episodes``."""

    def __init__(self, gated: GatedStore, tx: Any):
        self.gated, self.tx = gated, tx

    async def add_episodes(self, episodes: Sequence[Episode],
                           prepared: Sequence[tuple[str, int]] | None = None) -> list[int]:
        return await self.gated.add_episodes(self.tx, episodes, prepared)


@pytest.fixture(params=["one trip", "a trip a statement"])
def commit_trips(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """A batch's statements and COMMIT in one trip to the writer's thread (aiosqlite 0.20-0.22), or,
    with an aiosqlite that lacks the hook, one trip each: the same outcome either way."""
    if request.param != "one trip":
        monkeypatch.setattr(transactions, "_one_trip", lambda db: None)

        def unused(conn: sqlite3.Connection, deferred: transactions.Deferred,
                   guessed: int | None = None) -> int:
            raise AssertionError("the one-trip path ran")

        monkeypatch.setattr(transactions, "_finish", unused)
    return str(request.param)


def records(e: Engram, texts: list[str], place: str = SPACES[0]) -> list[asyncio.Task[int]]:
    return [asyncio.ensure_future(e.record(Episode(place=place, content=t))) for t in texts]


async def settled(tasks: list[asyncio.Task[int]]) -> list[int | BaseException]:
    """Each task's id or error; a caller left hanging fails the test instead of stalling it."""
    await asyncio.wait(tasks, timeout=10)
    assert all(t.done() for t in tasks), "some callers were never answered"
    return [t.exception() or t.result() if not t.cancelled() else asyncio.CancelledError() for t in tasks]


async def test_producers_in_several_places_get_their_own_ids_in_order(engram: Engram,
                                                                      commit_trips: str) -> None:
    async def produce(p: int) -> list[tuple[int, str]]:
        out = []
        for n in range(25):  # each awaits its id before recording the next, like a chat hook
            text = f"producer {p} message {n}"
            out.append((await engram.record(Episode(place=SPACES[p % 3], content=text)), text))
        return out

    acks = [a for got in await asyncio.gather(*(produce(p) for p in range(8))) for a in got]
    eps = await engram.store.get_episodes([i for i, _ in acks])
    assert len(eps) == 200 and all(eps[i].content == text for i, text in acks)
    for place in SPACES:  # seq follows the order the episodes were acknowledged in, without gaps
        ids = sorted(i for i in eps if eps[i].place == place)
        assert [eps[i].seq for i in ids] == list(range(1, len(ids) + 1))
    for p in range(8):  # one producer's episodes come out in the order it recorded them
        mine = [i for i, text in acks if text.startswith(f"producer {p} ")]
        assert mine == sorted(mine)


async def test_a_failed_batch_fails_only_its_own_callers(
        engram: Engram, monkeypatch: pytest.MonkeyPatch) -> None:
    store = GatedStore(engram, monkeypatch)
    first = records(engram, ["one", "two"])
    await store.until_batches(1)
    failing = records(engram, ["three", "poison four"])  # queued while the first batch commits
    store.gates[0].set()
    await store.until_batches(2)
    last = records(engram, ["five", "six"])
    store.gates[1].set()
    store.gates[2].set()
    done = await settled([*first, *failing, *last])
    assert store.batches == [["one", "two"], ["three", "poison four"], ["five", "six"]]
    assert [type(d) for d in done[2:4]] == [OSError, OSError]
    ok = [d for d in done[:2] + done[4:] if isinstance(d, int)]
    eps = await engram.store.get_episodes(ok)
    assert [eps[i].content for i in ok] == ["one", "two", "five", "six"]
    assert [eps[i].seq for i in ok] == [1, 2, 3, 4]  # the failed batch left no hole in the sequence
    assert (await engram.stats())["episodes"] == 4


async def test_a_cancelled_caller_does_not_lose_the_others_episodes(
        engram: Engram, monkeypatch: pytest.MonkeyPatch) -> None:
    store = GatedStore(engram, monkeypatch)
    tasks = records(engram, [f"line {i}" for i in range(5)])
    await store.until_batches(1)
    tasks[2].cancel()  # e.g. the host times out one message hook while its batch commits
    store.gates[0].set()
    done = await settled(tasks)
    assert isinstance(done[2], asyncio.CancelledError)
    ids = [d for d in done if isinstance(d, int)]
    eps = await engram.store.get_episodes(ids)
    assert [eps[i].content for i in ids] == ["line 0", "line 1", "line 3", "line 4"]
    assert (await engram.stats())["episodes"] == 5  # once queued, the cancelled caller's line is kept too


def stored(path: Path) -> list[str]:
    """The episodes another connection sees in the file (committed ones only)."""
    with sqlite3.connect(path) as db:
        return [r[0] for r in db.execute("SELECT content FROM episodes ORDER BY id")]


async def test_each_producer_is_answered_only_after_its_batch_committed(
        engram: Engram, db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The batch's inserts and its COMMIT are one trip to the writer's thread: while that trip is
    held, no caller has its id and no other connection sees a line; once it ends, all of them."""
    entered, release = threading.Event(), threading.Event()
    finish = transactions._finish

    def held(conn: sqlite3.Connection, deferred: transactions.Deferred) -> int:
        entered.set()
        release.wait(10)
        return finish(conn, deferred)

    monkeypatch.setattr(transactions, "_finish", held)
    tasks = records(engram, [f"line {i}" for i in range(8)])
    assert await asyncio.to_thread(entered.wait, 10)
    await asyncio.sleep(0.05)
    assert not any(t.done() for t in tasks) and stored(db_path) == []
    release.set()
    ids = await asyncio.gather(*tasks)
    assert stored(db_path) == [f"line {i}" for i in range(8)] and ids == sorted(ids)


async def test_a_batch_failing_inside_its_commit_fails_all_its_callers_and_nothing_else(
        engram: Engram, db_path: Path, commit_trips: str) -> None:
    """A statement of the batch fails in the writer (here a trigger another program added): every
    caller waiting in that batch gets the error, none of its lines is kept, what committed before
    stays, and the next batch is written after it without a hole, counted and found."""
    before = await asyncio.gather(*records(engram, ["one", "two"]))
    with sqlite3.connect(db_path) as db:
        db.execute("CREATE TRIGGER refuse BEFORE INSERT ON episodes WHEN NEW.content LIKE '%poison%'"
                   " BEGIN SELECT RAISE(ABORT, 'refused by another program'); END")
    done = await settled(records(engram, ["three", "poison four", "five"]))  # one batch
    assert all(isinstance(d, sqlite3.IntegrityError) and "refused" in str(d) for d in done)
    with sqlite3.connect(db_path) as db:
        db.execute("DROP TRIGGER refuse")
    [six] = await asyncio.gather(*records(engram, ["six"]))
    assert stored(db_path) == ["one", "two", "six"]
    eps = await engram.store.get_episodes([*before, six])
    assert [e.seq for e in eps.values()] == [1, 2, 3]
    assert await engram.store.integrity() == []  # the dashboard's counts follow the rolled-back batch
    assert six in [h.id for h in await engram.recall("six", Audience(SPACES[0]))]


def test_the_checked_episode_keeps_every_field() -> None:
    # record() rebuilds each episode field by field (cleaned); a field added later must not be lost
    from dataclasses import fields

    from astrbot_plugin_engram.memory.validate import checked_episode

    t = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)
    ep = Episode(place="qq:group:1", content="hi", actor="qq:1", actor_name="Ann", kind="image", time=t,
                 source="qq", meta={"image": "a.png"}, id=7, seq=3, section=2)
    checked = checked_episode(ep)
    names = [f.name for f in fields(Episode)]
    assert [getattr(checked, n) for n in names] == [getattr(ep, n) for n in names]
