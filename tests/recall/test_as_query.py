"""Each item's second vector, the item embedded as a query, and the ``cos_qq`` feature it gives."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest

from astrbot_plugin_engram.memory import Audience, Engram, Episode, Memory
from astrbot_plugin_engram.memory.embedders import as_query_model
from astrbot_plugin_engram.memory.errors import EmbeddingError
from astrbot_plugin_engram.memory.recall.ranker import LinearRanker

from ..conftest import HashEmbedder
from ..fake_openai import hash_vector

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)
SPACE = "qq:group:1"


class TwoKindEmbedder:
    """Passage vectors from the text's words; query vectors from its words and the word "query"
    (so the two kinds differ, as the bundled model's prefixes make them). Records each call's kind."""

    name = "two-kind-32"
    asymmetric = True

    def __init__(self, fail_queries: bool = False) -> None:
        self.kinds: list[tuple[str, int]] = []
        self.fail_queries = fail_queries

    async def embed(self, texts: list[str], kind: str = "passage") -> np.ndarray:
        self.kinds.append((kind, len(texts)))
        if kind == "query" and self.fail_queries:
            raise EmbeddingError("query side down")
        return np.asarray([hash_vector(t if kind == "passage" else f"query {t}", 32) for t in texts],
                          np.float32)


def lines(*texts: str) -> list[Episode]:
    return [Episode(place=SPACE, content=t, time=T0 + timedelta(minutes=i)) for i, t in enumerate(texts)]


async def test_an_item_gets_a_second_vector_embedded_as_a_query(tmp_path: Path) -> None:
    emb = TwoKindEmbedder()
    e = await Engram.open(tmp_path / "e.db", emb, background=False)
    try:
        ids = await e.record_many(lines("the lighthouse keeper", "a red kite"))
        mid = await e.add_memory(Memory("Ann keeps bees", f"space:{SPACE}"))
        assert await e.embed_pending() == 3  # items, not vectors
        assert [k for k, _ in emb.kinds] == ["passage", "passage", "query", "query"]  # passages first
        model = as_query_model(emb)
        assert model == "two-kind-32#as-query"
        assert (await e.store.query_vectors_page(model, "e", 0, 10))[0] == ids
        assert (await e.store.query_vectors_page(model, "m", 0, 10))[0] == [mid]
        want = (await emb.embed(["the lighthouse keeper"], "query"))[0]
        second = e.indexes.second
        assert second is not None and len(second) == 3
        cos = second.cosines([("e", ids[0]), ("e", ids[1]), ("m", mid), ("e", 99)], want)
        assert cos[0] is not None and cos[0] > 0.99 and cos[1] is not None and cos[1] < 0.9
        assert cos[3] is None  # no such item
        assert await e.embed_pending() == 0  # each cursor remembers where it is
    finally:
        await e.close()
    again = await Engram.open(tmp_path / "e.db", emb, background=False)  # loaded at open
    try:
        second = again.indexes.second
        assert second is not None and len(second) == 3
        assert second.cosines([("e", ids[0])], want)[0] == cos[0]
        gone = await again.forget_episodes([ids[0]])  # forgotten: its second vector goes too
        assert gone.episodes == [ids[0]]
        assert second.cosines([("e", ids[0]), ("e", ids[1])], want)[0] is None
        assert len(second) == 2
    finally:
        await again.close()


async def test_cos_qq_ranks_by_the_item_embedded_as_a_query(tmp_path: Path) -> None:
    e = await Engram.open(tmp_path / "e.db", TwoKindEmbedder(), background=False,
                          ranker=LinearRanker({"cos_qq": 1.0}))
    try:
        await e.record_many(lines("walking the dog", "query walking the dog", "cooking rice"))
        await e.embed_pending()
        hits = await e.recall("walking the dog", Audience(SPACE), k=3)
        feats = {h.text: h.features for h in hits}
        # the query's vector is embedded as a query: it meets the items embedded the same way
        assert feats["walking the dog"]["cos_qq"] == 1.0 and feats["cooking rice"]["cos_qq"] == 0.0
        assert hits[0].text == "walking the dog"
        assert feats["query walking the dog"]["cos_qq"] != feats["query walking the dog"]["cos"]
    finally:
        await e.close()


async def test_with_one_kind_of_vector_there_is_no_second_and_cos_qq_is_cos(tmp_path: Path) -> None:
    emb = HashEmbedder()
    assert as_query_model(emb) is None
    e = await Engram.open(tmp_path / "e.db", emb, background=False)
    try:
        await e.record_many(lines("the lighthouse keeper", "a red kite", "the keeper of bees"))
        await e.embed_pending()
        assert emb.calls == 1  # one pass only
        hits = await e.recall("lighthouse keeper", Audience(SPACE), k=3)
        assert hits and all(h.features["cos_qq"] == h.features["cos"] for h in hits)
    finally:
        await e.close()


async def test_items_still_waiting_for_their_second_vector_use_their_cosine(tmp_path: Path) -> None:
    emb = TwoKindEmbedder(fail_queries=True)
    e = await Engram.open(tmp_path / "e.db", emb, background=False)
    try:
        await e.record_many(lines("the lighthouse keeper", "a red kite", "the keeper of bees"))
        try:
            await e.embed_pending()
        except EmbeddingError:
            pass
        else:
            raise AssertionError("the query side was down: embed_pending must say so")
        assert e.index is not None and len(e.index) == 3  # the passage vectors were kept
        hits = await e.recall("lighthouse keeper", Audience(SPACE), k=3)
        assert hits and all(h.features["cos_qq"] == h.features["cos"] for h in hits)
        emb.fail_queries = False  # back up: the backlog of second vectors is made, nothing else again
        emb.kinds.clear()
        assert await e.embed_pending() == 0
        assert emb.kinds == [("query", 3)]
    finally:
        await e.close()


async def test_reindex_rebuilds_the_second_vectors_too(tmp_path: Path) -> None:
    emb = TwoKindEmbedder()
    e = await Engram.open(tmp_path / "e.db", emb, background=False)
    try:
        await e.record_many(lines("the lighthouse keeper", "a red kite"))
        await e.embed_pending()
        emb.kinds.clear()
        seen: list[int] = []
        assert await e.reindex(emb, seen.append) == 2
        assert emb.kinds == [("passage", 2), ("query", 2)]
        assert seen[-1] == 4  # progress counts the vectors of both passes
    finally:
        await e.close()


class OldTwoKindEmbedder(TwoKindEmbedder):
    """The same model as the code before the second vectors saw it: one vector an item."""

    asymmetric = False


async def test_a_store_from_before_the_second_vectors_catches_up_to_a_new_one(tmp_path: Path) -> None:
    said = lines("we walked the dog by the lighthouse", "query walking the dog", "cooking rice tonight",
                 "the keeper rang about the bees", "a red kite over the dunes")
    old = await Engram.open(tmp_path / "old.db", OldTwoKindEmbedder(), background=False)
    try:
        await old.record_many(said)
        await old.embed_pending()
    finally:
        await old.close()
    new = await Engram.open(tmp_path / "new.db", TwoKindEmbedder(), background=False)
    upgraded = await Engram.open(tmp_path / "old.db", TwoKindEmbedder(), background=False)
    try:
        await new.record_many(said)
        await new.embed_pending()
        asked = ["walking the dog", "what did the keeper say", "rice"]
        before = await upgraded.recall(asked[0], Audience(SPACE), k=5)
        assert all(h.features["cos_qq"] == h.features["cos"] for h in before)  # not caught up yet
        assert await upgraded.embed_pending() == 0  # no new items: only their second vectors
        for q in asked:
            got = await upgraded.recall(q, Audience(SPACE), k=5)
            want = await new.recall(q, Audience(SPACE), k=5)
            assert [(h.text, round(h.score, 9)) for h in got] == [(h.text, round(h.score, 9)) for h in want]
    finally:
        await upgraded.close()
        await new.close()


async def test_a_big_stores_second_vectors_stay_on_file_and_give_the_same_cosines(tmp_path: Path,
                                                                                monkeypatch) -> None:
    """Past ``second_vectors.HELD`` items nothing is loaded: recall reads its candidates' second
    vectors from the file, and ranks exactly as with them in memory."""
    from astrbot_plugin_engram.memory.index import second_vectors

    texts = [f"line {n} about the lighthouse keeper and kites" if n % 2 else f"line {n} rain"
             for n in range(40)]
    e = await Engram.open(tmp_path / "e.db", TwoKindEmbedder(), background=False)
    try:
        await e.record_many(lines(*texts))
        await e.embed_pending()
        held = [(h.id, h.score) for h in await e.recall("the lighthouse keeper", Audience(SPACE), k=10)]
    finally:
        await e.close()
    monkeypatch.setattr(second_vectors, "HELD", 10)
    big = await Engram.open(tmp_path / "e.db", TwoKindEmbedder(), background=False)
    try:
        second = big.indexes.second
        assert second is not None and second.on_file and len(second) == 0
        got = await big.recall("the lighthouse keeper", Audience(SPACE), k=10)
        assert [h.id for h in got] == [i for i, _ in held]
        assert [h.score for h in got] == [pytest.approx(s, abs=1e-6) for _, s in held]
        assert any(h.features["cos_qq"] > 0 for h in got)
    finally:
        await big.close()
