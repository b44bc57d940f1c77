"""Providers: AstrBot's embedders resolved at use time, switched when they change, failures contained."""

from __future__ import annotations

import pytest

from astrbot_plugin_engram.memory import EmbeddingError, LocalE5, NoEmbedder
from astrbot_plugin_engram.plugin.config import Settings
from astrbot_plugin_engram.plugin.providers import AstrBotEmbedder, ChatError, Providers

from .conftest import FakeContext, FakeProvider, MakeService, event


def test_the_configured_embedding_provider_else_the_first_else_the_bundled_model() -> None:
    ctx = FakeContext(embedders=[FakeProvider("e1", "small"), FakeProvider("e2", "large", dim=16)])
    assert Providers(ctx, "e2").embedder().name == "astrbot/e2/large@16"
    assert Providers(ctx, "").embedder().name == "astrbot/e1/small@8"
    # a configured provider that is gone: not another one the owner did not pick (every line would go
    # there), the bundled model on this machine until it is back
    assert isinstance(Providers(ctx, "missing").embedder(), LocalE5)
    assert isinstance(Providers(FakeContext(), "").embedder(), LocalE5)
    assert isinstance(Providers(ctx, "local").embedder(), LocalE5)
    assert isinstance(Providers(ctx, "none").embedder(), NoEmbedder)


async def test_a_provider_that_times_out_or_vanishes_is_an_embedding_error() -> None:
    slow = FakeProvider("e1", delay=5)
    ctx = FakeContext(embedders=[slow])
    emb = AstrBotEmbedder(ctx, "e1", "m", 8, timeout=0.05)
    with pytest.raises(EmbeddingError, match="timed out"):
        await emb.embed(["hi"])
    ctx.embedders.clear()
    with pytest.raises(EmbeddingError, match="is gone"):
        await emb.embed(["hi"])


async def test_embeddings_switch_when_providers_change_and_each_model_keeps_its_vectors(
        make_service: MakeService) -> None:
    e1, e2 = FakeProvider("e1"), FakeProvider("e2", dim=16)
    ctx = FakeContext(embedders=[e1])
    svc = make_service(Settings(), ctx, embedder=None)
    svc.record_message(event("the lighthouse keeper", "alice"))
    await svc.flush()
    engram = await svc.memory()
    await engram.embed_pending()
    assert engram.embedder.name == "astrbot/e1/m@8" and len(engram.index) == 1  # type: ignore[arg-type]
    ctx.embedders[:] = [e2]  # e1 removed in AstrBot, e2 added
    engram = await svc.memory()
    await engram.embed_pending()
    assert engram.embedder.name == "astrbot/e2/m@16" and len(engram.index) == 1  # type: ignore[arg-type]
    calls = e1.calls
    ctx.embedders[:] = [e1]
    engram = await svc.memory()
    assert await engram.embed_pending() == 0 and len(engram.index) == 1  # type: ignore[arg-type]
    assert e1.calls == calls  # e1's vectors were kept, not computed again


async def test_chat_goes_through_llm_generate_with_the_configured_provider() -> None:
    ctx = FakeContext(chats=[FakeProvider("c1", answer="one"), FakeProvider("c2", answer="two")])
    assert await Providers(ctx, chat_provider_id="c2").chat().complete("hi", "be brief") == "two"
    assert ctx.prompts[-1] == {"provider": "c2", "prompt": "hi", "system_prompt": "be brief",
                               "image_urls": None}
    assert await Providers(ctx).chat("umo").complete("hi") == "one"


async def test_a_configured_chat_provider_that_is_gone_is_not_replaced_by_another() -> None:
    """It used to fall back to the chat's or the first provider: consolidation, the diary and captions
    then sent what the bot overheard to a provider the owner had not picked."""
    ctx = FakeContext(chats=[FakeProvider("c1", answer="one")])
    providers = Providers(ctx, chat_provider_id="local-qwen")
    with pytest.raises(ChatError, match="'local-qwen' \\(chat_provider_id\\) is not in AstrBot"):
        await providers.chat("umo").complete("hi")
    with pytest.raises(ChatError, match="'local-qwen'"):
        await providers.chat_model().complete([{"role": "user", "content": "hi"}])
    assert ctx.prompts == []  # nothing went to c1
    ctx.chats.append(FakeProvider("local-qwen", answer="back"))
    assert await providers.chat("umo").complete("hi") == "back"


async def test_a_chat_provider_that_times_out_is_a_chat_error() -> None:
    ctx = FakeContext(chats=[FakeProvider("c1", delay=5)])
    with pytest.raises(ChatError, match="timed out"):
        await Providers(ctx).chat().complete("hi", timeout=0.05)
    with pytest.raises(ChatError, match="no chat provider"):
        await Providers(FakeContext()).chat().complete("hi")
