"""The episodes' keyword index is kept per chat: a MATCH reads only the chats the audience may see."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import aiosqlite

from astrbot_plugin_engram.memory import Audience, Engram, Episode, NoEmbedder
from astrbot_plugin_engram.memory.scopes import Visibility
from astrbot_plugin_engram.memory.store.sqlite.migrations import m001_core_tables
from astrbot_plugin_engram.memory.text.words import episode_words

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)


async def old_store(path: Path, lines: list[tuple[str, str]]) -> None:
    """A store as the first schema wrote it: plain words in the keyword index, no space keys."""
    async with aiosqlite.connect(path, isolation_level=None) as db:
        await db.execute("CREATE TABLE _migrations (name TEXT PRIMARY KEY, applied_at REAL)")
        await m001_core_tables(db)
        await db.execute("INSERT INTO _migrations VALUES ('m001_core_tables', 0)")
        for i, (place, text) in enumerate(lines, 1):
            t = T0 + timedelta(minutes=i)
            ep = Episode(place=place, content=text, actor="qq:1", actor_name="Ann", time=t)
            await db.execute("INSERT INTO episodes VALUES (?,?,0,?,?,1,'','qq:1','Ann','message_in',?,'{}')",
                             (i, t.timestamp(), place, i, text))
            await db.execute("INSERT INTO episodes_fts(rowid, words) VALUES (?, ?)", (i, episode_words(ep)))


async def test_a_store_from_before_the_per_chat_index_opens_and_recalls_as_before(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    await old_store(path, [("qq:group:1", "we adopted a puppy called Biscuit"),
                           ("qq:group:2", "Biscuit the hamster escaped again"),
                           ("qq:group:1", "the weather is fine")])
    eng = await Engram.open(path, NoEmbedder(), background=False)
    try:
        hits = await eng.recall("Biscuit puppy", Audience("qq:group:1"), k=5)
        assert [h.id for h in hits][:1] == [1]
        assert 2 not in {h.id for h in hits}, "the other chat's episode leaked into the migrated index"
        assert hits[0].features["kw"] > 0 and hits[0].features["cov"] > 0  # words read back from the index
        assert await eng.store.integrity() == []
        new = await eng.record(Episode(place="qq:group:2", content="Biscuit came back"))
        found = await eng.recall("Biscuit", Audience("qq:group:2"), k=5)
        assert {h.id for h in found} == {2, new}
    finally:
        await eng.close()


async def test_keyword_search_reads_exactly_the_visible_chats(keyword_engram: Engram) -> None:
    places = [f"qq:group:{n}" for n in range(20)]
    ids = await keyword_engram.record_many(
        Episode(place=s, content=f"the lighthouse keeper waved (chat {n})", time=T0)
        for n, s in enumerate(places))
    by_place = dict(zip(places, ids))
    store = keyword_engram.store

    async def found(vis: Visibility) -> set[int]:
        found = await keyword_engram.indexes.keywords.search_episodes(store, ["lighthous"], vis, 50)
        return {i for i, _ in found}

    few = frozenset(places[:3])  # each word asked in each of these chats
    assert await found(Visibility(None, few)) == {by_place[s] for s in few}
    many = frozenset(places[2:20])  # more than the keyed limit: the whole index, filtered by space
    assert await found(Visibility(None, many)) == {by_place[s] for s in many}
    assert await found(Visibility(None, None)) == set(ids)
    assert await found(Visibility(None, frozenset({"qq:group:never-spoke"}))) == set()


async def test_a_word_ending_in_digits_stays_in_its_own_chat(keyword_engram: Engram) -> None:
    # "room1" in chat 2 and "room" in chat 12 must not meet: the key is kept apart from the word.
    await keyword_engram.record(Episode(place="qq:group:2", content="meet in room1", time=T0))
    other = await keyword_engram.record(Episode(place="qq:group:12", content="meet in room", time=T0))
    await keyword_engram.record(Episode(place="qq:group:12", content="unrelated", time=T0))
    hits = await keyword_engram.recall("room1", Audience("qq:group:12"), k=5)
    assert all(h.features["kw"] == 0 for h in hits)
    hits = await keyword_engram.recall("room", Audience("qq:group:12"), k=5)
    assert [h.id for h in hits if h.features["kw"] > 0] == [other]
