"""What a person using the dashboard sees, in English and in Chinese: true labels, times in the
bot's zone with the zone said, every message in the browser's language, values and recall's
features named in words, and links that lead to the line a memory came from."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from datetime import datetime, timezone
from zoneinfo import ZoneInfo

import pytest
from aiohttp.test_utils import TestClient, TestServer

from astrbot_plugin_engram.dashboard import DashboardSettings, make_app
from astrbot_plugin_engram.memory import Engram, Episode, Memory

from ..conftest import HashEmbedder
from .conftest import AUTH, GROUP, JOBS, TOKEN, serve

ZH = {**AUTH, "Accept-Language": "zh-CN,zh;q=0.9"}
EN = {**AUTH, "Accept-Language": "en-US,en;q=0.9"}


@pytest.fixture
async def shanghai(seeded) -> AsyncIterator[tuple[TestClient, Engram, dict[str, int]]]:
    """The seeded store's dashboard as a bot in Shanghai serves it."""
    settings = DashboardSettings(token=TOKEN, tz=ZoneInfo("Asia/Shanghai"), jobs=lambda: JOBS)
    async for served in serve(seeded, settings):
        yield served


def cells(page: str, table_class: str) -> list[list[str]]:
    body = page.split(f'<table class="{table_class}">', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr>(.*?)</tr>", body, re.S)
    return [re.findall(r"<t[dh]>(.*?)</t[dh]>", row, re.S) for row in rows]


async def test_job_times_are_not_labelled_utc_when_they_are_in_the_bots_zone(shanghai):
    """The jobs table said "Last run (UTC)" over times in the bot's zone (8 hours off in Shanghai)."""
    client, _, _ = shanghai
    for headers in (EN, ZH):
        page = await (await client.get("/", headers=headers)).text()
        assert "(UTC)" not in page
        assert "Asia/Shanghai (UTC+08:00)" in page  # each page says which zone its times are in
    runs = await (await client.get("/api/overview", headers=EN)).json()
    started = next(j["last_started"] for j in runs["jobs"] if j["name"] == "consolidate")
    assert started.endswith("+08:00")
    page = await (await client.get("/", headers=EN)).text()
    assert started[:16].replace("T", " ") in page  # shown as read: "2026-12-02 09:45", no "T"


async def test_identity_times_are_in_the_bots_zone_like_every_other_page(shanghai):
    """The self-image history showed its UTC file stamp: replaced at 22:00 on Nov 30, when the bot's
    clock said 06:00 on Dec 1."""
    client, _, _ = shanghai
    d = await (await client.get("/api/identity", headers=EN)).json()
    assert d["history"][0]["replaced_at"] == "2026-12-01T06:00:00+08:00"  # kept at 2026-11-30 22:00 UTC
    page = await (await client.get("/identity", headers=EN)).text()
    assert "2026-12-01 06:00" in page and "2026-11-30 22:00" not in page


async def test_an_unknown_address_answers_a_page_in_the_browsers_language(dash):
    """/nowhere answered aiohttp's bare "404: Not Found" in English, without the page or its menu."""
    client, _, _ = dash
    r = await client.get("/nowhere", headers=ZH)
    page = await r.text()
    assert r.status == 404 and r.content_type == "text/html"
    assert "未找到" in page and "概览" in page and "Not Found" not in page
    r = await client.get("/api/nowhere", headers=ZH)
    assert r.status == 404 and (await r.json())["error"]


@pytest.mark.parametrize("path, zh, en", [
    ("/memories?page=abc", "页码必须是整数", "page must be a whole number"),
    ("/memories?page=0", "页码必须在 1 到", "page must be from 1"),
    ("/memories?kind=secret", "类型必须是", "kind must be one of"),
    ("/memories/99999", "没有记忆 m99999", "no memory m99999"),
    ("/memories/abc", "不是记忆编号", "is not a memory id"),
    ("/place?space=nope", "没有地点", "no place"),
])
async def test_error_messages_are_in_the_browsers_language(dash, path, zh, en):
    """A Chinese page said "page must be a whole number, not 'abc'" under its Chinese title."""
    client, _, _ = dash
    assert zh in await (await client.get(path, headers=ZH)).text()
    assert en in await (await client.get(path, headers=EN)).text()
    api = await client.get("/api" + path, headers=ZH)  # the JSON keeps one language for scripts
    assert en in (await api.json())["error"]


async def test_recall_explained_bad_input_is_in_the_browsers_language(dash):
    client, _, _ = dash
    page = await (await client.get("/recall?q=x&space=qq:group:none", headers=ZH)).text()
    assert "未知的受众" in page and "unknown audience" not in page


async def test_kinds_statuses_and_job_results_are_in_the_browsers_language(dash, seeded):
    """A Chinese page listed "preference", "superseded" and "failed" as they are stored."""
    client, _, ids = dash
    memory = await (await client.get(f"/memories/{ids['first']}", headers=ZH)).text()
    assert "偏好" in memory and "已被取代" in memory and ">preference<" not in memory
    listing = await (await client.get("/memories", headers=ZH)).text()
    assert '<option value="preference">偏好</option>' in listing  # the filter's value stays the word
    overview = await (await client.get("/", headers=ZH)).text()
    assert "失败" in cells(overview, "jobs")[1][2]
    english = await (await client.get(f"/memories/{ids['first']}", headers=EN)).text()
    assert "preference" in english and "superseded" in english


async def test_recall_explained_names_its_features_in_words(dash):
    """The hits table's columns were the ranker's keys: kw, cos, cos_qq, nb2, session_best…"""
    client, _, _ = dash
    for headers, word, key in ((EN, "Keyword match", "kw"), (ZH, "关键词匹配", "kw")):
        page = await (await client.get(f"/recall?q=hotpot&space={GROUP}", headers=headers)).text()
        head = cells(page, "hits")[0]
        assert word in head[5] and f"<code>{key}</code>" not in " ".join(head)  # words, not keys
        assert 'class="legend"' in page  # and what each one measures, under the table


async def test_a_memorys_source_links_to_the_page_of_its_place_that_holds_it(tmp_path):
    """The source's place linked to the place's latest page: with more lines since, the line the
    memory came from was pages back and the person had to hunt for it."""
    engram = await Engram.open(tmp_path / "engram.db", HashEmbedder(), background=False)
    t = datetime(2026, 11, 1, tzinfo=timezone.utc)
    ids = await engram.record_many([Episode(place=GROUP, content=f"line {i}", actor="qq:1", actor_name="Ann",
                                            time=t) for i in range(130)])
    mid = await engram.add_memory(Memory(text="Ann said line 7", scope="public", sources=(ids[7],)))
    client = TestClient(TestServer(make_app(engram, DashboardSettings(token=TOKEN))))
    await client.start_server()
    try:
        page = await (await client.get(f"/memories/{mid}", headers=EN)).text()
        found = re.search(r'<li class="where"><a href="([^"]+)"', page)
        assert found is not None
        href = found.group(1).replace("&amp;", "&")
        assert href.endswith(f"#e{ids[7]}")
        place = await (await client.get(href.split("#")[0], headers=EN)).text()
        assert f'id="e{ids[7]}"' in place  # the page the link opens holds the line
        assert '<a href="/memories?person=qq%3A1">' in place  # and its speaker leads to their memories
    finally:
        await client.close()
        await engram.close()


async def test_the_graphs_note_says_what_it_left_out_in_the_readers_language(dash, monkeypatch):
    """At 100k the graph drew everything it was handed: a hairball. It draws the people the bot knows
    most about and says, in words, how many of how many it shows."""
    from astrbot_plugin_engram.dashboard import data

    client, _, _ = dash
    full = (await (await client.get("/api/graph", headers=EN)).json())["shown"]
    monkeypatch.setattr(data, "GRAPH_EACH", 1)
    d = await (await client.get("/api/graph?n=2", headers=EN)).json()
    n = d["shown"]
    assert n["people"] == 2 < n["people_total"] == full["people_total"] and n["memories"] <= 2
    en = await (await client.get("/graph?n=2", headers=EN)).text()
    assert (f"Shown: the 2 people the bot knows most about (of {n['people_total']}), up to 1 memories each,"
            f" held most firmly first ({n['memories']} of {n['memories_total']})") in en
    zh = await (await client.get("/graph?n=2", headers=ZH)).text()
    assert f"显示：机器人最了解的 2 个人（共 {n['people_total']} 人），每人最多 1 条记忆" in zh
    monkeypatch.undo()
    everyone = (await (await client.get("/api/graph?n=60", headers=EN)).json())["shown"]
    cut = any(everyone[k] < everyone[k + "_total"] for k in ("people", "memories", "talks"))
    assert not cut  # the sample is small: all of it drawn, and then no note at all
    assert "Shown:" not in await (await client.get("/graph?n=60", headers=EN)).text()


async def test_a_store_with_nothing_yet_says_so_on_every_page(tmp_path):
    """A new bot's dashboard showed a blank graph box, headers over empty places and people tables,
    and recall's form with an empty place list: nothing said why."""
    engram = await Engram.open(tmp_path / "engram.db", HashEmbedder(), background=False)
    client = TestClient(TestServer(make_app(engram, DashboardSettings(token=TOKEN))))
    await client.start_server()
    try:
        for headers, says in ((EN, ("No place has a recorded line yet.", "Nothing to draw yet",
                                    "No place has a recorded line yet.")),
                              (ZH, ("还没有记录任何地点的消息。", "还没有可画的内容",
                                    "还没有记录任何地点的消息。"))):
            pages = [await (await client.get(p, headers=headers)).text() for p in ("/", "/graph", "/recall")]
            for page, said in zip(pages, says, strict=True):
                assert said in page
            assert '<svg id="graph"' not in pages[1] and '<select name="space">' not in pages[2]
    finally:
        await client.close()
        await engram.close()


async def test_a_busy_place_leads_to_its_first_page_and_to_all_it_taught(tmp_path, monkeypatch):
    """A chat of 16k lines opened on page 326 of 326 with only "Previous": going back to its start
    took 325 clicks. Its memories listed the first 50 under "(343)" with no way to the rest."""
    from astrbot_plugin_engram.dashboard import data

    monkeypatch.setattr(data, "PLACE_MEMORIES", 2)
    engram = await Engram.open(tmp_path / "engram.db", HashEmbedder(), background=False)
    ids = await engram.record_many([Episode(place=GROUP, content=f"line {i}", actor="qq:1", actor_name="Ann")
                                    for i in range(25)])
    for i in range(3):
        await engram.add_memory(Memory(text=f"fact {i}", scope=f"space:{GROUP}", sources=(ids[i],)))
    client = TestClient(TestServer(make_app(engram, DashboardSettings(token=TOKEN))))
    await client.start_server()
    try:
        for headers, first, latest, every in ((EN, "First", "Latest", "All 3"),
                                              (ZH, "第一页", "最新一页", "全部 3 条")):
            page = await (await client.get(f"/place?space={GROUP}&size=5&page=3", headers=headers)).text()
            pager = page.split('<p class="pager">', 1)[1].split("</p>", 1)[0]
            assert f'page=1">{first}</a>' in pager and f'page=5">{latest}</a>' in pager
            assert f'<a href="/memories?place=qq%3Agroup%3A5150">{every}' in page
    finally:
        await client.close()
        await engram.close()


async def test_what_a_job_did_is_said_in_words_and_once(dash):
    """The last run read "added 1, calls 2, failed.timeout 1, refused.scope 2" on a Chinese page:
    the record's keys, English, and its failures a second time as keys."""
    client, _, _ = dash
    en = cells(await (await client.get("/", headers=EN)).text(), "jobs")[2][4]
    assert "added 1, calls 2" in en and "failed." not in en and "refused." not in en
    assert "failed calls: timeout 1" in en and "refused: scope 2" in en
    zh = cells(await (await client.get("/", headers=ZH)).text(), "jobs")[2][4]
    assert "新增 1，模型调用 2" in zh and "失败调用：timeout 1" in zh and "拒绝：scope 2" in zh
    assert "added" not in zh and "calls" not in zh


async def test_the_person_filter_takes_a_name_as_well_as_an_id(dash):
    """Typing 王磊 into the memories page's Person box found nothing: it wanted "qq:10003"."""
    client, _, _ = dash
    by_id = await (await client.get("/api/memories?person=qq:10003", headers=EN)).json()
    by_name = await (await client.get("/api/memories?person=王磊", headers=EN)).json()
    assert by_id["total"] >= 2 and [m["id"] for m in by_name["items"]] == [m["id"] for m in by_id["items"]]


async def test_a_persons_memories_say_whose_they_are(dash):
    """A person's name on the overview led to "Memories" with qq:10003 in a box: whose, the page
    did not say."""
    client, _, _ = dash
    en = await (await client.get("/memories?person=qq:10003", headers=EN)).text()
    assert "<h1>Memories about 王磊</h1>" in en
    zh = await (await client.get("/memories?person=王磊", headers=ZH)).text()
    assert "<h1>关于 王磊 的记忆</h1>" in zh


async def test_job_names_and_the_hosts_words_are_in_chinese_when_the_browser_asks(seeded):
    """A Chinese page listed its jobs as "consolidate", "diary" and said "none (command line)"."""
    settings = DashboardSettings(token=TOKEN, jobs=lambda: JOBS, chat_model="none (command line)")
    async for client, _, _ in serve(seeded, settings):
        zh = await (await client.get("/", headers=ZH)).text()
        en = await (await client.get("/", headers=EN)).text()
        names = [row[0] for row in cells(zh, "jobs")[1:]]
        assert names == ["写日记 <code>diary</code>", "整理记忆 <code>consolidate</code>",
                         "<code>fading</code>"]
        assert "<code>无（命令行）</code>" in zh and "<code>none (command line)</code>" in en
        assert [row[0] for row in cells(en, "jobs")[1:]] == [
            "<code>diary</code>", "<code>consolidate</code>", "<code>fading</code>"]


async def test_the_command_lines_recall_explained_carries_the_bots_identity(seeded, tmp_path):
    """From the command line recall explained left out the identity note the plugin injects."""
    from astrbot_plugin_engram.dashboard.__main__ import command_line_settings

    path, _ = seeded
    core = path.parent / "identity" / "self.md"
    core.parent.mkdir(exist_ok=True)
    core.write_text("我是小记，读书会的助手。\n", "utf-8")
    settings = command_line_settings(path, TOKEN)
    async for client, _, _ in serve(seeded, settings):
        d = await (await client.get(f"/api/recall?q=火锅&space={GROUP}", headers=AUTH)).json()
        assert "Who you are (your own notes):\n我是小记，读书会的助手。" in d["block"]
    assert core.read_text("utf-8") == "我是小记，读书会的助手。\n"  # read, never rewritten
