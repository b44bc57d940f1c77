"""The graph of a bot that knows many people is not a hairball: the people it knows most about (the
strongest N), up to five labelled memories each, and a place or a person to narrow it to; its note
says how much was left out. (The same page at 100k items, timed: bench/dashboard.py.)"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from aiohttp.test_utils import TestClient, TestServer

from astrbot_plugin_engram.dashboard import DashboardSettings, make_app
from astrbot_plugin_engram.dashboard.data import GRAPH_EACH, GRAPH_LABEL, GRAPH_PEOPLE
from astrbot_plugin_engram.memory import Engram, Episode, Memory

from ..conftest import HashEmbedder
from .conftest import AUTH, TOKEN

PEOPLE, EACH, PLACES = 120, 3, 10


def person(i: int) -> str:
    return f"qq:{20000 + i}"


def place(i: int) -> str:
    return f"qq:group:{i % PLACES}"


@pytest.fixture
async def crowd(tmp_path: Path) -> AsyncIterator[tuple[TestClient, dict[str, float]]]:
    """120 people in 10 groups, each talking and known by 3 memories; person i's memories weigh
    more the larger i is, so the bot knows most about the last ones."""
    engram = await Engram.open(tmp_path / "engram.db", HashEmbedder(), background=False)
    await engram.record_many([Episode(place=place(i), content=f"line {k} from person {i}", actor=person(i),
                                      actor_name=f"P{i}") for k in range(4) for i in range(PEOPLE)])
    known: dict[str, float] = {}
    for i in range(PEOPLE):
        importance = round(0.05 + 0.9 * i / PEOPLE, 3)
        for k in range(EACH):
            text = f"P{i} fact {k}: " + "a long memory text that goes past the label's length " * 3
            await engram.add_memory(Memory(text=text, scope=f"space:{place(i)}", subjects=(person(i),),
                                           importance=importance))
        known[person(i)] = EACH * importance
    await engram.embed_pending()
    client = TestClient(TestServer(make_app(engram, DashboardSettings(token=TOKEN))))
    await client.start_server()
    try:
        yield client, known
    finally:
        await client.close()
        await engram.close()


async def get(client: TestClient, path: str, headers: dict[str, str] = AUTH) -> Any:
    r = await client.get(path, headers=headers)
    assert r.status == 200, await r.text()
    return await (r.json() if "/api/" in path else r.text())


async def test_a_crowd_is_drawn_as_the_strongest_n_each_with_labelled_memories(crowd) -> None:
    client, known = crowd
    g = await get(client, "/api/graph")
    people = [x for x in g["nodes"] if x["type"] == "person"]
    squares = [x for x in g["nodes"] if x["type"] == "memory"]
    strongest = sorted(known, key=lambda p: -known[p])[:GRAPH_PEOPLE]
    assert [x["id"] for x in people] == strongest  # the ones it knows most about, most first
    assert len(squares) == GRAPH_PEOPLE * EACH <= GRAPH_PEOPLE * GRAPH_EACH
    # every square labelled with the beginning of its text (the whole on hover, drawn by app.js)
    assert all(x["label"].startswith("P") and len(x["label"]) == GRAPH_LABEL for x in squares)
    about = {(x["source"], x["target"]) for x in g["links"] if x["type"] == "about"}
    assert {s for s, _ in about} == {x["id"] for x in squares}  # every square tied to its person
    assert {t for _, t in about} == set(strongest)
    assert g["shown"]["people"] == GRAPH_PEOPLE and g["shown"]["people_total"] == PEOPLE
    assert g["shown"]["memories_total"] == PEOPLE * EACH
    en = await get(client, "/graph", {**AUTH, "Accept-Language": "en"})
    assert f"the {GRAPH_PEOPLE} people the bot knows most about (of {PEOPLE})" in en
    zh = await get(client, "/graph", {**AUTH, "Accept-Language": "zh-CN"})
    assert "<h1>关系图</h1>" in zh and f"（共 {PEOPLE} 人）" in zh


async def test_a_crowd_narrows_to_one_place_or_one_person(crowd) -> None:
    client, known = crowd
    here = await get(client, f"/api/graph?space={quote(place(3))}&n=5")
    people = [x["id"] for x in here["nodes"] if x["type"] == "person"]
    learned_here = [p for p in known if int(p.split(":")[1]) % PLACES == 3]
    assert people == sorted(learned_here, key=lambda p: -known[p])[:5]
    assert here["shown"]["people_total"] == len(learned_here) and here["shown"]["memories_total"] == len(
        learned_here) * EACH
    one = await get(client, "/api/graph?person=P7")  # a name they went by finds them
    assert one["nodes"][0]["id"] == person(7) and one["nodes"][0]["focus"]
    drawn = {x["label"].split(":")[0] for x in one["nodes"] if x["type"] == "memory"}
    assert drawn == {f"P7 fact {k}" for k in range(EACH)}
