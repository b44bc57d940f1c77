"""``BundleReads`` and the restore writes (the soul bundle, issue 30): every row in a stable order,
and rows written back exactly as they were, keyword index, counts and the next ids following.
Run on every backend (``conftest.BACKENDS``)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from astrbot_plugin_engram.memory import Episode, Memory, StoreError
from astrbot_plugin_engram.memory.store import EpisodesAdded, MemoryAdded, Store

from .conftest import Opener

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=timezone(timedelta(hours=8)))
A, B = "qq:group:1", "qq:private:2"


async def filled(store: Store) -> None:
    async with store.transaction() as tx:
        ids = await tx.add_episodes([
            Episode(place=A, content="hello tea", actor="qq:1", actor_name="Ann", time=T0, place_title="Tea"),
            Episode(place=B, content="secret", actor="qq:2", actor_name="Bob", time=T0 + timedelta(hours=1)),
            Episode(place=A, content="again", actor="qq:1", actor_name="Annie",
                    time=T0 + timedelta(hours=9))])
        m = await tx.add_memory(Memory("Ann likes tea", "space:" + A, sources=(ids[2], ids[0]),
                                       created_at=T0))
        await tx.add_memory(Memory("Ann likes green tea", "space:" + A, created_at=T0), supersedes=m)
        x = await tx.add_memory(Memory("one", "public", created_at=T0))
        y = await tx.add_memory(Memory("two", "public", created_at=T0))
        await tx.keep_apart([y, x])
        await tx.set_cursor("consolidate:" + A, 3)


async def test_pages_and_tables_come_in_a_stable_order(store: Store) -> None:
    await filled(store)
    eps = await store.episodes_page(0, 2) + await store.episodes_page(2, 2)
    assert [(e.id, e.place, e.seq, e.section) for e in eps] == [(1, A, 1, 0), (2, B, 1, 0), (3, A, 2, 1)]
    assert eps[0].time == T0 and eps[0].time.utcoffset() == timedelta(hours=8)
    mems = await store.memories_page(0, 10)
    assert [(m.id, root, m.status, m.sources) for m, root in mems] == [
        (1, 1, "superseded", (1, 3)), (2, 1, "active", ()), (3, 3, "active", ()), (4, 4, "active", ())]
    assert await store.alias_rows() == [("qq:1", "Ann", T0.timestamp(), T0.timestamp()),
                                        ("qq:1", "Annie", *[(T0 + timedelta(hours=9)).timestamp()] * 2),
                                        ("qq:2", "Bob", *[(T0 + timedelta(hours=1)).timestamp()] * 2)]
    assert [r[:3] for r in await store.place_name_rows()] == [(A, "qq:1", "Annie"), (B, "qq:2", "Bob")]
    assert await store.place_title_rows() == [(A, "Tea", T0.timestamp())]
    assert await store.place_names() == [A, B]
    assert await store.kept_apart_pairs() == [(3, 4)]


async def test_restored_rows_are_the_rows_they_were(open_store: Opener, tmp_path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a, b = await open_store(tmp_path / "a"), await open_store(tmp_path / "b")
    try:
        await filled(a)
        eps, mems = await a.episodes_page(0, 10), await a.memories_page(0, 10)
        heard: list[object] = []
        b.listen(heard.append)
        async with b.transaction() as tx:
            await tx.restore_episodes(eps)
            await tx.restore_memories(mems)
            await tx.restore_names(await a.alias_rows(), await a.place_name_rows(),
                                   await a.place_title_rows())
        assert [type(h) for h in heard] == [EpisodesAdded] + [MemoryAdded] * 4
        assert await b.episodes_page(0, 10) == eps
        assert await b.memories_page(0, 10) == mems
        assert await b.alias_rows() == await a.alias_rows()
        assert await b.place_title_rows() == await a.place_title_rows()
        assert await b.count_episodes() == 3 and await b.episodes_per_day() == await a.episodes_per_day()
        # the keyword index holds the restored rows (a superseded version stays out of it)
        assert [list(x) for x in await b.memory_postings(["green", "tea"])] == [[2], [2]]
        # what comes next continues after them
        async with b.transaction() as tx:
            new = await tx.add_episodes([Episode(place=A, content="next", time=T0 + timedelta(hours=10))])
            assert await tx.add_memory(Memory("five", "public", created_at=T0)) == 5
        assert new == [4] and (await b.episodes_page(3, 1))[0].seq == 3
        # a merge's restore keeps the earlier first sighting and the later last one
        async with b.transaction() as tx:
            await tx.restore_names([("qq:1", "Ann", T0.timestamp() - 60, T0.timestamp() + 60)], [], [])
        assert (await b.alias_rows())[0] == ("qq:1", "Ann", T0.timestamp() - 60, T0.timestamp() + 60)
    finally:
        await a.close()
        await b.close()


async def test_restore_superseded_marks_an_active_version_superseded(store: Store) -> None:
    await filled(store)
    async with store.transaction() as tx:
        await tx.restore_superseded([(3, 3, T0 + timedelta(days=1)), (1, 1, None)])  # 1 is superseded already
    mems = {m.id: m for m, _ in await store.memories_page(0, 10)}
    assert mems[3].status == "superseded" and mems[3].valid_to == T0 + timedelta(days=1)
    assert mems[1].valid_to is not None  # left as it was


async def test_a_restore_out_of_a_places_order_is_refused_and_writes_nothing(store: Store) -> None:
    """In a place ids rise with sequence numbers (its reads past a cursor rely on it): a restored line
    whose id would stand before a stored line's at a later number, or after one at an earlier number,
    or two restored lines crossed, is refused, naming the place and number; one that fits is kept."""
    def line(i: int, seq: int) -> Episode:
        return Episode(place=A, content=f"line {i}", time=T0 + timedelta(minutes=i), id=i, seq=seq, section=0)

    async with store.transaction() as tx:
        await tx.restore_episodes([line(10, 5), line(20, 10)])
    for crossed in ([line(30, 7)], [line(5, 12)], [line(14, 6), line(12, 8)]):
        with pytest.raises(StoreError) as refused:
            async with store.transaction() as tx:
                await tx.restore_episodes(crossed)
        assert refused.value.code == "restore_out_of_order" and refused.value.values["place"] == A
        assert refused.value.values["seq"] in {e.seq for e in crossed}
        assert [e.id for e in await store.episodes_page(0, 10)] == [10, 20]
    async with store.transaction() as tx:
        await tx.restore_episodes([line(15, 7), line(25, 11), line(3, 2)])
    assert [(e.id, e.seq) for e in await store.episodes_page(0, 10)] == [(3, 2), (10, 5), (15, 7), (20, 10),
                                                                          (25, 11)]
