"""Engram for AstrBot: each hook hands its work to the plugin's service (``plugin/``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from astrbot.api import logger
from astrbot.api.event import AstrMessageEvent, MessageEventResult, filter
from astrbot.api.provider import LLMResponse, ProviderRequest
from astrbot.api.star import Context, Star, StarTools

from .plugin import forget_commands, tools  # noqa: F401  (forget_commands registers /mem forget-person ...)
from .plugin.commands import COMMANDS
from .plugin.config import parse_settings
from .plugin.jobs import Jobs
from .plugin.logs import attach
from .plugin.providers import Providers, astrbot_timezone
from .plugin.service import EngramService

PLUGIN_NAME = "astrbot_plugin_engram"


class EngramPlugin(Star):
    """Long-term memory: records every message, injects scoped memories, owner commands, model tools."""

    def __init__(self, context: Context, config: Any = None):
        super().__init__(context, config)
        self.config = config
        self.service: EngramService | None = None
        self.jobs: Jobs | None = None
        self._detach_logs: Any = None

    async def initialize(self) -> None:
        self._detach_logs = attach(logger)  # the core's lines go to AstrBot's console and WebUI
        settings, _ = parse_settings(self.config)  # bad keys are logged by name, their defaults kept
        providers = Providers(self.context, settings.embedding_provider_id, settings.chat_provider_id)
        self.service = EngramService(settings, StarTools.get_data_dir(PLUGIN_NAME), providers,
                                     tz=astrbot_timezone(self.context))
        self.jobs = Jobs(self.service)
        await self.jobs.start()
        if _providers_loaded(self.context):  # a reload: AstrBot's providers are there already
            await self.service.announce()

    @filter.on_astrbot_loaded()
    async def announce(self) -> None:
        """The start-up line, once AstrBot's providers exist (plugins load before them)."""
        if self.service is not None:
            await self.service.announce()

    async def terminate(self) -> None:
        if self.jobs is not None:
            await self.jobs.stop()
        if self.service is not None:
            await self.service.close()
        if self._detach_logs is not None:
            self._detach_logs()

    @filter.event_message_type(filter.EventMessageType.ALL, priority=100)
    async def record_message(self, event: AstrMessageEvent) -> None:
        if self.service is not None:
            self.service.record_message(event)

    @filter.on_llm_request()
    async def inject_memories(self, event: AstrMessageEvent, req: ProviderRequest) -> None:
        if self.service is not None:
            await self.service.inject(event, req)

    @filter.on_llm_response()
    async def record_reply(self, event: AstrMessageEvent, resp: LLMResponse) -> None:
        if self.service is not None and resp.role != "err":
            self.service.record_reply(event, resp.completion_text or "")

    @filter.command("mem")
    async def mem(self, event: AstrMessageEvent) -> AsyncIterator[MessageEventResult]:
        """Engram's memory commands (admins only); /mem help lists them."""
        if self.service is not None:
            yield event.plain_result(await COMMANDS.dispatch(self.service, event, event.message_str))

    @filter.llm_tool(name="memory_recall")
    async def memory_recall(self, event: AstrMessageEvent, query: str = "", limit: int = 5,
                            archived: bool = False, **_: Any) -> str:
        """Recall what you remember about something. You only get what may be said in this chat.

        Args:
            query(string): what to recall, in a few words
            limit(number): how many memories to return, from 1 to 20 (default 5)
            archived(boolean): also search old, faded memories (only when asked to dig them up)
        """
        if self.service is None:
            return "error: memory is not ready"
        return await tools.memory_recall(self.service, event, query, limit, archived)

    @filter.llm_tool(name="memory_remember")
    async def memory_remember(self, event: AstrMessageEvent, text: str = "", about: str = "",
                              **_: Any) -> str:
        """Remember something for later. It is kept in this chat; you cannot choose where else it shows.

        Args:
            text(string): what to remember, as one short self-contained sentence
            about(string): who it is about: the user, a person's name, or empty when it is about no one
        """
        if self.service is None:
            return "error: memory is not ready"
        return await tools.memory_remember(self.service, event, text, about)


def _providers_loaded(context: Context) -> bool:
    try:
        return bool(context.get_all_providers())
    except Exception:  # no provider manager yet
        return False
