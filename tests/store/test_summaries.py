"""The counts the store keeps beside the episodes (migration m011; the dashboard's overview and graph
read them) equal a count of every episode after any writes and erases, on a new store and on one
migrated from before them, however often the speaker and talk-pair counts a batch appends beside
the totals are folded in (m017); an erased person or place leaves no row behind in them."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import AsyncIterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from astrbot_plugin_engram import memory
from astrbot_plugin_engram.memory import Episode, Store
from astrbot_plugin_engram.memory.store.sqlite import migrations, summaries, writes
from astrbot_plugin_engram.memory.text import words

from ..counting import count_episodes

SPACES = ["qq:group:1", "qq:group:2", "qq:private:3"]
PEOPLE = ["qq:1", "qq:2", "qq:3", "qq:4", ""]  # "": a line without a speaker
ZONES = [timezone(timedelta(hours=8)), timezone(timedelta(hours=-5)), timezone.utc]
T0 = datetime(2024, 5, 1, 20, 0, tzinfo=timezone.utc)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "store.db"


@pytest.fixture
async def store(path: Path) -> AsyncIterator[Store]:
    """A SQLite store at ``path``, closed also when the test fails."""
    s = await memory.open_store(path)
    yield s
    await s.close()


def some_episodes(rng: random.Random, n: int, start: int) -> list[Episode]:
    out = []
    for i in range(n):
        actor = rng.choice(PEOPLE)
        t = (T0 + timedelta(hours=3 * (start + i) + rng.random())).astimezone(rng.choice(ZONES))
        out.append(Episode(place=rng.choice(SPACES), content=f"line {start + i}", actor=actor,
                           actor_name=f"name of {actor}" if actor else "", time=t))
    return out


async def assert_counts_exact(store: Store, path: Path) -> None:
    """Every read the overview and the graph make equals the count in Python of every episode."""
    c = count_episodes(path)
    assert await store.count_episodes() == c.episodes
    assert await store.episodes_per_day() == sorted(c.per_day.items())
    places = await store.places()
    assert {s: (n, t) for s, n, t in places} == c.places
    assert [n for _, n, _ in places] == sorted((n for n, _ in c.places.values()), reverse=True)
    with sqlite3.connect(path) as db:
        named = {r[0] for r in db.execute("SELECT person FROM aliases")}
    assert {p: n for p, _, n in await store.people()} == {p: c.speakers.get(p, 0) for p in named}
    talks = await store.talks(10_000)
    assert {(a, b): n for a, b, n in talks} == c.talks
    assert [n for *_, n in talks] == sorted(c.talks.values(), reverse=True)
    for k in (1, 2, 5):  # the first few alone: among the totals' first and the rows beside (m017)
        assert await store.talks(k) == talks[:k]
    assert await store.count_talks() == len(c.talks)
    assert (await store.counts())["spaces"] == len(c.places)
    assert await store.integrity() == []


async def writes_and_erases(store: Store, path: Path, seed: int, check: bool) -> None:
    rng = random.Random(seed)
    start = 0
    for _ in range(4):
        for size in (1, 37, 5, 60):
            async with store.transaction() as tx:
                await tx.add_episodes(some_episodes(rng, size, start))
            start += size
        live = [r[0] for r in sqlite3.connect(path).execute("SELECT id FROM episodes").fetchall()]
        async with store.transaction() as tx:
            erased, _ = await tx.erase(rng.sample(live, 25), [])  # first, middle and last lines alike
        assert len(erased) == 25
        if check:
            await assert_counts_exact(store, path)


@pytest.mark.parametrize("span", [summaries.FOLD_SPAN, 16, 1])  # folded by erases alone, now and then, always
async def test_the_counts_follow_every_write_and_erase(store: Store, path: Path, span: int,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(summaries, "FOLD_SPAN", span)
    await writes_and_erases(store, path, seed=11, check=True)
    assert (await store.count_episodes()) == 4 * (103 - 25)


def rows_beside(path: Path) -> int:
    with sqlite3.connect(path) as db:
        return sum(db.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                   for t in ("speaker_counts_later", "talk_pairs_later"))


async def test_the_counts_appended_beside_the_totals_are_folded_in_as_ids_pass_each_span(
        store: Store, path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Recording's batches (the one-trip shortcut and a transaction alike) append their speaker and
    pair counts; a batch whose ids reach a multiple of FOLD_SPAN folds them into the totals, so the
    rows beside stay few however long the store records, and the totals stay exact."""
    monkeypatch.setattr(summaries, "FOLD_SPAN", 100)
    rng, start, most = random.Random(4), 0, 0
    for size in [30] * 12:
        eps = some_episodes(rng, size, start)
        if start % 60:
            async with store.transaction() as tx:
                await tx.add_episodes(eps)
        elif await store.append_episodes(eps, [words.prepare_episode(e) for e in eps]) is None:
            async with store.transaction() as tx:  # the shortcut needs the places known first
                await tx.add_episodes(eps)
        start += size
        most = max(most, rows_beside(path))
        if start % 100 < 30:  # this batch's ids reached a multiple of 100
            assert rows_beside(path) == 0
    assert 0 < most <= 2 * 100
    await assert_counts_exact(store, path)


async def test_a_line_put_between_two_others_parts_them(store: Store, path: Path) -> None:
    """Lines are appended, but a file may get one inside a place (an import, another writer): who
    answers whom counts the new neighbours, not the old ones."""
    said = [("qq:1", 0), ("qq:3", 1), ("qq:2", 2), ("", 3), ("qq:1", 4)]  # Ann Cy Bo - Ann
    async with store.transaction() as tx:
        ids = await tx.add_episodes([Episode(place=SPACES[0], content=f"l{i}", actor=a,
                                             actor_name=a and "x", time=T0 + timedelta(minutes=i))
                                     for a, i in said])
    assert await store.talks(10) == [("qq:1", "qq:2", 1), ("qq:1", "qq:3", 1), ("qq:2", "qq:3", 1)]
    async with store.transaction() as tx:
        await tx.erase([ids[1]], [])  # Ann Bo - Ann, with a gap at sequence number 2
    assert await store.talks(10) == [("qq:1", "qq:2", 2)]
    with sqlite3.connect(path) as db:  # Ann Dee Bo - Ann
        db.execute("INSERT INTO episodes(time, tz, space, seq, section, actor, actor_name, kind, content)"
                   " VALUES (?, 0, ?, 2, 1, 'qq:4', 'Dee', 'message_in', 'between')",
                   (T0.timestamp(), SPACES[0]))
    assert await store.talks(10) == [("qq:1", "qq:2", 1), ("qq:1", "qq:4", 1), ("qq:2", "qq:4", 1)]
    await assert_counts_exact(store, path)


async def test_an_erased_person_or_place_leaves_no_row_in_the_counts(store: Store, path: Path) -> None:
    async with store.transaction() as tx:
        await tx.add_episodes(some_episodes(random.Random(3), 200, 0))
    with sqlite3.connect(path) as db:
        gone = [r[0] for r in db.execute("SELECT id FROM episodes WHERE actor = 'qq:4' OR space = ?",
                                         (SPACES[2],))]
    async with store.transaction() as tx:
        await tx.erase(gone, [], people=["qq:4"], places=[SPACES[2]])
    with sqlite3.connect(path) as db:
        left = [db.execute(sql, args).fetchone()[0] for sql, args in (
            ("SELECT count(*) FROM talk_pairs WHERE a = ? OR b = ?", ("qq:4", "qq:4")),
            ("SELECT count(*) FROM speaker_counts WHERE actor = ?", ("qq:4",)),
            ("SELECT count(*) FROM talk_pairs_later WHERE a = ? OR b = ?", ("qq:4", "qq:4")),
            ("SELECT count(*) FROM speaker_counts_later WHERE actor = ?", ("qq:4",)),
            ("SELECT count(*) FROM place_counts WHERE space = ?", (SPACES[2],)),
            ("SELECT count(*) FROM episode_days WHERE n <= 0", ()),
        )]
    assert left == [0, 0, 0, 0, 0, 0]
    assert "qq:4" not in {p for p, _, _ in await store.people()}
    await assert_counts_exact(store, path)


async def test_the_integrity_check_finds_a_count_that_is_off(store: Store, path: Path) -> None:
    async with store.transaction() as tx:
        await tx.add_episodes(some_episodes(random.Random(5), 30, 0))
    assert await store.integrity() == []
    with sqlite3.connect(path) as db:
        db.execute("UPDATE place_counts SET n = n + 1 WHERE space = ?", (SPACES[0],))
        for table in ("talk_pairs", "talk_pairs_later"):  # the pair's whole count, folded in or not
            db.execute(f"DELETE FROM {table} WHERE a = 'qq:1' AND b = 'qq:2'")
    assert await store.integrity() == ["place_counts: 2 rows differ from a count of the episodes",
                                       "talk_pairs: 1 rows differ from a count of the episodes"]


async def test_a_store_from_before_the_counts_migrates_to_the_same_numbers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    old_path, new_path = tmp_path / "old.db", tmp_path / "new.db"
    with monkeypatch.context() as m:  # the store as released before m011: no counts, no triggers
        # (with m014's tables for the vectors' codes: today's writes erase them with their items)
        m.setattr(migrations, "MIGRATIONS", [mg for mg in migrations.MIGRATIONS
                                             if mg[0] < "m011" or "m014" <= mg[0] < "m016"])
        m.setattr(writes, "BATCH_COUNTS", ())  # nor the batches' counts (m016), nor their rows (m017)
        m.setattr(writes, "FOLD", ())
        old = await memory.open_store(old_path)
        try:
            await writes_and_erases(old, old_path, seed=7, check=False)
        finally:  # a store left open keeps pytest from ending
            await old.close()
    with sqlite3.connect(old_path) as db:
        assert db.execute("SELECT count(*) FROM sqlite_master WHERE name = 'talk_pairs'").fetchone() == (0,)
    new = await memory.open_store(new_path)
    old = await memory.open_store(old_path)  # migrates
    try:
        await writes_and_erases(new, new_path, seed=7, check=False)
        for store, path in ((old, old_path), (new, new_path)):
            await assert_counts_exact(store, path)
        for read in ("episodes_per_day", "places", "people"):
            assert await getattr(old, read)() == await getattr(new, read)()
        assert await old.talks(1000) == await new.talks(1000)
        async with old.transaction() as tx:
            await tx.add_episodes(some_episodes(random.Random(9), 40, 1000))  # and counts on from there
        await assert_counts_exact(old, old_path)
    finally:
        await old.close()
        await new.close()


async def test_an_episode_at_the_end_of_time_is_counted_with_its_batch(store: Store, path: Path) -> None:
    """datetime.max's local time rounds past the last second SQLite's dates reach: its day is still
    9999-12-31, and the other lines of its batch are stored with it."""
    end, start = datetime.max.replace(tzinfo=timezone.utc), datetime.min.replace(tzinfo=timezone.utc)
    async with store.transaction() as tx:
        ids = await tx.add_episodes([
            Episode(place=SPACES[0], content="far", time=end, actor="qq:1"),
            Episode(place=SPACES[0], content="first", time=start),
            Episode(place=SPACES[0], content="now", time=T0, actor="qq:2")])
    assert len(ids) == 3
    assert await store.episodes_per_day() == [("0001-01-01", 1), ("2024-05-01", 1), ("9999-12-31", 1)]
    assert await store.episodes_per_day(SPACES[0]) == await store.episodes_per_day()
    await assert_counts_exact(store, path)
