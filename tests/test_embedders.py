"""Embedders: the OpenAI-compatible client against the fake server, the bundled LocalE5, make_embedder."""

from __future__ import annotations

import numpy as np
import pytest

from astrbot_plugin_engram.memory import (
    EmbeddingError,
    LocalE5,
    NoEmbedder,
    OpenAIEmbedder,
    make_embedder,
)

from .fake_openai import FakeOpenAI, hash_vector


async def test_openai_embedder_sends_model_texts_and_dimensions(fake_openai: FakeOpenAI) -> None:
    emb = OpenAIEmbedder("text-embedding-3-small", base_url=fake_openai.base_url, api_key="sk-x",
                         dimensions=16)
    try:
        vecs = await emb.embed(["hello world", "你好"], "passage")
    finally:
        await emb.close()
    assert vecs.shape == (2, 16) and vecs.dtype == np.float32
    assert np.allclose(vecs[0], hash_vector("hello world", 16))
    [req] = fake_openai.embed_requests()
    assert req["model"] == "text-embedding-3-small"
    assert req["input"] == ["hello world", "你好"]
    assert req["dimensions"] == 16
    assert emb.name == "openai/text-embedding-3-small@16"  # vectors are filed under model and size


async def test_openai_embedder_without_dimensions_omits_them(fake_openai: FakeOpenAI) -> None:
    emb = OpenAIEmbedder("e", base_url=fake_openai.base_url)
    try:
        vecs = await emb.embed(["a b c"])
    finally:
        await emb.close()
    assert vecs.shape == (1, fake_openai.embed_dim)
    assert "dimensions" not in fake_openai.embed_requests()[0]
    assert emb.name == "openai/e"


async def test_openai_embedder_failure_is_one_error_kind(fake_openai: FakeOpenAI) -> None:
    fake_openai.embed_status = 500
    emb = OpenAIEmbedder("e", base_url=fake_openai.base_url, timeout=5)
    try:
        with pytest.raises(EmbeddingError, match="embedding endpoint failed"):
            await emb.embed(["x"])
    finally:
        await emb.close()


async def test_openai_embedder_refuses_the_wrong_dimension(fake_openai: FakeOpenAI) -> None:
    fake_openai.wrong_dim = 3
    emb = OpenAIEmbedder("e", base_url=fake_openai.base_url, dimensions=16)
    try:
        with pytest.raises(EmbeddingError, match="shape"):
            await emb.embed(["x"])
    finally:
        await emb.close()


async def test_no_embedder_says_so() -> None:
    with pytest.raises(EmbeddingError, match="no embedder"):
        await NoEmbedder().embed(["x"])


async def test_local_e5_gives_normalised_384_float32() -> None:
    vecs = await LocalE5().embed(["I have a cat named Miso", "我养了一只猫"], "passage")
    assert vecs.shape == (2, 384) and vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-3)
    assert (await LocalE5().embed([])).shape == (0, 384)


async def test_local_e5_matches_a_chinese_question_to_its_passage() -> None:
    e5 = LocalE5()
    q = (await e5.embed(["小明的猫叫什么名字？"], "query"))[0]
    right, wrong = await e5.embed(["小明养了一只猫，名字叫咪咪。", "明天上午九点开会讨论预算。"], "passage")
    assert float(q @ right) > float(q @ wrong) + 0.05


@pytest.mark.parametrize("spec, cls", [("local", LocalE5), ("", LocalE5), ("none", NoEmbedder),
                                       ("openai:text-embedding-3-small", OpenAIEmbedder)])
def test_make_embedder_by_name(spec: str, cls: type) -> None:
    opts = {"base_url": "http://127.0.0.1:9/v1"} if cls is OpenAIEmbedder else {}
    emb = make_embedder(spec, **opts)
    assert isinstance(emb, cls)
    if isinstance(emb, OpenAIEmbedder):
        assert emb.model == "text-embedding-3-small"


@pytest.mark.parametrize("spec", ["bert", "openai", "LOCAL"])
def test_make_embedder_rejects_unknown_names(spec: str) -> None:
    with pytest.raises(ValueError, match="use local, none or openai:<model>"):
        make_embedder(spec)


@pytest.mark.parametrize("spec", ["openai:", "openai:  "])
def test_make_embedder_wants_a_model_name_for_openai(spec: str) -> None:
    with pytest.raises(ValueError, match="needs a model name"):
        make_embedder(spec)
