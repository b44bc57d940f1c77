"""Engram's pages as AstrBot's WebUI asks for them (``plugin/webui.py``), without the WebUI: a page
never creates the store, recall explained shows the very block the next injection gives, and showing
it changes nothing of that next block. (Through a real AstrBot and its WebUI: tests/e2e/test_webui.py.)"""

from __future__ import annotations

import asyncio
import time
from datetime import datetime

from astrbot_plugin_engram.plugin.dashboard import dashboard_settings
from astrbot_plugin_engram.plugin.service import EngramService
from astrbot_plugin_engram.plugin.webui import WebPages

from .conftest import MakeService, event, request


async def test_a_page_never_creates_the_store(make_service: MakeService) -> None:
    svc = make_service()
    pages = WebPages(svc, dashboard_settings(svc))
    zh = await pages.page("overview", {"lang": "zh-CN"}, "")
    assert zh == {"status": "error", "data": {},
                  "message": "Engram 还没有记忆：机器人看到第一条消息时才会创建。"}
    assert not svc.path.exists()
    svc.record_message(event("The library closes at nine.", "alice", "g1"))
    await svc.flush()
    en = await pages.page("overview", {}, "en-US,en;q=0.9")
    assert en["status"] == "ok" and en["data"]["data"]["episodes"] == 1 and en["data"]["lang"] == "en"
    pages.close()
    assert (await pages.page("overview", {}, ""))["message"].startswith("Engram is not running")


async def test_recall_explained_is_the_next_injection_and_showing_it_changes_nothing(
        service: EngramService) -> None:
    for text in ("Bob bakes sourdough every Sunday.", "The bakery on Elm street sells rye.",
                 "Bob's starter is called Doughbert."):
        service.record_message(event(text, "bob", "g1", name="Bob"))
    await service.flush()
    question = "What does Bob bake on Sundays?"
    place, bob = "qq:group:g1", "qq:bob"
    if datetime.now().second > 50:  # the block says the time to the minute: both within one
        await asyncio.sleep(61 - datetime.now().second)
    shown = [await service.explain(place, question, person=bob) for _ in range(2)]
    assert shown[0].text == shown[1].text and "sourdough" in shown[0].text
    req = request(question)
    # sent now (a platform stamps whole seconds: this one's second has not begun before the lines above)
    await service.inject(event(question, "bob", "g1", name="Bob", timestamp=int(time.time()) + 1), req)
    assert "\n".join(p.text for p in req.extra_user_content_parts) == shown[0].text  # to the character
    pages = WebPages(service, dashboard_settings(service))
    page = await pages.page("recall", {"q": question, "space": place, "person": bob}, "")
    assert page["data"]["data"]["block"] == (await service.explain(place, question, person=bob)).text
