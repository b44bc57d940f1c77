"""Engram for AstrBot: each hook hands its work to the plugin's service (``plugin/``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from astrbot.api import logger
from astrbot.api.event import AstrMessageEvent, MessageEventResult, filter
from astrbot.api.provider import LLMResponse, ProviderRequest
from astrbot.api.star import Context, Star, StarTools

from .plugin import tools
from .plugin.abilities import Abilities, astrbot_commands, astrbot_tools
from .plugin.commands.registry import COMMANDS
from .plugin.config import parse_settings
from .plugin.dashboard import dashboard_settings, start_dashboard, stop_dashboard
from .plugin.events import FULL_WIDTH_MEM
from .plugin.jobs.background import Jobs
from .plugin.jobs.self_jobs import SelfJobs
from .plugin.logs import attach
from .plugin.providers import Providers, timezone_of
from .plugin.service import EngramService
from .plugin.webui import WebPages

PLUGIN_NAME = "astrbot_plugin_engram"


class EngramPlugin(Star):
    """Long-term memory: records every message, injects scoped memories, owner commands, model tools."""

    def __init__(self, context: Context, config: Any = None):
        super().__init__(context, config)
        self.config = config
        self.service: EngramService | None = None
        self.jobs: Jobs | None = None
        self.self_jobs: SelfJobs | None = None
        self._detach_logs: Any = None
        self.pages: WebPages | None = None

    async def initialize(self) -> None:
        self._detach_logs = attach(logger)  # the core's lines go to AstrBot's console and WebUI
        settings, _ = parse_settings(self.config)  # bad keys are logged by name, their defaults kept
        providers = Providers(self.context, settings.embedding_provider_id, settings.chat_provider_id)
        data_dir = StarTools.get_data_dir(PLUGIN_NAME)
        abilities = Abilities(data_dir, lambda: astrbot_tools(self.context), astrbot_commands)
        self.service = EngramService(settings, data_dir, providers, tz=timezone_of(settings, self.context),
                                     abilities=abilities)
        # Engram's pages in AstrBot's WebUI (views/engram), behind its login; and its own port, if enabled
        self.pages = WebPages(self.service, dashboard_settings(self.service))
        self.pages.register(self.context.register_web_api)
        await start_dashboard(self.service)  # never raises: a port in use is logged, the bot goes on
        self.jobs = Jobs(self.service)
        self.self_jobs = SelfJobs(self.jobs)  # diary and self-image, added before the scheduler starts
        await self.jobs.start()
        if _providers_loaded(self.context):  # a reload: AstrBot's providers are there already
            await self.service.announce()

    @filter.on_astrbot_loaded()
    async def announce(self) -> None:
        """The start-up line, once AstrBot's providers exist (plugins load before them)."""
        if self.service is not None:
            await self.service.announce()

    async def terminate(self) -> None:
        if self.pages is not None:
            self.pages.close()  # AstrBot keeps the routes: they answer "not running" from now on
        if self.jobs is not None:
            await self.jobs.stop()
        if self.service is not None:
            await stop_dashboard(self.service)
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

    @filter.command("mem", alias={FULL_WIDTH_MEM})  # "／mem": a Chinese keyboard's slash
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

    @filter.llm_tool(name="memory_forget")
    async def memory_forget(self, event: AstrMessageEvent, what: str = "", recent: int = 0,
                            **_: Any) -> str:
        """Forget, for good, what the person talking to you told you about themselves here, when they ask
        ("forget what I told you about my ex", "把我刚才说的那件事忘掉"). Reaches only their own words in
        this chat and your memories about them here; tell them what was removed.

        Args:
            what(string): what to forget, in a few words from what they said (e.g. "my ex Alex")
            recent(number): also their latest lines here, from 0 to 10 (for "what I just said": 1)
        """
        if self.service is None:
            return "error: memory is not ready"
        return await tools.memory_forget(self.service, event, what, recent)

    @filter.llm_tool(name="identity_propose")
    async def identity_propose(self, event: AstrMessageEvent, change: str = "", reason: str = "",
                               **_: Any) -> str:
        """Propose a change to your core identity (who you are). Only your owner can approve it.

        Args:
            change(string): the sentence to add to your identity, in your own words
            reason(string): why, in one short sentence
        """
        if self.service is None:
            return "error: memory is not ready"
        return await tools.identity_propose(self.service, event, change, reason)

def _providers_loaded(context: Context) -> bool:
    try:
        return bool(context.get_all_providers())
    except Exception:  # no provider manager yet
        return False
