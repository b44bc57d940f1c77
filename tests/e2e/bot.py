"""One real AstrBot core in this process, fed messages through its pipeline like a platform would."""

from __future__ import annotations

import asyncio
import itertools
import logging
import sys
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, TypeVar

from astrbot.api.message_components import At, Plain
from astrbot.api.platform import (
    AstrBotMessage,
    AstrMessageEvent,
    Group,
    MessageMember,
    MessageType,
    PlatformMetadata,
)
from astrbot.core import LogBroker, astrbot_config, db_helper
from astrbot.core.core_lifecycle import AstrBotCoreLifecycle
from astrbot.core.message.message_event_result import MessageChain
from astrbot.core.star.star_handler import EventType, star_handlers_registry
from astrbot.core.utils.astrbot_path import get_astrbot_data_path

from ..fake_openai import FakeOpenAI
from .harness import (
    PLUGIN_DIR,
    PLUGIN_SRC,
    SELF_ID,
    PluginLoadError,
    Reply,
    copy_plugin,
    fresh_root_state,
    merge,
    provider_config,
)

_ids = itertools.count(1)
T = TypeVar("T")
STOP_TIMEOUT = 60.0  # a shutdown or reload that takes longer is hung (a terminate() never returned)


def quiet_http_logs() -> None:
    """AstrBot sets the root logger to DEBUG; keep HTTP client chatter out of failure reports."""
    for name in ("httpcore", "httpcore2", "httpx", "httpx2", "openai", "aiosqlite", "asyncio"):
        logging.getLogger(name).setLevel(logging.WARNING)


async def bounded(work: Awaitable[T], what: str, timeout: float = STOP_TIMEOUT) -> T:
    """``await work``, failing the test (instead of hanging the run) when it takes too long."""
    try:
        return await asyncio.wait_for(work, timeout)
    except TimeoutError:
        raise AssertionError(f"{what} did not finish in {timeout:.0f} s") from None


class FakeEvent(AstrMessageEvent):
    """An incoming message on a test platform; ``send`` records what the bot said."""

    def __init__(self, text: str, sender: str, name: str, group: str | None, platform: str,
                 at_bot: bool, platform_id: str = ""):
        msg = AstrBotMessage()
        msg.type = MessageType.GROUP_MESSAGE if group else MessageType.FRIEND_MESSAGE
        msg.self_id = SELF_ID
        msg.session_id = group or sender
        msg.message_id = f"m{next(_ids)}"
        msg.sender = MessageMember(user_id=sender, nickname=name)
        if group:
            msg.group = Group(group_id=group)
        msg.message = ([At(qq=SELF_ID)] if at_bot else []) + [Plain(text)]
        msg.message_str = text
        msg.raw_message = None
        # the platform's type (``aiocqhttp``) and the id its owner gave it (``qq``: what /sid shows)
        meta = PlatformMetadata(name=platform, description="e2e test platform", id=platform_id or platform)
        super().__init__(text, msg, meta, msg.session_id)
        self.sent: list[str] = []

    async def send(self, message: MessageChain) -> None:
        if message is not None:
            self.sent.append(message.get_plain_text())
        await super().send(message)


class ListedPlatform:
    """The test platform as AstrBot's platform manager lists it, as a loaded adapter is listed (the
    plugin reads the bot's platforms there: a bare owner id counts only on the one chat platform)."""

    def __init__(self, name: str, platform_id: str = ""):
        self.name = name
        self.id = platform_id or name
        self.client_self_id = f"{name}-listed"

    def meta(self) -> PlatformMetadata:
        return PlatformMetadata(name=self.name, description="e2e test platform", id=self.id)

    def get_stats(self) -> dict[str, Any]:
        return {"id": self.name, "type": self.name, "status": "running", "error_count": 0}

    async def terminate(self) -> None:
        return None


class Bot:
    """A started AstrBot core with the plugin loaded, talking to ``server``."""

    def __init__(self, server: FakeOpenAI, platform: str = "e2e", plugin: str = PLUGIN_DIR,
                 platform_id: str = ""):
        self.server = server
        self.platform = platform
        self.platform_id = platform_id  # the id the owner gave the platform (default: its type)
        self._own = platform
        self.plugin = plugin
        self.data = Path(get_astrbot_data_path())
        self.core: Any = None

    # ---- lifecycle -----------------------------------------------------------------------
    def install(self, src: Path = PLUGIN_SRC) -> None:
        """Point AstrBot at the fake server and copy the plugin in, wiping earlier plugins and data."""
        fresh_root_state(self.data)
        # AstrBot imports plugins as data.plugins.<dir>.main; `astrbot run` puts the root on sys.path.
        if str(self.data.parent) not in sys.path:
            sys.path.insert(0, str(self.data.parent))
        astrbot_config.update(merge(dict(astrbot_config), provider_config(self.server.base_url)))
        astrbot_config.save_config()
        copy_plugin(src, self.data / "plugins", self.plugin)

    async def start(self) -> None:
        """Build and initialize a core (plugins, then providers, then pipelines), like ``astrbot run``."""
        self.core = AstrBotCoreLifecycle(LogBroker(), db_helper)
        await self.core.initialize()
        self.core.platform_manager.platform_insts.append(ListedPlatform(self.platform, self.platform_id))
        quiet_http_logs()
        self.check_loaded()
        # What core.start() does before it parks in gather(): background tasks, then the
        # on_astrbot_loaded hooks (awaited here, so a test starts after they have run).
        self.core._load()
        for handler in star_handlers_registry.get_handlers_by_event_type(EventType.OnAstrBotLoadedEvent):
            await handler.handler()

    async def stop(self) -> None:
        """Terminate the plugins and close the core, as a shutdown does."""
        if self.core is not None:
            core, self.core = self.core, None
            await bounded(core.stop(), "AstrBot shutdown (each plugin's terminate())")

    async def reload_plugin(self) -> None:
        """Terminate and load the plugin again through AstrBot's plugin manager (the dashboard's reload)."""
        ok, err = await bounded(self.core.plugin_manager.reload(self.metadata().name), "plugin reload")
        if not ok:
            raise PluginLoadError(f"reload failed: {err}")
        self.check_loaded()

    def check_loaded(self, name: str | None = None) -> None:
        """Fail loudly, with AstrBot's traceback, if the plugin is not loaded and active."""
        name = name or self.plugin
        pm = self.core.plugin_manager
        failed = pm.failed_plugin_dict.get(name)
        if failed:
            trace = failed.get("error_trace") if isinstance(failed, dict) else failed
            raise PluginLoadError(f"AstrBot failed to load {name}:\n{trace}\n{pm.failed_plugin_info}")
        if not any(s.root_dir_name == name and s.activated for s in pm.context.get_all_stars()):
            raise PluginLoadError(f"{name} is not among the loaded plugins")

    def metadata(self, name: str | None = None) -> Any:
        """The plugin's StarMetadata (name, the Star instance as ``star_cls``, its config)."""
        name = name or self.plugin
        for s in self.core.plugin_manager.context.get_all_stars():
            if s.root_dir_name == name:
                return s
        raise PluginLoadError(f"{name} is not loaded")

    async def settle(self) -> None:
        """Wait until the plugin has durably written what it queued (recording is asynchronous)."""
        flush = getattr(getattr(self.metadata().star_cls, "service", None), "flush", None)
        if not callable(flush):
            raise AssertionError("the plugin has no service.flush(); the harness cannot wait for recording")
        await flush()

    # ---- talking -------------------------------------------------------------------------
    async def send(self, text: str, sender: str, group: str | None = None, *, name: str | None = None,
                   at_bot: bool | None = None) -> Reply:
        """Deliver one message; return what the bot said and what the model was sent meanwhile.

        In a group the message wakes the bot only when it @-mentions it (``at_bot``, default: when
        ``group`` is set... and the text is not a command), like a real group chat.
        """
        if at_bot is None:
            at_bot = group is not None and not text.startswith("/")
        own = self.platform == self._own  # a test may speak on another platform for a message
        event = FakeEvent(text, sender, name or sender.title(), group, self.platform, at_bot,
                          self.platform_id if own else "")
        before = len(self.server.chat_requests())
        await self.core.pipeline_scheduler_mapping["default"].execute(event)
        return Reply(event.sent, self.server.chat_requests()[before:])

    async def overhear(self, text: str, sender: str, group: str, *, name: str | None = None) -> Reply:
        """A group line that does not address the bot (no @, no command)."""
        return await self.send(text, sender, group, name=name, at_bot=False)
