"""Every route through aiohttp's test client: auth, pages, filters, paging, bad input, read-only."""

from __future__ import annotations

import asyncio
import logging
import re
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer

from astrbot_plugin_engram.dashboard import DashboardSettings, make_app
from astrbot_plugin_engram.memory import Engram, Episode, Memory

from ..conftest import HashEmbedder
from .conftest import AUTH, GROUP, OWNER_DM, SELF_IMAGE, TOKEN, XSS_NAME, XSS_SPACE, XSS_TEXT

PAGES = ["/", "/memories", "/recall", "/graph", "/diary", "/identity", f"/place?space={GROUP}"]
APIS = [
    "/api/overview",
    "/api/memories",
    "/api/graph",
    "/api/diary",
    "/api/identity",
    f"/api/place?space={GROUP}",
    "/api/recall?q=hotpot&space=qq:group:5150",
]


@pytest.mark.parametrize("path", [*PAGES, *APIS, "/memories/1", "/api/memories/1", "/static/app.js"])
async def test_every_route_needs_the_token(dash, path):
    client, _, _ = dash
    for headers in (
        {},
        {"Authorization": "Bearer wrong"},
        {"Authorization": TOKEN},
        {"Cookie": "engram_dashboard=wrong"},
    ):
        r = await client.get(path, headers=headers, allow_redirects=False)
        assert r.status == 401
        assert await r.text() == "401: Unauthorized"  # no detail about why


@pytest.mark.parametrize("path", [*PAGES, *APIS])
async def test_every_route_answers_with_the_token(dash, path):
    client, _, _ = dash
    r = await client.get(path, headers=AUTH)
    assert r.status == 200, await r.text()
    assert r.headers["Content-Security-Policy"].startswith("default-src 'none'")


@pytest.mark.parametrize("path, auth, status", [("/", AUTH, 200), ("/api/overview", {}, 401),
                                                ("/nowhere", AUTH, 404)])
async def test_no_answer_names_the_server_software(dash, path, auth, status):
    client, _, _ = dash
    r = await client.get(path, headers=auth, allow_redirects=False)
    assert r.status == status
    assert r.headers["Server"] == "Engram"  # not "Python/3.12 aiohttp/3.x": no version to look up
    assert not any("aiohttp" in v.lower() for v in r.headers.values())


async def raw_get(client: TestClient, head: bytes = b"", target: bytes = b"/") -> bytes:
    """A GET sent byte for byte (no client would send these headers), its whole answer."""
    reader, writer = await asyncio.open_connection("127.0.0.1", client.port)
    lines = [b"GET " + target + b" HTTP/1.1", b"Host: 127.0.0.1", b"Connection: close", head]
    writer.write(b"\r\n".join(line for line in lines if line) + b"\r\n\r\n")
    answer = await asyncio.wait_for(reader.read(), 30)
    writer.close()
    return answer


@pytest.mark.parametrize("head", [b"Authorization: Bearer \xff\xfe", b"Cookie: engram_dashboard=\xffx",
                                  b"Authorization: Bearer " + TOKEN.encode() + b"\xe9"])
async def test_a_token_that_is_not_utf8_is_refused_not_a_server_error(dash, head, caplog):
    client, _, _ = dash
    with caplog.at_level(logging.ERROR):
        answer = await raw_get(client, head)
    assert answer.startswith(b"HTTP/1.1 401 ") and answer.endswith(b"\r\n\r\n401: Unauthorized")
    assert "Error handling request" not in caplog.text  # no traceback in the log for anyone's bytes


async def test_token_in_the_url_sets_a_cookie_and_redirects_without_it(dash):
    client, _, _ = dash
    r = await client.get(f"/memories?kind=fact&token={TOKEN}", allow_redirects=False)
    assert r.status == 303
    assert r.headers["Location"] == "/memories?kind=fact"
    cookie = r.cookies["engram_dashboard"]
    assert cookie.value == TOKEN and cookie["httponly"] and cookie["samesite"] == "Strict"
    r = await client.get("/memories?kind=fact")  # the cookie jar now carries it
    assert r.status == 200
    r = await client.get("/?token=wrong", allow_redirects=False)
    assert r.status == 401


async def test_the_token_links_redirect_stays_on_this_server(dash):
    client, _, _ = dash
    answer = await raw_get(client, target=b"//evil.example/x?token=" + TOKEN.encode())
    (location,) = [h for h in answer.split(b"\r\n") if h.lower().startswith(b"location:")]
    assert location == b"Location: /evil.example/x"  # "//evil.example/x" would leave for that host


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"])
async def test_every_other_method_is_refused_and_changes_nothing(dash, method):
    client, engram, ids = dash
    before = await engram.stats()
    for path in [
        "/",
        "/memories",
        f"/memories/{ids['second']}",
        "/api/memories",
        f"/api/memories/{ids['xss']}",
        "/recall",
        "/api/recall",
        "/graph",
        "/place",
        "/diary",
        "/identity",
        "/static/app.js",
    ]:
        r = await client.request(method, path, headers=AUTH, data=b"text=changed")
        assert r.status == 405, (method, path)
    assert await engram.stats() == before
    assert (await engram.get(ids["second"])).text.startswith("王磊喜欢浅烘的埃塞俄比亚")


def dump(path: Path) -> list[str]:
    db = sqlite3.connect(path)
    try:
        return list(db.iterdump())
    finally:
        db.close()


async def test_reading_every_page_changes_nothing_in_a_store_the_bot_writes(dash, seeded):
    """The plugin's memory is writable (unlike the command line's): no GET may touch it, not even the
    strength or last-recalled time a recall for a reply would change."""
    client, engram, ids = dash
    before = dump(seeded[0])
    for path in [*PAGES, *APIS, f"/memories/{ids['second']}", f"/api/memories/{ids['xss']}",
                 f"/recall?q=电动磨豆机&space={OWNER_DM}", f"/api/recall?q=咖啡&space={OWNER_DM}&owner=1"]:
        assert (await client.get(path, headers=AUTH)).status == 200, path
    await engram.toucher.flush()  # a touch waits a moment before it is written
    assert dump(seeded[0]) == before


async def test_overview_counts_places_people_and_models(dash):
    client, engram, _ = dash
    d = await (await client.get("/api/overview", headers=AUTH)).json()
    assert d["counts"]["kind"]["diary"] == 1
    assert d["counts"]["status"] == {"active": 11, "superseded": 1}
    assert d["counts"]["scope"]["owner"] >= 1
    assert {p["space"] for p in d["places"]} == {GROUP, OWNER_DM, "qq:private:10002", XSS_SPACE}
    assert any(p["name"] == "林晓" for p in d["people"])
    assert sum(n for _, n in d["episodes_per_day"]) == d["episodes"] == 32
    assert d["embedder"] == "hash-32" and d["index"]["coverage"] == 1.0
    page = await (await client.get("/", headers={**AUTH, "Accept-Language": "en"})).text()
    assert 'id="chart"' in page


async def test_overview_lists_each_jobs_last_run_counts_and_failures(dash):
    client, _, _ = dash
    jobs = (await (await client.get("/api/overview", headers=AUTH)).json())["jobs"]
    assert [j["name"] for j in jobs] == ["diary", "consolidate", "fading"]  # latest first, never-run last
    diary, consolidate, fading = jobs
    assert consolidate["status"] == "ok" and consolidate["error"] == ""
    assert (consolidate["runs"], consolidate["failures"]) == (2, 0)
    assert consolidate["last"] == {"added": 1, "calls": 2, "failed.timeout": 1, "refused.scope": 2}
    assert consolidate["totals"] == {"added": 3, "calls": 5, "updated": 1}
    assert consolidate["failed_calls"] == {"timeout": 1} and consolidate["refused"] == {"scope": 2}
    assert consolidate["last_started"] <= consolidate["last_finished"] <= diary["last_started"]
    assert diary["status"] == "failed" and (diary["runs"], diary["failures"]) == (1, 1)
    assert diary["error"] == "RuntimeError: " + XSS_TEXT
    assert fading["status"] is None and fading["runs"] == 0
    page = await (await client.get("/", headers={**AUTH, "Accept-Language": "en"})).text()
    panel = page[page.index('<table class="jobs">'):]
    panel = panel[: panel.index("</table>")]
    assert panel.count("<tr>") == 4  # a head row and one per job
    assert "<code>consolidate</code>" in panel and "2 / 0" in panel and "1 / 1" in panel
    assert "added 1, calls 2" in panel and "failed calls in all: timeout 1" in panel
    assert "RuntimeError: &lt;script&gt;window.pwned=1&lt;/script&gt;" in panel
    assert "never run yet" in panel and "No job has run yet" not in page


async def test_job_records_a_store_holds_are_shown_without_trusting_their_shape(tmp_path):
    path = tmp_path / "engram.db"
    engram = await Engram.open(path, HashEmbedder(), background=False)
    try:
        await engram.store.save_job_run("odd", {"status": "<b>weird</b>", "last_started": "yesterday",
                                                "runs": "many", "stats": [1, 2], "totals": {"x": "y"}})
        client = TestClient(TestServer(make_app(engram, DashboardSettings(token=TOKEN))))
        await client.start_server()
        try:
            (job,) = (await (await client.get("/api/overview", headers=AUTH)).json())["jobs"]
            assert job == {"name": "odd", "status": "<b>weird</b>", "last_started": None,
                           "last_finished": None, "error": "", "runs": 0, "failures": 0, "last": {},
                           "totals": {}, "failed_calls": {}, "refused": {}}
            page = await (await client.get("/", headers=AUTH)).text()
            assert "&lt;b&gt;weird&lt;/b&gt;" in page and "<b>weird" not in page
        finally:
            await client.close()
    finally:
        await engram.close()


async def test_no_job_run_yet_says_so(tmp_path):
    path = tmp_path / "engram.db"
    engram = await Engram.open(path, HashEmbedder(), background=False)
    try:
        client = TestClient(TestServer(make_app(engram, DashboardSettings(token=TOKEN))))
        await client.start_server()
        try:
            assert (await (await client.get("/api/overview", headers=AUTH)).json())["jobs"] == []
            page = await (await client.get("/", headers={**AUTH, "Accept-Language": "en"})).text()
            assert "No job has run yet." in page
        finally:
            await client.close()
    finally:
        await engram.close()


async def test_labels_follow_the_browsers_language(dash):
    client, _, _ = dash
    zh = await (await client.get("/", headers={**AUTH, "Accept-Language": "zh-CN,zh;q=0.9,en;q=0.8"})).text()
    en = await (await client.get("/", headers={**AUTH, "Accept-Language": "en-US,en;q=0.9,zh;q=0.5"})).text()
    assert "概览" in zh and "每日消息数" in zh and 'lang="zh-CN"' in zh
    assert "Overview" in en and "Episodes per day" in en and "每日消息数" not in en


async def test_memories_filters_search_and_paging(dash):
    client, _, ids = dash

    async def get(query: str) -> dict:
        r = await client.get("/api/memories?" + query, headers=AUTH)
        assert r.status == 200, await r.text()
        return await r.json()

    assert [m["id"] for m in (await get("kind=diary"))["items"]] == [ids["diary"]]
    assert {m["status"] for m in (await get("status=superseded"))["items"]} == {"superseded"}
    assert all(m["scope"] == "owner" for m in (await get("scope=owner"))["items"])
    assert [m["id"] for m in (await get("person=qq:10003&status=active&kind=preference"))["items"]] == [
        ids["second"]
    ]
    assert {m["id"] for m in (await get(f"place={GROUP}"))["items"]} >= {ids["first"], ids["second"]}
    assert [m["id"] for m in (await get("q=埃塞俄比亚"))["items"]] == [ids["second"]]
    assert [m["id"] for m in (await get("q=LIGHT ROAST"))["items"]] == [ids["second"]]
    everything = await get("size=200")
    assert everything["total"] == 12 and len(everything["items"]) == 12
    pages = [await get(f"size=5&page={p}") for p in (1, 2, 3)]
    assert [len(p["items"]) for p in pages] == [5, 5, 2] and pages[0]["pages"] == 3
    assert [m["id"] for p in pages for m in p["items"]] == [m["id"] for m in everything["items"]]
    assert (await get("page=99"))["items"] == []


@pytest.mark.parametrize(
    "query, message",
    [
        ("size=0", "size must be from 1"),
        ("size=-5", "size must be from 1"),
        ("page=0", "page must be from 1"),
        ("page=-1", "page must be from 1"),
        ("page=abc", "page must be a whole number"),
        ("size=1e9", "size must be a whole number"),
        ("page=99999999999", "page must be from 1"),
        ("kind=secret", "kind must be one of"),
        ("status=gone", "status must be one of"),
        ("scope=nowhere", "invalid scope"),
        ("q=" + "x" * 600, "q is longer than"),
    ],
)
async def test_bad_parameters_get_400_with_a_message(dash, query, message):
    client, _, _ = dash
    r = await client.get("/api/memories?" + query, headers=AUTH)
    assert r.status == 400
    assert message in (await r.json())["error"]
    page = await client.get("/memories?" + query, headers=AUTH)
    assert page.status == 400 and message.split()[0] in await page.text()


async def test_huge_page_sizes_are_capped(dash):
    client, _, _ = dash
    d = await (await client.get("/api/memories?size=100000000", headers=AUTH)).json()
    assert d["size"] == 200


async def test_one_memory_with_sources_in_their_conversation_and_every_version(dash):
    client, _, ids = dash
    d = await (await client.get(f"/api/memories/m{ids['second']}", headers=AUTH)).json()
    assert d["memory"]["subjects"] == [{"id": "qq:10003", "name": "王磊"}]
    assert [v["id"] for v in d["versions"]] == [ids["first"], ids["second"]]
    assert [v["status"] for v in d["versions"]] == ["superseded", "active"]
    assert [s["key"] for s in d["sources"]] == ["e10", "e11"]
    [conversation] = d["conversations"]  # two lines next to each other: one conversation
    assert conversation["sources"] == [10, 11] and conversation["space"] == GROUP
    around = [e["seq"] for e in conversation["episodes"]]
    assert around == list(range(8, 14))  # two lines either side of them, in order
    page = await (await client.get(f"/memories/{ids['second']}", headers=AUTH)).text()
    assert "埃塞俄比亚" in page and 'class="ep mark"' in page


@pytest.mark.parametrize(
    "path, status",
    [
        ("/api/memories/99999", 404),
        ("/memories/99999", 404),
        ("/api/memories/abc", 400),
        ("/api/memories/-1", 400),
        ("/api/place?space=qq:group:none", 404),
        ("/place?space=", 404),
        ("/nowhere", 404),
        ("/static/secret.py", 404),
        ("/static/..%2Fapp.py", 404),
        ("/static/../app.py", 404),
        ("/api/place?space=../../etc/passwd", 404),
        ("/memories/..%2F..%2Fetc%2Fpasswd", 400),
        ("/static/%2e%2e/%2e%2e/memory/engine.py", 404),
    ],
)
async def test_unknown_ids_and_path_traversal(dash, path, status):
    client, _, _ = dash
    r = await client.get(path, headers=AUTH)
    assert r.status == status
    body = await r.text()
    assert "import" not in body and "root:" not in body  # no file content ever comes back


async def test_a_place_pages_its_timeline_and_lists_what_was_learned_there(dash):
    client, _, ids = dash
    first = await (await client.get(f"/api/place?space={GROUP}&size=3&page=1", headers=AUTH)).json()
    second = await (await client.get(f"/api/place?space={GROUP}&size=3&page=2", headers=AUTH)).json()
    latest = await (await client.get(f"/api/place?space={GROUP}&size=3", headers=AUTH)).json()
    eps = first["episodes"]
    assert eps["total"] == 16 and len(eps["items"]) == 3 and eps["pages"] == 6
    seqs = [e["seq"] for e in eps["items"] + second["episodes"]["items"]]
    assert seqs == [1, 2, 3, 4, 5, 6]  # in order, no overlap
    assert latest["episodes"]["page"] == 6 and [e["seq"] for e in latest["episodes"]["items"]] == [16]
    assert {e["space"] for e in eps["items"]} == {GROUP}
    assert ids["second"] in [m["id"] for m in first["memories"]]


async def test_recall_explained_shows_features_scores_and_the_exact_block(dash):
    client, engram, _ = dash
    d = await (await client.get("/api/recall?q=王磊 生日 火锅&space=qq:group:5150", headers=AUTH)).json()
    assert d["hits"] and d["audience"] == {"space": GROUP, "owner_private": False, "person": ""}
    assert all("kw" in h["features"] and "score" in h for h in d["hits"])
    # the block's order (memory.worth): the lines that state something, then the questions, each by score
    asks = [h["text"].rstrip().endswith(("?", "？")) for h in d["hits"]]
    assert asks == sorted(asks)
    for question in (False, True):
        scores = [h["score"] for h, q in zip(d["hits"], asks) if q == question]
        assert scores == sorted(scores, reverse=True)
    assert d["block"].startswith("<engram-memory>") and "我是小记" in d["block"]
    injected = [h for h in d["hits"] if h["injected"]]
    assert injected and all(h["text"].split()[0][:6] in d["block"] for h in injected)
    assert 0 < d["tokens"] <= d["budget"] == 300
    page = await (await client.get("/recall?q=王磊 生日 火锅&space=qq:group:5150", headers=AUTH)).text()
    assert "&lt;engram-memory&gt;" in page and f'id="tokens">{d["tokens"]}<' in page


async def test_recall_explained_never_shows_another_chats_private_memory(dash):
    client, _, _ = dash
    secret = "电动磨豆机"  # the owner's surprise gift, scoped owner
    group = await (await client.get(f"/api/recall?q={secret}&space={GROUP}", headers=AUTH)).json()
    assert group["hits"] and secret not in str(group["hits"]) + group["block"]
    alice = await (
        await client.get(f"/api/recall?q={secret}&space=qq:private:10002&owner=1", headers=AUTH)
    ).json()
    assert all(
        h["where"] in ("qq:private:10002", "public", "self", "owner", "space:qq:private:10002")
        for h in alice["hits"]
    )
    owner = await (await client.get(f"/api/recall?q={secret}&space={OWNER_DM}", headers=AUTH)).json()
    assert owner["audience"]["owner_private"] is True and secret in owner["block"]


@pytest.mark.parametrize(
    "query, message",
    [
        ("q=tea&space=qq:group:nowhere", "unknown audience"),
        ("q=tea", "unknown audience"),
        ("space=qq:group:5150", "query is empty"),
        ("q=tea&space=qq:group:5150&owner=maybe", "owner must be"),
    ],
)
async def test_recall_explained_bad_input(dash, query, message):
    client, _, _ = dash
    r = await client.get("/api/recall?" + query, headers=AUTH)
    assert r.status == 400 and message in (await r.json())["error"]


async def test_script_and_img_onerror_in_text_and_names_are_shown_as_text(dash):
    client, _, ids = dash
    pages = [
        f"/memories/{ids['xss']}",
        "/memories",
        "/",
        "/graph",
        f"/place?space={XSS_SPACE}",
        f"/recall?q=pwned script&space={XSS_SPACE}",
        "/memories?q=<script>",
        '/memories?q="><b>666</b>&person="><b>666</b>',  # echoed in value="..."
        "/identity",
    ]
    for path in pages:
        r = await client.get(path, headers=AUTH)
        assert r.status == 200, path
        body = await r.text()
        assert "<script>window" not in body and "<img src=x" not in body and "<b>666" not in body, path
        scripts = re.findall(r"<script[^>]*>", body)  # only ours: the app and inert JSON data
        assert set(scripts) <= {
            '<script src="/static/app.js">',
            '<script type="application/json" id="chart-data">',
            '<script type="application/json" id="graph-data">',
        }, path
    body = await (await client.get(f"/memories/{ids['xss']}", headers=AUTH)).text()
    assert "&lt;script&gt;window.pwned=1&lt;/script&gt;" in body
    body = await (await client.get("/graph", headers=AUTH)).text()
    assert "\\u003cimg src=x onerror" in body  # inside the JSON the graph is drawn from


async def test_graph_has_people_memories_and_who_talks_with_whom(dash):
    client, _, ids = dash
    d = await (await client.get("/api/graph", headers=AUTH)).json()
    people = {n["id"]: n for n in d["nodes"] if n["type"] == "person"}
    assert people["qq:10003"]["label"] == "王磊"
    assert {"source": f"m{ids['second']}", "target": "qq:10003", "type": "about", "weight": 1} in d["links"]
    talks = {(link["source"], link["target"]) for link in d["links"] if link["type"] == "talks"}
    assert ("qq:10001", "qq:10003") in talks  # 林晓 and 王磊 answer each other in the group


async def test_diary_and_identity_say_what_is_there(dash):
    client, _, ids = dash
    diary = await (await client.get("/api/diary", headers=AUTH)).json()
    assert [m["id"] for m in diary["items"]] == [ids["diary"]]


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


async def test_identity_shows_the_self_image_its_history_and_open_proposals(dash, seeded):
    client, _, _ = dash
    folder = seeded[0].parent / "identity"
    before = snapshot(folder)
    ident = await (await client.get("/api/identity", headers=AUTH)).json()
    assert ident["self_image"] == {"text": SELF_IMAGE, "problem": None}
    assert [(v["replaced_at"], v["text"]) for v in ident["history"]] == [
        ("2026-11-30T22:00:00+00:00", "I am new here. 我刚来。")]
    (open_one,) = ident["proposals"]  # the approved and the rejected ones are decided
    assert (open_one["id"], open_one["change"], open_one["reason"]) == (2, XSS_TEXT, XSS_NAME)
    assert ident["core"]["text"].startswith("我是小记，读书会的助手。")
    core = ident["core"]["text"]
    assert "(approved proposal #1)" in core and "Call the owner 老板" in core
    assert [v["text"] for v in ident["core_history"]] == ["我是小记，读书会的助手。"]
    page = await (await client.get("/identity", headers={**AUTH, "Accept-Language": "en"})).text()
    assert "I host the book club" in page and "I am new here. 我刚来。" in page
    assert page.count('<tr><td>#') == 1 and "Call the owner" in page and "Speak only English" not in page
    assert "&lt;script&gt;window.pwned=1&lt;/script&gt;" in page and "<script>window" not in page
    assert "<img src=x" not in page
    assert snapshot(folder) == before  # nothing was written, not even a timestamp


async def test_identity_files_that_cannot_be_read_are_shown_with_why(dash, seeded):
    client, _, _ = dash
    folder = seeded[0].parent / "identity"
    (folder / "self-image.md").write_bytes(b"caf\xe9 \xff not utf-8")
    (folder / "proposals.json").write_text('{"items": [{"nonsense": 1}]}', "utf-8")
    r = await client.get("/identity", headers={**AUTH, "Accept-Language": "en"})
    assert r.status == 200
    page = await r.text()
    assert "is not UTF-8 text" in page and "proposals.json cannot be read" in page
    ident = await (await client.get("/api/identity", headers=AUTH)).json()
    assert ident["proposals"] == [] and "TypeError" in ident["proposals_problem"]
    assert ident["history"][0]["text"] == "I am new here. 我刚来。"  # the rest still shows


async def test_identity_before_the_self_jobs_ran_says_so_and_copies_nothing(tmp_path):
    engram = await Engram.open(tmp_path / "engram.db", HashEmbedder(), background=False)
    (tmp_path / "identity.md").write_text("old identity note", "utf-8")  # the pre-self file
    try:
        app = make_app(engram, DashboardSettings(token=TOKEN, identity=lambda: "the host's note"))
        client = TestClient(TestServer(app))
        await client.start_server()
        try:
            ident = await (await client.get("/api/identity", headers=AUTH)).json()
            page = await (await client.get("/identity", headers={**AUTH, "Accept-Language": "en"})).text()
        finally:
            await client.close()
    finally:
        await engram.close()
    assert ident["core"] == {"text": "the host's note", "problem": None}
    assert ident["self_image"] is None and ident["history"] == [] and ident["proposals"] == []
    assert "No self-image yet" in page and "No proposal waits for the owner." in page
    assert not (tmp_path / "identity").exists()  # the dashboard never moves identity.md itself


async def test_a_right_to_left_override_or_an_escape_in_a_name_does_not_turn_the_page_around(dash):
    """A name written "\\u202eecilA" showed as "Alice" (the override reverses what follows it)."""
    client, engram, _ = dash
    await engram.record_many([Episode(place=GROUP, content="cosmic \u202emsg\x1b[2J\x07 tail", actor="qq:77",
                                      actor_name="\u202eecilA")])
    mid = await engram.add_memory(Memory(text="cosmic \u202eecilA\x00 likes tea", scope=f"space:{GROUP}",
                                         subjects=("qq:77",)))
    for path in ["/memories", f"/memories/{mid}", "/graph", f"/place?space={GROUP}",
                 f"/recall?q=cosmic&space={GROUP}"]:  # the pages; /api/ answers the data as stored
        r = await client.get(path, headers=AUTH)
        body = await r.text()
        assert r.status == 200 and not [c for c in body if c in "\u202e\x1b\x07\x00"], path
    assert "ecilA" in await (await client.get(f"/memories/{mid}", headers=AUTH)).text()


async def test_times_are_shown_in_the_bots_timezone(seeded) -> None:  # type: ignore[no-untyped-def]
    """The pages cut ISO times to their date and minute: kept in UTC, a line said at 07:30 on Dec 1
    in Shanghai was shown at 23:30 on Nov 30, and a memory made that morning as made the day before."""
    from datetime import datetime, timezone
    from zoneinfo import ZoneInfo

    from astrbot_plugin_engram.memory import Episode, Memory

    path, _ = seeded
    engram = await Engram.open(path, HashEmbedder(), background=False)
    said = datetime(2026, 11, 30, 23, 30, tzinfo=timezone.utc)
    await engram.record(Episode(place=GROUP, content="早上好，今天读书会几点？", actor="qq:7", time=said))
    mid = await engram.add_memory(Memory(text="读书会早上开始", scope=f"space:{GROUP}", created_at=said))
    app = make_app(engram, DashboardSettings(token=TOKEN, tz=ZoneInfo("Asia/Shanghai")))
    client = TestClient(TestServer(app))
    await client.start_server()
    try:
        page = await (await client.get(f"/place?space={GROUP}&size=500", headers=AUTH)).text()
        assert "2026-12-01 07:30" in page and "2026-11-30 23:30" not in page  # shown as read, no "T"
        memory = await (await client.get(f"/api/memories/{mid}", headers=AUTH)).json()
        assert memory["memory"]["created_at"] == "2026-12-01T07:30:00+08:00"
    finally:
        await client.close()
        await engram.close()


def test_the_command_lines_dashboard_shows_times_in_the_diaries_zone(tmp_path: Path) -> None:
    from zoneinfo import ZoneInfo

    from astrbot_plugin_engram.dashboard.__main__ import command_line_settings
    from astrbot_plugin_engram.memory.self.diary_files import day_rule

    assert command_line_settings(tmp_path / "engram.db", TOKEN).tz is None  # no diary yet: UTC
    day_rule(tmp_path, ZoneInfo("Asia/Shanghai"), 4, remember=True)  # as the bot's diary job keeps it
    assert str(command_line_settings(tmp_path / "engram.db", TOKEN).tz) == "Asia/Shanghai"


async def test_a_memory_shows_its_strength_now_not_the_strength_it_was_stored_with(dash):
    """The strength is stored as it was at the last recall and fades from there: a memory made two
    half-lives ago and never recalled showed "Strength 1.0", when it had a quarter of that and was on
    its way to being archived. The page says its strength now and what the numbers mean."""
    client, engram, _ = dash
    days = engram.settings.strength_days
    made = datetime.now(timezone.utc) - timedelta(days=2 * days)
    mid = await engram.add_memory(Memory(text="老周以前养过一只猫", scope=f"space:{GROUP}", created_at=made))
    memory = (await (await client.get(f"/api/memories/{mid}", headers=AUTH)).json())["memory"]
    assert abs(memory["strength"] - 0.25) < 0.01
    page = await (await client.get(f"/memories/{mid}?lang=en", headers=AUTH)).text()
    assert "0.25" in page and "1.0" not in page.split("Strength", 1)[1][:200]
    assert f"halves every {days:g} days" in page and "archived below 0.1" in page


async def test_a_place_is_named_by_its_groups_title_with_its_id_beside_it(dash):
    """Places showed only as ids ("qq:group:5150"); a group's name as its platform gives it now
    names it on the overview, on its own page and where a memory is kept to it."""
    client, engram, ids = dash
    await engram.record(Episode(place=GROUP, content="今晚读书会见", actor="qq:7", place_title="周三读书会"))
    overview = await (await client.get("/", headers=AUTH)).text()
    link = r'<a href="/place\?space=qq%3Agroup%3A5150">周三读书会 <small class="id">qq:group:5150</small>'
    assert re.search(link, overview)
    place = await (await client.get(f"/place?space={GROUP}", headers=AUTH)).text()
    assert "<title>" in place and "周三读书会 · qq:group:5150" in place
    memory = await (await client.get(f"/memories/{ids['second']}", headers=AUTH)).text()
    assert "周三读书会" in memory  # the memory is kept to that group
    data = await (await client.get(f"/api/memories/{ids['second']}", headers=AUTH)).json()
    assert data["memory"]["scope_title"] == "周三读书会"
    untitled = await (await client.get("/place?space=qq:private:10001", headers=AUTH)).text()
    assert "<small class=\"id\">" not in untitled.split("<main", 1)[-1].split("</h1>", 1)[0]
