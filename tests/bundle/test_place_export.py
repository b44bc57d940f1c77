"""``export --place P`` holds nothing place P may not see: the scope function decides, as for recall.
A property over generated stores: for every place, no line of another place, no memory of a scope it
may not see, no name or cursor of another place, no owner-only document, in any file of its bundle."""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings

from astrbot_plugin_engram.memory import Audience, Engram, visibility
from astrbot_plugin_engram.memory.bundle import export_bundle, import_bundle

from ..conftest import HashEmbedder
from .worlds import PLACES, Step, build, steps, write_documents


async def check_places(plan: list[Step], where: Path) -> int:
    write_documents(where)
    e = await Engram.open(where / "store.db", HashEmbedder(dim=16), background=False)
    checked = 0
    try:
        await build(e, plan)
        eps, mems, after = [], [], 0
        while page := await e.store.episodes_page(after, 1000):
            eps += page
            last = page[-1].id  # a stored row has its id
            assert last is not None
            after = last
        after = 0
        while mpage := await e.store.memories_page(after, 1000):
            mems += [m for m, _ in mpage]
            last = mpage[-1][0].id
            assert last is not None
            after = last
        for n, place in enumerate(PLACES):
            vis = visibility(Audience(place))
            r = await export_bundle(e, where / f"p{n}", place=place)
            text = "\n".join(p.read_text("utf-8") for p in (where / f"p{n}").rglob("*") if p.is_file())
            hidden = [x.content for x in eps if not vis.sees_episode(x.place)] + \
                [m.text for m in mems if not vis.sees_memory(m.scope)]
            for secret in hidden:
                assert json.dumps(secret, ensure_ascii=False) not in text, (place, secret)
            shown = [x for x in eps if vis.sees_episode(x.place)]
            assert r.counts["episodes"] == len(shown)
            assert r.counts["memories"] == len([m for m in mems if vis.sees_memory(m.scope)])
            for line in (where / f"p{n}" / "people.jsonl").read_text("utf-8").splitlines():
                person = json.loads(line)
                assert all(x["place"] == place for x in person["names"])
                spoke = {x.actor_name for x in shown if x.actor == person["person"]}
                assert {a["alias"] for a in person["aliases"]} <= spoke | {x["name"] for x in person["names"]}
            for line in (where / f"p{n}" / "cursors.jsonl").read_text("utf-8").splitlines():
                assert json.loads(line)["name"].endswith(":" + place)
            docs = sorted(p.name for p in (where / f"p{n}" / "documents").rglob("*") if p.is_file())
            assert docs == ["self-image.md", "self.md"]  # no diary, inner state, proposals or history
            assert (where / f"p{n}" / "job_runs.jsonl").read_text() == ""
            # a place's bundle is a bundle: it imports, its memories citing only its own lines
            (where / f"in{n}").mkdir()
            other = await Engram.open(where / f"in{n}" / "store.db", HashEmbedder(dim=16), background=False)
            try:
                assert (await import_bundle(other, where / f"p{n}")).added["episodes"] == len(shown)
            finally:
                await other.close()
            checked += 1
    finally:
        await e.close()
    return checked


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan=steps)
def test_a_place_export_holds_nothing_that_place_may_not_see(plan: list[Step]) -> None:
    with tempfile.TemporaryDirectory() as d:
        assert asyncio.run(check_places(plan, Path(d))) == len(PLACES)
