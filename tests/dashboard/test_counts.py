"""The overview's and the graph's numbers over real HTTP equal a count in Python of every episode in
the file: after the seed, after more lines, after a forget of lines, of a person and of a place; and
where a page shows only some rows (the busiest pairs, the largest places) it says so, in both languages."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote

from aiohttp.test_utils import TestClient

from astrbot_plugin_engram.dashboard.data import iso
from astrbot_plugin_engram.memory import Engram, Episode

from ..counting import count_episodes
from .conftest import AUTH, GROUP, XSS_SPACE


async def get(client: TestClient, path: str) -> Any:
    r = await client.get(path, headers=AUTH)
    assert r.status == 200, await r.text()
    return await r.json()


async def assert_pages_count_every_episode(client: TestClient, path: Path) -> None:
    c = count_episodes(path)
    with sqlite3.connect(path) as db:
        named = {r[0] for r in db.execute("SELECT person FROM aliases")}
    o = await get(client, "/api/overview")
    assert o["episodes"] == c.episodes
    assert [tuple(d) for d in o["episodes_per_day"]] == sorted(c.per_day.items())
    assert {p["space"]: (p["episodes"], p["last"]) for p in o["places"]} == {
        s: (n, iso(t)) for s, (n, t) in c.places.items()}
    assert {p["id"]: p["episodes"] for p in o["people"]} == {p: c.speakers.get(p, 0) for p in named}
    g = await get(client, "/api/graph")
    assert {(x["source"], x["target"]): x["weight"] for x in g["links"] if x["type"] == "talks"} == c.talks
    people = {x["id"]: x["weight"] for x in g["nodes"] if x["type"] == "person"}
    assert {p for pair in c.talks for p in pair} <= set(people)
    assert {p: n for p, n in people.items() if p in named} == {p: c.speakers.get(p, 0) for p in people
                                                               if p in named}
    page = await (await client.get("/", headers=AUTH)).text()
    assert f'<p class="big">{c.episodes} ' in page


async def test_overview_and_graph_count_every_episode_after_writes_and_forgets(
        dash: tuple[TestClient, Engram, dict[str, int]], seeded: tuple[Path, dict[str, int]]) -> None:
    client, engram, _ = dash
    path, _ = seeded
    c = count_episodes(path)
    assert c.talks and c.speakers and len(c.places) == 4  # the sample has people answering each other
    await assert_pages_count_every_episode(client, path)

    later = datetime.now(timezone.utc) + timedelta(days=2)
    await engram.record_many([Episode(place=GROUP, content=f"new line {i}", actor=f"qq:{20000 + i % 3}",
                                      actor_name=f"New {i % 3}", time=later + timedelta(minutes=i))
                              for i in range(12)])
    await assert_pages_count_every_episode(client, path)

    with sqlite3.connect(path) as db:
        middle = [r[0] for r in db.execute("SELECT id FROM episodes WHERE space = ? ORDER BY seq", (GROUP,))]
    await engram.forget_episodes(middle[3:20:4])  # lines inside a conversation: their neighbours meet
    await assert_pages_count_every_episode(client, path)

    talker = max(count_episodes(path).speakers.items(), key=lambda kv: kv[1])[0]
    await engram.forget_person(talker)
    await assert_pages_count_every_episode(client, path)
    o = await get(client, "/api/overview")
    assert talker not in {p["id"] for p in o["people"]}
    assert talker not in {x["id"] for x in (await get(client, "/api/graph"))["nodes"]}

    await engram.forget_place(XSS_SPACE)
    await assert_pages_count_every_episode(client, path)
    assert XSS_SPACE not in {p["space"] for p in (await get(client, "/api/overview"))["places"]}


async def test_the_graph_draws_the_people_known_best_each_with_what_is_known_and_narrows_to_one(
        dash: tuple[TestClient, Engram, dict[str, int]], seeded: tuple[Path, dict[str, int]]) -> None:
    """People and what the bot knows about them: the strongest N, every memory labelled, and a way to
    see only one place or one person (by id or by a name they went by)."""
    client, _, ids = dash
    path, _ = seeded
    with sqlite3.connect(path) as db:
        about: dict[str, set[int]] = {}  # person -> active memories about them, counted in Python
        for mid, subjects in db.execute("SELECT id, subjects FROM memories WHERE status = 'active'"):
            for p in json.loads(subjects):
                about.setdefault(p, set()).add(mid)
    g = await get(client, "/api/graph?n=1")
    [top] = [x for x in g["nodes"] if x["type"] == "person"]
    assert top["known"] == max(len(v) for v in about.values())  # the one the bot knows most about
    drawn = {x["id"] for x in g["nodes"] if x["type"] == "memory"}
    assert drawn and drawn <= {f"m{i}" for i in about[top["id"]]}
    assert all(x["label"] for x in g["nodes"])  # every square carries its text
    assert g["shown"]["people"] == 1 and g["shown"]["people_total"] >= 3

    wang = await get(client, "/api/graph?person=" + quote("王磊"))  # a name finds the person
    focus = [x for x in wang["nodes"] if x.get("focus")]
    assert [x["id"] for x in focus] == ["qq:10003"] and wang["nodes"][0]["id"] == "qq:10003"
    assert f"m{ids['second']}" in {x["id"] for x in wang["nodes"]}
    mems = {x["id"] for x in wang["nodes"] if x["type"] == "memory"}
    assert mems <= {f"m{i}" for i in about["qq:10003"]}  # only what is known about them

    here = await get(client, f"/api/graph?space={quote(GROUP)}")
    with sqlite3.connect(path) as db:
        learned = {f"m{r[0]}" for r in db.execute(
            "SELECT id FROM memories WHERE status = 'active' AND scope = ?", (f"space:{GROUP}",))}
    assert {x["id"] for x in here["nodes"] if x["type"] == "memory"} <= learned | {
        f"m{i}" for i in set().union(*about.values())}
    assert (await client.get("/api/graph?n=0", headers=AUTH)).status == 400
    assert (await client.get("/api/graph?space=nowhere", headers=AUTH)).status == 404
    zh = {**AUTH, "Accept-Language": "zh-CN"}
    page = await (await client.get("/graph?person=qq:10003", headers=zh)).text()
    assert "<h1>关系图：王磊</h1>" in page and 'href="/memories?person=qq%3A10003"' in page


async def test_index_coverage_counts_only_what_can_still_be_found_after_forgets(
        dash: tuple[TestClient, Engram, dict[str, int]], seeded: tuple[Path, dict[str, int]]) -> None:
    """After a few forgets the overview read "35 / 33 indexed (106.1%)": the vectors of forgotten and
    superseded items were still counted. Indexed is what a search can still find, of what is there."""
    client, engram, ids = dash
    path, _ = seeded
    with sqlite3.connect(path) as db:
        lines = [r[0] for r in db.execute("SELECT id FROM episodes ORDER BY id LIMIT 6")]
    await engram.forget([ids["second"]])
    await engram.forget_episodes(lines[:3])
    with sqlite3.connect(path) as db:
        active = [r[0] for r in db.execute("SELECT id FROM memories WHERE status = 'active' ORDER BY id")]
    await engram.embed_pending()
    await engram.update(active[0], "a newer version of what was known")  # the old one: superseded
    await engram.embed_pending()
    o = await get(client, "/api/overview")
    with sqlite3.connect(path) as db:
        items = db.execute("SELECT (SELECT count(*) FROM episodes) + (SELECT count(*) FROM memories"
                           " WHERE status IN ('active', 'archived'))").fetchone()[0]
    assert o["index"] == {"indexed": items, "items": items, "coverage": 1.0}


async def test_the_overview_counts_active_memories_as_the_start_up_line_does_and_says_the_rest(
        dash: tuple[TestClient, Engram, dict[str, int]], seeded: tuple[Path, dict[str, int]]) -> None:
    """The overview said "7 Memories" where the start-up line said 5: it counted superseded versions."""
    client, engram, _ = dash
    path, _ = seeded
    with sqlite3.connect(path) as db:
        first = db.execute("SELECT id FROM memories WHERE status = 'active' ORDER BY id").fetchone()[0]
    await engram.update(first, "a newer version of what was known")
    with sqlite3.connect(path) as db:
        by = dict(db.execute("SELECT status, count(*) FROM memories GROUP BY status").fetchall())
    o = await get(client, "/api/overview")
    assert (o["memories"], o["superseded"], o["archived"]) == (
        by["active"], by["superseded"], by.get("archived", 0)) and by["superseded"] >= 2
    assert o["memories"] == (await engram.stats())["memories"]  # what the start-up line says
    page = await (await client.get("/", headers=AUTH)).text()
    assert (f'{by["active"]} active memories <small>(besides: {by.get("archived", 0)} archived,'
            f' {by["superseded"]} earlier versions kept as history)</small>') in page


async def test_a_back_dated_line_stands_in_time_order_on_its_place_and_a_diary_day_is_listed_once(
        dash: tuple[TestClient, Engram, dict[str, int]], seeded: tuple[Path, dict[str, int]]) -> None:
    """The timeline ordered by the order of recording, so a line recorded late with its own earlier time
    stood at the end; the diary listed a rewritten day twice (the superseded entry unmarked)."""
    client, engram, ids = dash
    path, _ = seeded
    with sqlite3.connect(path) as db:
        first, = db.execute("SELECT min(time) FROM episodes WHERE space = ?", (GROUP,)).fetchone()
    early = datetime.fromtimestamp(first, timezone.utc) + timedelta(seconds=1)
    [late] = await engram.record_many([Episode(place=GROUP, content="a line the platform sent late",
                                               actor="qq:30001", actor_name="Late", time=early)])
    d = await get(client, f"/api/place?space={GROUP}&size=500&page=1")
    times = [datetime.fromisoformat(e["time"]) for e in d["episodes"]["items"]]
    assert times == sorted(times) and [e["id"] for e in d["episodes"]["items"]].index(late) == 1
    small = await get(client, f"/api/place?space={GROUP}&size=3&page=1")  # the first page holds it
    assert late in [e["id"] for e in small["episodes"]["items"]]

    await engram.update(ids["diary"], "The same day, written again after a forget.")
    diary = await get(client, "/api/diary")
    assert [m["text"] for m in diary["items"]] == ["The same day, written again after a forget."]
    assert len({m["day"] for m in diary["items"]}) == len(diary["items"]) == diary["total"]
    en = await (await client.get("/diary", headers={**AUTH, "Accept-Language": "en"})).text()
    assert "Rewritten after a forget: the earlier versions" in en
