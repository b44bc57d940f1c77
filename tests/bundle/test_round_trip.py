"""Export -> import into an empty store -> export gives the same bytes (the manifest's export time
aside), the same ids, versions, scopes and sources; with the same embedder, the same recall for the
same questions and audiences. Over generated stores (hypothesis) and the demo's data; and a large
import's index words worked out on every core are the store's own."""

from __future__ import annotations

import asyncio
import json
import tempfile
from datetime import datetime, timezone
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from astrbot_plugin_engram.memory import Audience, Engram
from astrbot_plugin_engram.memory.bundle import export_bundle, import_bundle
from astrbot_plugin_engram.memory.cli.demo import SAMPLE, audiences, fill, load_sample

from ..conftest import HashEmbedder
from .worlds import Step, build, steps, write_documents


def files_of(folder: Path) -> dict[str, bytes]:
    """Every file of a bundle by path, the manifest without its export time."""
    out = {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    manifest = json.loads(out["manifest.json"])
    assert manifest.pop("exported_at")
    out["manifest.json"] = json.dumps(manifest).encode()
    return out


async def everything(e: Engram) -> tuple[list, list, dict, list, list, list]:
    """What the store holds that a bundle carries, read through the store's own reads."""
    s = e.store
    eps, mems, after = [], [], 0
    while page := await s.episodes_page(after, 1000):
        eps += page
        last = page[-1].id  # a stored row has its id
        assert last is not None
        after = last
    after = 0
    while mpage := await s.memories_page(after, 1000):
        mems += mpage
        last = mpage[-1][0].id
        assert last is not None
        after = last
    cursors = {k: v for k, v in (await s.cursors("")).items() if k != "keywordstamp"}
    return eps, mems, cursors, await s.alias_rows(), await s.place_name_rows(), await s.kept_apart_pairs()


async def round_trip(plan: list[Step], where: Path) -> None:
    (where / "a").mkdir()
    (where / "b").mkdir()
    write_documents(where / "a")
    a = await Engram.open(where / "a" / "store.db", HashEmbedder(dim=16), background=False)
    b = await Engram.open(where / "b" / "store.db", HashEmbedder(dim=16), background=False)
    try:
        await build(a, plan)
        first = await export_bundle(a, where / "one")
        report = await import_bundle(b, where / "one")
        assert report.added["episodes"] == first.counts["episodes"]
        await export_bundle(b, where / "two")
        assert files_of(where / "one") == files_of(where / "two")
        held_a, held_b = await everything(a), await everything(b)
        assert held_a[1] == held_b[1]  # every memory version: id, root, text, scope, sources, times
        assert [(x.id, x.place, x.seq, x.section, x.content, x.actor, x.meta) for x in held_a[0]] == \
            [(x.id, x.place, x.seq, x.section, x.content, x.actor, x.meta) for x in held_b[0]]
        assert held_a[2:] == held_b[2:]
        assert (where / "b" / "identity" / "self.md").read_bytes() == \
            (where / "a" / "identity" / "self.md").read_bytes()
        assert not (where / "b" / "identity" / ".proposals.json.lock").exists()
        # with the same embedder, the same recall for the same questions and audiences
        await a.embed_pending()
        await b.embed_pending()
        now = datetime(2026, 6, 1, tzinfo=timezone.utc)
        for aud in (Audience("qq:group:1"), Audience("qq:private:7", owner_private=True), Audience("web")):
            for query in ("tea birthday", "猫 咖啡", "Lumen salary hike"):
                ha = await a.recall(query, aud, k=20, now=now)
                hb = await b.recall(query, aud, k=20, now=now)
                assert [(h.key, round(h.score, 5)) for h in ha] == [(h.key, round(h.score, 5)) for h in hb]
    finally:
        await a.close()
        await b.close()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan=steps)
def test_export_import_export_gives_the_same_bytes(plan: list[Step]) -> None:
    with tempfile.TemporaryDirectory() as d:
        asyncio.run(round_trip(plan, Path(d)))


async def test_the_demo_comes_back_byte_for_byte_and_recalls_the_same(tmp_path: Path) -> None:
    sample = load_sample(SAMPLE)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = await Engram.open(tmp_path / "a" / "store.db", HashEmbedder(dim=64), background=False)
    b = await Engram.open(tmp_path / "b" / "store.db", HashEmbedder(dim=64), background=False)
    try:
        await fill(a, sample, lambda _: None)
        await export_bundle(a, tmp_path / "one")
        await import_bundle(b, tmp_path / "one")
        assert await b.embed_pending() > 0  # vectors are not in a bundle: embedded again
        await export_bundle(b, tmp_path / "two")
        assert files_of(tmp_path / "one") == files_of(tmp_path / "two")
        now = datetime.now(timezone.utc)
        asked = 0
        for question in sample["questions"]:
            for aud in audiences(sample).values():
                ha = await a.recall(question, aud, k=20, now=now)
                hb = await b.recall(question, aud, k=20, now=now)
                assert [(h.key, round(h.score, 5)) for h in ha] == [(h.key, round(h.score, 5)) for h in hb]
                asked += bool(ha)
        assert asked >= len(sample["questions"])
    finally:
        await a.close()
        await b.close()


async def test_a_large_import_works_the_index_words_out_on_every_core_the_same(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A large import prepares each line's index words in processes of their own: the words the
    store keeps are the ones it would have worked out itself."""
    from astrbot_plugin_engram.memory.bundle import importing

    for d in ("a", "serial", "parallel"):
        (tmp_path / d).mkdir()
    a = await Engram.open(tmp_path / "a" / "store.db", HashEmbedder(dim=16), background=False)
    await build(a, [Step("line", place=n % 5, person=n % 4, words=(w, "猫咪 running"), pick=n)
                    for n, w in enumerate(["tea", "Bart和同学们", "coffee 咖啡", "hikes"] * 5)])
    await export_bundle(a, tmp_path / "one")
    await a.close()
    words = []
    for d, start in (("serial", 10**9), ("parallel", 1)):
        monkeypatch.setattr(importing, "PARALLEL_FROM", start)
        monkeypatch.setattr(importing, "PARALLEL_CHUNK", 7)
        e = await Engram.open(tmp_path / d / "store.db", HashEmbedder(dim=16), background=False)
        try:
            await import_bundle(e, tmp_path / "one")
            words.append(await e.store.episode_index_words(list(range(1, 21))))
        finally:
            await e.close()
    assert len(words[0]) == 20 and words[0] == words[1]
