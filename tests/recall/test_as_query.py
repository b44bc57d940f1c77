"""Each item's second vector, the item embedded as a query, and the ``cos_qq`` feature it gives."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

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
    return [Episode(space=SPACE, content=t, time=T0 + timedelta(minutes=i)) for i, t in enumerate(texts)]


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
        got = await e.store.query_vectors(model, [("e", ids[0]), ("e", ids[1]), ("m", mid)])
        assert set(got) == {("e", ids[0]), ("e", ids[1]), ("m", mid)}
        want = (await emb.embed(["the lighthouse keeper"], "query"))[0]
        assert float(got[("e", ids[0])] @ want) > 0.99
        assert await e.embed_pending() == 0  # each cursor remembers where it is
    finally:
        await e.close()


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
