"""Engram's pages inside a real AstrBot 4.29.3's WebUI: AstrBot's own dashboard server on 127.0.0.1,
its login, its plugin-page route and bridge; the pages checked against the store, and seen by a real
headless Chromium that logs in to the WebUI like a person (screenshots: build/screenshots/webui/)."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import aiohttp
import pytest
import pytest_asyncio

from ..dashboard.chrome import Chrome
from ..fake_openai import FakeOpenAI, batch_lines
from .harness import ADMIN, PLUGIN_DIR, astrbot_root, episodes, injected_text, listening, write_plugin_config
from .webui import USER, log_in, serve_webui

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]

SHOTS = Path(os.environ.get("ENGRAM_SCREENSHOTS")
             or Path(__file__).resolve().parents[2] / "build" / "screenshots") / "webui"
GROUP = "g-webui"
PLACE = f"e2e:group:{GROUP}"
SELF = "I am Mnemo, the book club's quiet archivist. 我是读书会的记录员。"
IMAGE = "Lately I enjoy keeping track of who brings which book."
EXT = "/api/v1/plugins/extensions/astrbot_plugin_engram"
OPEN, CLOSE = "<engram-memory>", "</engram-memory>"
IN_PROCESS_FRAMES = ("--disable-features=IsolateSandboxedIframes,site-per-process",
                     "--disable-site-isolation-trials")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def site(server: FakeOpenAI, dashboard_port: int) -> AsyncIterator[dict[str, Any]]:
    """The bot with Engram installed (its own dashboard port switched off: the WebUI needs none), a
    group's lines, a fact the model remembered, an identity; AstrBot's WebUI on 127.0.0.1."""
    astrbot_root()
    from .bot import Bot

    bot = Bot(server)
    bot.install()
    write_plugin_config(bot.data, {"owner_ids": [ADMIN], "dashboard_enabled": False,
                                   "dashboard_port": dashboard_port})
    identity = bot.data / "plugin_data" / PLUGIN_DIR / "identity"
    identity.mkdir(parents=True, exist_ok=True)
    (identity / "self.md").write_text(SELF + "\n", "utf-8")
    (identity / "self-image.md").write_text(IMAGE + "\n", "utf-8")
    await bot.start()
    await bot.overhear("Zoe brings the lemon cake to book club on Friday.", "zoe", GROUP, name="Zoe")
    await bot.overhear("Yuki reads Snow Country in Japanese 雪国.", "yuki", GROUP, name="Yuki")
    await bot.overhear("Book club moves to the library's small room next month.", "zoe", GROUP, name="Zoe")
    await bot.overhear("Please, no walnuts in anything: I am allergic to walnuts.", "zoe", GROUP, name="Zoe")
    await bot.settle()
    server.default_reply = consolidating  # type: ignore[assignment]
    done = await bot.send("/mem consolidate", ADMIN, GROUP)  # the chat model learns it, with its source
    assert "1 added" in done.text, done.text
    await bot.settle()
    base, stop, task = await serve_webui(bot.core)
    yield {"bot": bot, "base": base, "token": await log_in(base)}
    stop.set()
    await asyncio.wait_for(task, 30)
    await bot.stop()
    assert not listening(dashboard_port)  # Engram opened no port of its own


def consolidating(body: dict[str, Any]) -> str:
    """The chat model: consolidation learns the walnut line as a memory about its speaker."""
    system = next((m["content"] for m in body.get("messages", []) if m.get("role") == "system"), "")
    if "long-term memory of a chat bot" not in str(system):
        return "noted"
    actions = [{"op": "add", "text": "Zoe is allergic to walnuts", "kind": "fact", "about": [who],
                "scope": "place", "sources": [f"e{i}"]}
               for i, who, text in batch_lines(body) if "walnuts" in text]
    return json.dumps({"actions": actions or [{"op": "none"}]})


def store(bot: Any) -> Path:
    return bot.data / "plugin_data" / PLUGIN_DIR / "engram.db"


def read(bot: Any, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    con = sqlite3.connect(f"file:{store(bot)}?mode=ro", uri=True)
    try:
        return list(con.execute(sql, args))
    finally:
        con.close()


async def get(http: aiohttp.ClientSession, url: str, token: str | None) -> tuple[int, dict[str, Any]]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with http.get(url, headers=headers) as r:
        return r.status, await r.json(content_type=None)


async def test_the_pages_are_listed_opened_and_answered_only_behind_astrbots_login(site) -> None:
    bot, base, token = site["bot"], site["base"], site["token"]
    apis = bot.core.star_context.registered_web_apis
    routes = [r[0] for r in apis if r[0].startswith("/astrbot_plugin_engram/")]
    assert {r.split("/")[2] for r in routes} == {"overview", "memories", "memory", "place", "recall", "graph",
                                                 "diary", "identity", "static"}
    assert all(r[2] == ["GET"] for r in apis if r[0] in routes)
    async with aiohttp.ClientSession() as http:
        status, listed = await get(http, f"{base}/api/v1/plugins/views?plugin_id={PLUGIN_DIR}", token)
        pages = [c for c in listed["data"]["components"] if c["type"] == "page"]
        assert status == 200 and [p["name"] for p in pages] == ["engram"]
        assert listed["data"]["i18n"]["zh-CN"]["views"]["engram"]["title"] == "Engram 记忆"
        status, entry = await get(http, f"{base}/api/v1/plugins/{PLUGIN_DIR}/views/engram", token)
        assert status == 200 and entry["status"] == "ok"
        async with http.get(base + entry["data"]["content_path"]) as r:  # the iframe's address
            page = await r.text()
        assert r.status == 200 and "engram.js" in page
        assert "/api/plugin/page/bridge-sdk.js?asset_token=" in page  # the bridge, with the page token
        assert (await get(http, f"{base}/api/v1/plugins/{PLUGIN_DIR}/views/engram", None))[0] == 401

        mid = read(bot, "SELECT id FROM memories WHERE text LIKE '%walnuts%'")[0][0]
        lines = [e for e in episodes(bot.data) if e["space"] == PLACE]
        urls = {"overview": "overview", "memories": "memories?q=walnuts", "memory": f"memory/{mid}",
                "place": f"place?space={quote(PLACE)}", "recall": f"recall?q=lemon+cake&space={quote(PLACE)}",
                "graph": "graph", "diary": "diary", "identity": "identity", "static": "static/app.js"}
        answers = {}
        for name, url in urls.items():
            assert (await get(http, f"{EXT}/{url}".join([base, ""]), None))[0] == 401  # no login: refused
            assert (await get(http, f"{base}{EXT}/{url}", "not-" + token))[0] == 401  # a forged token too
            status, body = await get(http, f"{base}{EXT}/{url}", token)
            assert status == 200 and body["status"] == "ok", (name, body)
            answers[name] = body["data"]
        async with http.post(f"{base}{EXT}/overview", headers={"Authorization": f"Bearer {token}"}) as r:
            assert (await r.json())["status"] == "error"  # nothing but GET is registered: nothing writes

    o = answers["overview"]["data"]
    assert o["episodes"] == len(episodes(bot.data))
    assert o["memories"] == read(bot, "SELECT count(*) FROM memories WHERE status = 'active'")[0][0] == 1
    assert [m["text"] for m in answers["memories"]["data"]["items"]] == ["Zoe is allergic to walnuts"]
    one = answers["memory"]
    assert "Zoe is allergic to walnuts" in one["html"] and one["data"]["sources"]
    assert [e["text"] for e in one["data"]["sources"]] == [
        "Please, no walnuts in anything: I am allergic to walnuts."]
    timeline = [e["text"] for e in answers["place"]["data"]["episodes"]["items"]]
    assert timeline == [e["content"] for e in lines]
    recall = answers["recall"]["data"]
    assert recall["block"].startswith(OPEN) and "lemon cake" in recall["block"] and SELF in recall["block"]
    assert IMAGE in recall["block"]  # the self-image line, as the plugin injects it
    assert IMAGE in answers["identity"]["html"]
    assert "EngramDraw" in answers["static"]["text"]


async def test_a_page_in_chinese_when_astrbot_asks_for_chinese(site) -> None:
    base, token = site["base"], site["token"]
    async with aiohttp.ClientSession() as http:
        _, zh = await get(http, f"{base}{EXT}/overview?lang=zh-CN", token)
        _, en = await get(http, f"{base}{EXT}/overview?lang=en-US", token)
    assert "<h1>概览</h1>" in zh["data"]["html"] and "<h1>Overview</h1>" in en["data"]["html"]


async def test_recall_explained_is_the_block_a_real_request_injected(site, server: FakeOpenAI) -> None:
    bot, base, token = site["bot"], site["base"], site["token"]
    question = "What cake does Zoe bring to book club?"
    zoe = next(e["actor"] for e in episodes(bot.data) if e["space"] == PLACE and "lemon" in e["content"])
    if datetime.now().second > 45:  # the block says the time to the minute: both within one minute
        await asyncio.sleep(61 - datetime.now().second)
    async with aiohttp.ClientSession() as http:
        url = f"{base}{EXT}/recall?q={quote(question)}&space={quote(PLACE)}&person={quote(zoe)}"
        status, body = await get(http, url, token)
    assert status == 200, body
    shown = body["data"]["data"]["block"]
    reply = await bot.send(question, "zoe", GROUP, name="Zoe")
    sent = injected_text(reply.requests[0])
    injected = sent[sent.index(OPEN):sent.index(CLOSE) + len(CLOSE)]
    assert shown == injected  # character for character: the same path made both
    assert "lemon cake" in injected and SELF in injected and IMAGE in injected


async def test_a_person_logs_in_to_the_webui_and_sees_engrams_pages(site, tmp_path) -> None:
    bot, base = site["bot"], site["base"]
    mid = read(bot, "SELECT id FROM memories WHERE text LIKE '%walnuts%'")[0][0]
    # a sandboxed plugin frame in this page's process, so that DevTools reaches it from the page
    # (what it shows and runs is the same; only where Chromium puts it differs)
    chrome = await Chrome().start(tmp_path / "profile", lang="zh-CN", flags=IN_PROCESS_FRAMES)
    try:
        await chrome.open(f"{base}/")
        await until(chrome, "!!document.querySelector('input[name=password]')")
        await chrome.eval("document.querySelector('input[name=username]').focus() || true")
        await chrome.eval("document.querySelector('input[name=username]').select() || true")
        await chrome.type_text(USER)
        await chrome.eval("document.querySelector('input[name=password]').focus() || true")
        from .webui import PASSWORD

        await chrome.type_text(PASSWORD)
        await until(chrome, "!document.querySelector('button[type=submit]').disabled")
        await chrome.eval("document.querySelector('button[type=submit]').click() || true")
        await until(chrome, "!location.hash.includes('/auth/login')")
        entry = ("[...document.querySelectorAll('.v-navigation-drawer .v-list-item')]"
                 ".find(e => e.innerText.trim() === 'Engram 记忆')")
        await until(chrome, f"!!{entry}")  # the sidebar names Engram's page (its zh-CN title)
        await chrome.eval(f"{entry}.click() || true")
        await until(chrome, f"location.hash.includes('/plugin-view/{PLUGIN_DIR}/engram')")
        await until(chrome, "!!document.querySelector('iframe.plugin-view-frame')")
        frame = await frame_of(chrome)
        await until(chrome, "document.querySelector('#engram')?.dataset.page === 'overview'", frame)
        text = await chrome.eval("document.body.innerText", frame)
        assert "概览" in text and str(len(episodes(bot.data))) in text
        assert await chrome.eval("document.querySelectorAll('#chart rect').length", frame) >= 1
        await chrome.screenshot(SHOTS / "overview.png")

        async def go(href: str, page: str) -> None:
            await chrome.eval(f"(() => {{ const a = document.createElement('a'); a.href = {href!r};"
                              " document.querySelector('main').appendChild(a); a.click(); return true; })()",
                              frame)
            await until(chrome, f"document.querySelector('#engram')?.dataset.page === {page!r}"
                                " && !document.querySelector('#engram').hasAttribute('aria-busy')", frame)

        await chrome.eval("document.querySelector('nav a[href=\"/memories\"]').click() || true", frame)
        await until(chrome, "document.querySelector('#engram')?.dataset.page === 'memories'", frame)
        assert "Zoe is allergic to walnuts" in await chrome.eval("document.body.innerText", frame)
        await chrome.screenshot(SHOTS / "memories.png")

        await go(f"/memories/{mid}", "memory")
        assert await chrome.eval("document.querySelector('blockquote.memory-text').innerText", frame) == \
            "Zoe is allergic to walnuts"
        assert "walnuts" in await chrome.eval("document.querySelector('li.ep.mark').innerText", frame)
        await chrome.screenshot(SHOTS / "memory.png")

        await go(f"/place?space={quote(PLACE)}", "place")
        assert "lemon cake" in await chrome.eval("document.querySelector('ol.timeline').innerText", frame)
        await chrome.screenshot(SHOTS / "place.png")

        # the browser's back and forward buttons (the top page's history) step through Engram's pages
        for step, page in (("back", "memory"), ("back", "memories"), ("forward", "memory"),
                           ("forward", "place")):
            await chrome.eval(f"history.{step}(); true")
            await until(chrome, f"document.querySelector('#engram')?.dataset.page === {page!r}"
                                " && !document.querySelector('#engram').hasAttribute('aria-busy')", frame)
        assert "lemon cake" in await chrome.eval("document.querySelector('ol.timeline').innerText", frame)
        assert await chrome.eval("location.hash.includes('/plugin-view/')")  # AstrBot's own page stayed

        await go("/recall", "recall")
        await chrome.eval("document.querySelector('input[name=q]').value = 'lemon cake'; "
                          f"document.querySelector('select[name=space]').value = {PLACE!r}; "
                          "document.querySelector('form.filters button').click(); true", frame)
        await until(chrome, "!!document.querySelector('pre.block')", frame)
        block = await chrome.eval("document.querySelector('pre.block').innerText", frame)
        assert block.startswith(OPEN) and "lemon cake" in block and IMAGE in block
        await chrome.screenshot(SHOTS / "recall.png")

        for href, page in (("/graph", "graph"), ("/diary", "diary"), ("/identity", "identity")):
            await go(href, page)
            await chrome.screenshot(SHOTS / f"{page}.png")
        assert IMAGE in await chrome.eval("document.body.innerText", frame)
    finally:
        await chrome.close()


async def frame_of(chrome: Chrome) -> int:
    for _ in range(100):
        try:
            return await chrome.frame("/views/engram/")
        except LookupError:
            await asyncio.sleep(0.1)
    tree = await chrome.send("Page.getFrameTree")
    raise AssertionError(f"Engram's page never opened inside the WebUI: {tree}")


async def until(chrome: Chrome, expression: str, context: int | None = None, timeout: float = 30) -> None:
    for _ in range(int(timeout * 10)):
        try:
            if await chrome.eval(expression, context):
                return
        except RuntimeError:
            pass
        await asyncio.sleep(0.1)
    raise AssertionError(f"never true: {expression}")


async def test_a_bad_address_says_why_in_the_pages_language_and_a_reload_keeps_the_pages(site) -> None:
    bot, base, token = site["bot"], site["base"], site["token"]
    async with aiohttp.ClientSession() as http:
        _, zh = await get(http, f"{base}{EXT}/memory/999999?lang=zh-CN", token)
        _, en = await get(http, f"{base}{EXT}/memories?size=0&lang=en-US", token)
        assert zh == {"status": "error", "message": "没有记忆 m999999", "data": {}}
        assert en["status"] == "error" and en["message"] == "size must be from 1 to 200"
        await bot.reload_plugin()  # AstrBot keeps the routes; the new plugin registers its own
        status, again = await get(http, f"{base}{EXT}/overview", token)
        assert status == 200 and again["status"] == "ok"
        assert again["data"]["data"]["episodes"] == len(episodes(bot.data))
        apis = bot.core.star_context.registered_web_apis
        assert len([r for r in apis if r[0] == "/astrbot_plugin_engram/overview"]) == 1  # replaced
