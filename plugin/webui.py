"""Engram's pages inside AstrBot's WebUI: behind AstrBot's own login, no port and no token of ours.

AstrBot shows the plugin's view (``views/engram/index.html``) in an iframe of its WebUI and hands the
view a bridge to the routes registered here; each route answers through AstrBot's
``/api/v1/plugins/extensions/astrbot_plugin_engram/<page>`` with the WebUI's login token, so a request
without it never reaches this module. Every route is GET and reads only (``dashboard/pages.py`` makes
the pages, the same ones the standalone dashboard serves).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ..dashboard import DashboardSettings
from ..dashboard.app import static_files
from ..dashboard.i18n import pick_lang
from ..dashboard.pages import PAGES, answer
from ..memory.wording import pick
from .service import EngramService

log = logging.getLogger("engram.plugin")

PLUGIN = "astrbot_plugin_engram"  # AstrBot finds the plugin by a route's first segment
Reply = dict[str, Any]
NOT_RUNNING = ("Engram is not running (the plugin is stopped or reloading).",
               "Engram 没有在运行（插件已停用或正在重载）。")
NOT_YET = ("Engram has no memory yet: it is created at the first message the bot sees.",
           "Engram 还没有记忆：机器人看到第一条消息时才会创建。")
NOT_OPEN = ("Engram: the memory file is not open", "Engram：记忆文件没有打开")
FAILED = ("Engram: this page failed; AstrBot's log says why.",
          "Engram：这个页面出错了，原因见 AstrBot 的日志。")


def ok(data: Any) -> Reply:
    return {"status": "ok", "message": "", "data": data}


def refused(message: str) -> Reply:
    """AstrBot's error shape: its WebUI shows ``message`` (HTTP 200, as AstrBot's own routes answer)."""
    return {"status": "error", "message": message, "data": {}}


class WebPages:
    """The routes of Engram's pages in AstrBot's WebUI, over one service (None once the plugin stopped:
    AstrBot keeps registered routes until the plugin registers them again)."""

    def __init__(self, service: EngramService, settings: DashboardSettings):
        self.service: EngramService | None = service
        self.settings = settings
        self._static = {n: b.decode("utf-8") for n, b in static_files().items()}

    def register(self, register_web_api: Callable[..., None]) -> None:
        """Register every route (``context.register_web_api``); GET only."""
        for name in PAGES:
            route = f"/{PLUGIN}/memory/<item>" if name == "memory" else f"/{PLUGIN}/{name}"
            register_web_api(route, self._page(name), ["GET"], f"Engram: the {name} page (read only)")
        register_web_api(f"/{PLUGIN}/static/<name>", self._file, ["GET"],
                         "Engram: the pages' style and script")

    def close(self) -> None:
        self.service = None

    def _page(self, name: str) -> Callable[..., Awaitable[Reply]]:
        async def handler(item: str = "", **_: Any) -> Reply:
            return await self.page(name, *_request(), item=item)

        return handler

    async def page(self, name: str, query: Mapping[str, str], accept_language: str, item: str = "") -> Reply:
        """Page ``name`` for the WebUI: its HTML (what the view shows) and its data; ``query["lang"]``:
        AstrBot's own language setting, which the view passes on (else the browser's)."""
        lang = pick_lang(query.get("lang") or accept_language)
        service = self.service
        if service is None:
            return refused(pick(lang, NOT_RUNNING))
        if service.engram is None and not service.path.exists():  # a page never creates the store
            return refused(pick(lang, NOT_YET))
        params = {k: v for k, v in query.items() if k != "lang"}
        try:
            engram = await service.memory()
        except Exception as e:  # the memory file could not be opened: say so, as the bot's log does
            log.warning("Engram: the WebUI page %s could not open the memory: %s", name, e)
            return refused(f"{pick(lang, NOT_OPEN)}: {e}")
        try:
            a = await answer(name, params, lang, engram, self.settings, item=item)
        except Exception:  # a page must never take AstrBot's WebUI down with it
            log.exception("Engram: the WebUI page %s failed", name)
            return refused(pick(lang, FAILED))
        if a.status != 200:
            return refused(a.message or str(a.status))
        return ok({"page": name, "lang": lang, "html": a.html, "data": a.data})

    async def _file(self, name: str = "", **_: Any) -> Reply:
        if name not in self._static:  # a fixed list: nothing from the request reaches the file system
            return refused("no such file")
        return ok({"name": name, "text": self._static[name]})


def _request() -> tuple[dict[str, str], str]:
    """The query and the browser's Accept-Language of the request AstrBot is handling."""
    from astrbot.api.web import request  # only inside AstrBot's handler

    return {k: v for k, v in request.query.items()}, request.headers.get("Accept-Language", "")
