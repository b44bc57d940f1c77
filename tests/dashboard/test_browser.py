"""A real browser (headless Chromium) loads the dashboard over a seeded store with Chinese and
English content, checks what it drew, and saves screenshots (``build/screenshots/``)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from urllib.parse import quote

import pytest

from astrbot_plugin_engram.dashboard import DashboardServer, DashboardSettings, make_app
from astrbot_plugin_engram.memory import Engram, Episode
from astrbot_plugin_engram.memory.self.selfhood import BlockDefaults

from ..conftest import HashEmbedder
from .chrome import Chrome
from .conftest import GROUP, JOBS, OWNER_DM, SELF_IMAGE, TOKEN, XSS_SPACE
from .test_server import free_port

SHOTS = Path(
    os.environ.get("ENGRAM_SCREENSHOTS") or Path(__file__).resolve().parents[2] / "build" / "screenshots"
)
pytestmark = pytest.mark.slow


@pytest.fixture
async def site(seeded, tmp_path):
    path, ids = seeded
    engram = await Engram.open(path, HashEmbedder(), read_only=True)
    server = DashboardServer(
        make_app(
            engram,
            DashboardSettings(token=TOKEN, block=BlockDefaults(inject_budget_tokens=400, recall_k=6),
                              owner_places=lambda s: s == OWNER_DM, jobs=lambda: JOBS),
        ),
        "127.0.0.1",
        free_port(),
    )
    assert await server.start()
    yield server.url.rstrip("/"), ids
    await server.stop()
    await engram.close()


@pytest.fixture
async def chrome(tmp_path):
    browser = await Chrome().start(tmp_path / "profile")
    yield browser
    await browser.close()


async def test_a_real_browser_draws_every_page(site, chrome):
    base, ids = site
    assert await chrome.open(f"{base}/?token={TOKEN}") == 200  # the link sets the cookie, drops the token
    assert await chrome.eval("location.href") == f"{base}/"
    assert await chrome.eval("document.cookie") == ""  # HttpOnly: no script can read the token
    bars = await chrome.eval("document.querySelectorAll('#chart rect').length")
    days = await chrome.eval("JSON.parse(document.getElementById('chart-data').textContent).length")
    assert bars == days >= 3  # a bar per day; the sample spans several days
    assert await chrome.eval(
        "[...document.querySelectorAll('#chart rect')].every(r => +r.getAttribute('height') > 0)"
    )
    assert "林晓" in await chrome.eval("document.body.innerText")
    jobs = await chrome.eval(
        "[...document.querySelectorAll('table.jobs tbody tr')].map(r => [...r.cells].map(c => c.innerText))"
    )
    assert [row[0] for row in jobs] == ["diary", "consolidate", "fading"]  # the seeded runs, latest first
    assert jobs[0][2].startswith("failed") and "<script>window.pwned=1</script>" in jobs[0][2]
    assert jobs[1][2] == "ok" and jobs[1][3] == "2 / 0" and "added 1" in jobs[1][4]
    assert "timeout 1" in jobs[1][4] and jobs[2][1] == "never run yet"
    await chrome.screenshot(SHOTS / "overview.png")
    await chrome.eval("document.querySelector('table.jobs').scrollIntoView() || true")
    await chrome.screenshot(SHOTS / "overview-jobs.png")

    assert await chrome.open(f"{base}/memories/{ids['second']}") == 200
    text = await chrome.eval("document.querySelector('blockquote.memory-text').innerText")
    assert text == "王磊喜欢浅烘的埃塞俄比亚咖啡豆 (light roast)"
    assert await chrome.eval("document.querySelectorAll('ol.conversation li.ep.mark').length") == 2
    assert await chrome.eval("document.querySelectorAll('table.versions tbody tr').length") == 2
    await chrome.screenshot(SHOTS / "memory.png")

    assert await chrome.open(f"{base}/place?space={quote(GROUP)}&size=10&page=1") == 200
    assert await chrome.eval("document.querySelectorAll('ol.timeline li.ep').length") == 10
    assert await chrome.eval("!!document.querySelector('a[rel=next]')")
    await chrome.screenshot(SHOTS / "place.png")

    q = quote("王磊生日想吃什么？ hotpot")
    assert await chrome.open(f"{base}/recall?q={q}&space={quote(GROUP)}") == 200
    rows = await chrome.eval("document.querySelectorAll('table.hits tbody tr').length")
    assert 1 <= rows <= 6
    block = await chrome.eval("document.querySelector('pre.block').innerText")
    assert block.startswith("<engram-memory>") and "火锅" in block
    assert int(await chrome.eval("document.getElementById('tokens').innerText")) <= 400
    await chrome.screenshot(SHOTS / "recall.png")

    assert await chrome.open(f"{base}/graph") == 200
    assert await chrome.eval("document.querySelectorAll('#graph circle').length") >= 3  # people
    assert await chrome.eval("document.querySelectorAll('#graph rect').length") >= 1  # memories about them
    assert await chrome.eval("document.querySelectorAll('#graph line.talks').length") >= 1
    assert "王磊" in await chrome.eval(
        "[...document.querySelectorAll('#graph text')].map(t => t.textContent).join()"
    )
    await chrome.screenshot(SHOTS / "graph.png")

    assert await chrome.open(f"{base}/identity") == 200
    assert await chrome.eval("document.querySelector('pre.self-image').innerText") == SELF_IMAGE
    assert await chrome.eval("document.querySelectorAll('ol.image-history li').length") == 1
    assert await chrome.eval("document.querySelectorAll('table.proposals tbody tr').length") == 1
    assert "<script>window.pwned=1</script>" in await chrome.eval(
        "document.querySelector('table.proposals').innerText")
    await chrome.screenshot(SHOTS / "identity.png")


async def test_hostile_text_stays_text_in_a_real_browser(site, chrome):
    base, ids = site
    await chrome.open(f"{base}/?token={TOKEN}")
    for path in [
        f"/memories/{ids['xss']}",
        "/memories",
        f"/place?space={quote(XSS_SPACE)}",
        "/graph",
        "/",
        f"/recall?q=pwned&space={quote(XSS_SPACE)}",
        "/identity",
    ]:
        assert await chrome.open(base + path) == 200
        assert await chrome.eval("typeof window.pwned") == "undefined", path
        assert await chrome.eval("document.querySelectorAll('main img').length") == 0, path
    await chrome.open(f"{base}/memories/{ids['xss']}")
    assert "<script>window.pwned=1</script>" in await chrome.eval("document.body.innerText")


async def test_chinese_labels_for_a_chinese_browser(site, tmp_path):
    base, _ = site
    browser = await Chrome().start(tmp_path / "zh-profile", lang="zh-CN")
    try:
        await browser.open(f"{base}/?token={TOKEN}")
        assert await browser.eval("document.querySelector('h1').innerText") == "概览"
        await browser.screenshot(SHOTS / "overview-zh.png")
    finally:
        await browser.close()


async def test_the_content_security_policy_breaks_no_page_and_stops_markup_that_slipped_through(site, chrome):
    """Escaping is the first line; the CSP the second: a handler or inline script that reached a page
    would not run. No page of ours trips it (no inline script, style or handler of our own)."""
    base, ids = site
    await chrome.send("Page.addScriptToEvaluateOnNewDocument", source=(
        "window.__violations = [];"
        "document.addEventListener('securitypolicyviolation',"
        " e => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));"))
    await chrome.open(f"{base}/?token={TOKEN}")
    for path in ["/", "/memories", f"/memories/{ids['second']}", f"/place?space={quote(GROUP)}",
                 f"/recall?q=x&space={quote(GROUP)}", "/graph", "/diary", "/identity", "/memories?page=x"]:
        await chrome.open(base + path)
        assert await chrome.eval("window.__violations") == [], path
    await chrome.eval("document.querySelector('main').insertAdjacentHTML('beforeend',"
                      " '<img src=x onerror=\"window.pwned=1\"><svg onload=\"window.pwned=2\"></svg>') || 1")
    await asyncio.sleep(0.5)  # an image error fires after a moment
    assert await chrome.eval("typeof window.pwned") == "undefined"
    assert await chrome.eval("window.__violations.every(v => v.startsWith('script-src-attr'))")
    assert await chrome.eval("window.__violations.length") >= 1


LONG_PLACE = "qq:group:" + "9" * 90  # a place whose name is longer than a phone is wide


@pytest.fixture
async def long_place(seeded):
    path, _ = seeded
    engram = await Engram.open(path, HashEmbedder(), background=False)
    await engram.record(Episode(place=LONG_PLACE, content="一条消息" * 40, actor="qq:77",
                                actor_name="名字特别长的群友Supercalifragilisticexpialidocious"))
    await engram.close()


async def test_no_page_is_wider_than_a_phone(long_place, site, tmp_path):
    """At 390 px (a phone), tables of memories, a place's learned memories and the overview's places
    made the whole page scroll sideways (up to 1,208 px): the menu and the timeline slid away with
    it; recall's place list was as wide as its longest place. Wide tables now scroll inside the page;
    the page keeps the phone's width."""
    base, ids = site
    browser = await Chrome().start(tmp_path / "phone-profile", lang="zh-CN")
    try:
        await browser.send("Emulation.setDeviceMetricsOverride", width=390, height=844, deviceScaleFactor=1,
                           mobile=True)
        await browser.open(f"{base}/?token={TOKEN}")
        for path in ["/", "/memories", f"/memories/{ids['second']}", f"/place?space={quote(GROUP)}",
                     f"/recall?q=hotpot&space={quote(GROUP)}", "/graph", "/diary", "/identity",
                     f"/place?space={quote(XSS_SPACE)}", f"/place?space={LONG_PLACE}", "/nowhere",
                     "/memories?page=x"]:
            await browser.open(base + path)
            assert await browser.eval("document.documentElement.scrollWidth") <= 390, path
        await browser.screenshot(SHOTS / "memories-phone-zh.png")
    finally:
        await browser.close()


ONE_LINE = """[...document.querySelectorAll('table.memories tbody tr')].every(tr => [2, 4, 6, 7].every(i => {
  const range = document.createRange(); range.selectNodeContents(tr.cells[i]);
  return new Set([...range.getClientRects()].map(r => Math.round(r.top))).size <= 1; }))"""


async def test_short_columns_of_a_memory_table_stay_on_one_line(long_place, site, tmp_path):
    """Next to long memories, a Chinese kind, status or date was squeezed to one character a line
    ("事/实", "有/效", "2026-/12-02") on a desktop screen."""
    base, ids = site
    browser = await Chrome().start(tmp_path / "zh-desk", lang="zh-CN")
    try:
        await browser.open(f"{base}/?token={TOKEN}")
        for path in ["/memories", f"/place?space={quote(GROUP)}"]:
            await browser.open(base + path)
            assert await browser.eval(ONE_LINE), path
    finally:
        await browser.close()
