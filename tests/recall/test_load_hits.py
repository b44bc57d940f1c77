"""Recall reads its candidates as stored rows: times, zones, metas and hits come out as the items say."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from astrbot_plugin_engram.memory import Audience, Engram, Episode, Memory, place_scope

SPACE = "qq:group:7"
TZ8 = timezone(timedelta(hours=8))


async def test_recency_of_each_hit_follows_its_own_time_exactly(engram: Engram) -> None:
    # Odd microseconds and a zone: the age comes from the stored timestamp, as from the datetime.
    base = datetime(2024, 3, 1, 9, 30, 0, 123457, tzinfo=TZ8)
    eps = [Episode(place=SPACE, content=f"we planted {w} in the garden", actor="u1", actor_name="Ann",
                   time=base + timedelta(days=d, microseconds=d * 77_777)) for d, w in
           enumerate(["tulips", "roses", "garlic", "beans"])]
    await engram.record_many(eps)
    await engram.embed_pending()
    now = datetime(2024, 6, 2, 1, 2, 3, 999_999, tzinfo=timezone.utc)
    hits = await engram.recall("planted garden", Audience(SPACE), k=4, now=now)
    assert len(hits) == 4
    for h in hits:
        age = (now - h.item.time).total_seconds()  # type: ignore[union-attr, operator]
        assert h.features["recency"] == 0.5 ** (age / 86400 / 30)
        assert h.item.time.utcoffset() == timedelta(hours=8)  # type: ignore[union-attr]


async def test_a_date_named_in_the_query_matches_the_local_month(keyword_engram: Engram) -> None:
    # 2024-12-01 02:00 at +08:00 is still November in UTC: the episode's own month counts.
    await keyword_engram.record_many([
        Episode(place=SPACE, content="we skated on the lake", time=datetime(2024, 12, 1, 2, 0, tzinfo=TZ8)),
        Episode(place=SPACE, content="we skated on the canal", time=datetime(2024, 11, 20, 2, 0, tzinfo=TZ8)),
    ])
    hits = await keyword_engram.recall("skated in December 2024", Audience(SPACE), k=2)
    by_text = {h.text: h.features["date_match"] for h in hits}
    assert by_text == {"we skated on the lake": 1.0, "we skated on the canal": 0.0}


async def test_only_an_image_in_meta_counts_as_an_image(keyword_engram: Engram) -> None:
    metas = [{"image": "cat.jpg"}, {"image": ""}, {"note": "image"}, {}]
    await keyword_engram.record_many([Episode(place=SPACE, content=f"look at this kitten {i}", meta=m)
                                      for i, m in enumerate(metas)])
    hits = await keyword_engram.recall("kitten", Audience(SPACE), k=4)
    flags = {h.item.meta.get("note", h.item.meta.get("image", "none")): h.features["has_image"]  # type: ignore[union-attr]
             for h in hits}
    assert flags == {"cat.jpg": 1.0, "": 0.0, "image": 0.0, "none": 0.0}


async def test_hits_carry_full_items_and_memories_their_sources(keyword_engram: Engram) -> None:
    ids = await keyword_engram.record_many([
        Episode(place=SPACE, content="Bob fixed the old bicycle", actor="qq:9", actor_name="Bob",
                source="qq", kind="message_in", meta={"reply_to": 3}, time=datetime(2024, 5, 1, tzinfo=TZ8))])
    mid = await keyword_engram.add_memory(Memory("Bob repairs bicycles", place_scope(SPACE), kind="fact",
                                                 subjects=("qq:9",), sources=(ids[0],), importance=0.7))
    hits = {h.kind: h for h in await keyword_engram.recall("bicycle fixed", Audience(SPACE), k=5)}
    assert hits["episode"].item == (await keyword_engram.store.get_episodes(ids))[ids[0]]
    assert hits["memory"].item == await keyword_engram.get(mid)
    assert hits["memory"].item.sources == (ids[0],)  # type: ignore[union-attr]


async def test_other_places_neighbours_and_archived_memories_stay_out(keyword_engram: Engram) -> None:
    t = datetime(2024, 5, 1, tzinfo=timezone.utc)
    await keyword_engram.record_many([Episode(place="qq:group:8", content=f"secret plan step {i}",
                                              time=t + timedelta(minutes=i)) for i in range(5)])
    mid = await keyword_engram.add_memory(Memory("the secret plan", place_scope(SPACE)))
    async with keyword_engram.store.transaction() as tx:
        await tx.set_memory_fields(mid, status="archived")
    assert await keyword_engram.recall("secret plan", Audience(SPACE), k=10) == []
    archived = await keyword_engram.recall("secret plan", Audience(SPACE), k=10, include_archived=True)
    assert [(h.kind, h.id) for h in archived] == [("memory", mid)]
