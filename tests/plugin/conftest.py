"""Plugin unit fixtures: real AstrBot event objects, a small honest AstrBot context, a real service.

AstrBot creates ``data/`` under ``$ASTRBOT_ROOT`` when first imported, so the root is a temp dir
before any astrbot import. ``main.py`` is never imported here: its decorators would register
handlers in AstrBot's process-global registries, next to the ones the end-to-end tests load.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from .._astrbot_root import use_temp_astrbot_root

use_temp_astrbot_root("engram-plugin-tests-")

from astrbot.api.message_components import At, Image, Plain, Reply  # noqa: E402
from astrbot.api.platform import (  # noqa: E402
    AstrBotMessage,
    AstrMessageEvent,
    Group,
    MessageMember,
    MessageType,
    PlatformMetadata,
)
from astrbot.core.provider.entities import ProviderRequest  # noqa: E402

from astrbot_plugin_engram.plugin.config import Settings  # noqa: E402
from astrbot_plugin_engram.plugin.providers import Providers  # noqa: E402
from astrbot_plugin_engram.plugin.service import EngramService  # noqa: E402

from ..conftest import HashEmbedder  # noqa: E402

SELF_ID = "bot"
OWNER = "owner1"
_ids = itertools.count(1)

__all__ = ["At", "Image", "Plain", "Reply", "event", "request"]


def event(text: str = "", sender: str | None = "alice", group: str | None = None, *,
          name: str | None = None, platform: str = "qq", components: list[Any] | None = None,
          admin: bool = False, timestamp: int | None = None,
          group_name: str | None = None) -> AstrMessageEvent:
    """A real AstrBot message event as a platform adapter would build it."""
    msg = AstrBotMessage()
    msg.type = MessageType.GROUP_MESSAGE if group is not None else MessageType.FRIEND_MESSAGE
    msg.self_id = SELF_ID
    msg.session_id = group or sender or ""
    msg.message_id = f"m{next(_ids)}"
    msg.sender = MessageMember(user_id=sender, nickname=name or (sender or "").title())  # type: ignore[arg-type]
    if group is not None:
        msg.group = Group(group_id=group, group_name=group_name)
    msg.message = components if components is not None else ([Plain(text)] if text else [])
    msg.message_str = text
    msg.raw_message = None
    if timestamp is not None:
        msg.timestamp = timestamp
    meta = PlatformMetadata(name=platform, description="unit test platform", id=platform)
    ev = AstrMessageEvent(text, msg, meta, msg.session_id)
    if admin:
        ev.role = "admin"
    return ev


def request(prompt: str, contexts: list[dict[str, Any]] | None = None) -> ProviderRequest:
    return ProviderRequest(prompt=prompt, contexts=contexts or [], system_prompt="You are a bot.")


@dataclass
class FakeProvider:
    """An AstrBot provider as the plugin sees it: an id, a config, and async calls."""

    id: str
    model: str = "m"
    config: dict[str, Any] = field(default_factory=dict)
    delay: float = 0.0
    answer: str = "a cat on a sofa"
    dim: int = 8
    calls: int = 0

    def __post_init__(self) -> None:
        self.provider_config = {"id": self.id, "embedding_model": self.model, **self.config}

    def meta(self) -> Any:
        return type("Meta", (), {"id": self.id, "model": self.model})()

    def get_dim(self) -> int:
        return self.dim

    async def get_embeddings(self, texts: list[str]) -> list[list[float]]:
        self.calls += 1
        await asyncio.sleep(self.delay)
        return [list(v) for v in await HashEmbedder(self.dim).embed(texts)]


@dataclass
class FakeContext:
    """The few Context methods the plugin uses, answered from lists a test fills in."""

    embedders: list[FakeProvider] = field(default_factory=list)
    chats: list[FakeProvider] = field(default_factory=list)
    config: dict[str, Any] = field(default_factory=dict)
    prompts: list[dict[str, Any]] = field(default_factory=list)
    platforms: list[str] = field(default_factory=lambda: ["qq", "webchat"])

    @property
    def platform_manager(self) -> Any:
        """AstrBot's platform manager as far as the plugin reads it: the loaded platforms."""
        insts = [type("Platform", (), {"meta": lambda self, n=n: PlatformMetadata(n, "test", n)})()
                 for n in self.platforms]
        return type("PlatformManager", (), {"platform_insts": insts})()

    def get_all_embedding_providers(self) -> list[FakeProvider]:
        return self.embedders

    def get_all_providers(self) -> list[FakeProvider]:
        return self.chats

    def get_config(self) -> dict[str, Any]:
        return self.config

    async def get_current_chat_provider_id(self, umo: str) -> str:
        return self.chats[0].id

    async def llm_generate(self, *, chat_provider_id: str, **kwargs: Any) -> Any:
        self.prompts.append({"provider": chat_provider_id, **kwargs})
        prov = next(p for p in self.chats if p.id == chat_provider_id)
        await asyncio.sleep(prov.delay)
        return type("Resp", (), {"completion_text": prov.answer})()


MakeService = Callable[..., EngramService]


@pytest.fixture
def database_url() -> str:
    """The services' ``database_url`` ("": the SQLite file; a module overrides it to run on PostgreSQL)."""
    return ""


@pytest.fixture
async def make_service(tmp_path: Path, database_url: str) -> AsyncIterator[MakeService]:
    """Services on real SQLite files in ``tmp_path`` (or the ``database_url`` fixture's PostgreSQL
    database), closed at the end, hash embeddings."""
    made: list[EngramService] = []

    def make(settings: Settings | None = None, context: FakeContext | None = None, *,
             data_dir: Path | None = None, embedder: Any = "hash") -> EngramService:
        ctx = context or FakeContext()
        s = settings or Settings(owner_ids=(OWNER,))
        if database_url:
            s = replace(s, database_url=database_url)
        svc = EngramService(s, data_dir or tmp_path / "data", Providers(ctx, s.embedding_provider_id,
                                                                      s.chat_provider_id),
                            embedder=HashEmbedder() if embedder == "hash" else embedder)
        made.append(svc)
        return svc

    yield make
    for svc in made:
        await svc.close()


@pytest.fixture
def service(make_service: MakeService) -> EngramService:
    return make_service()


async def episodes(svc: EngramService) -> list[Any]:
    """Every recorded episode, oldest first (after the queue is flushed)."""
    await svc.flush()
    mem = await svc.memory()
    n = (await mem.store.counts())["episodes"]
    found = await mem.store.get_episodes(list(range(1, n + 1)))
    return [found[i] for i in sorted(found)]
