"""The golden bundle (``tests/bundle/golden``): a fixed store exported must give exactly its files, and
it must import. A change of the format then shows here and is deliberate: bump ``FORMAT_VERSION``
(``SPEC.md`` says what changed) and write the golden bundle again:
``.venv/bin/python -m tests.bundle.test_golden``."""

from __future__ import annotations

import asyncio
import json
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

from astrbot_plugin_engram.memory import Engram, Episode, Memory
from astrbot_plugin_engram.memory.bundle import FORMAT_VERSION, export_bundle, import_bundle

from ..conftest import HashEmbedder
from .test_round_trip import files_of

GOLDEN = Path(__file__).parent / "golden"
CST = timezone(timedelta(hours=8))
T0 = datetime(2026, 3, 1, 21, 30, tzinfo=CST)


async def fixed_store(folder: Path) -> Engram:
    """The same store every time: lines in a group and a private chat (one with an image and a group
    title), memories with a version, a merge and sources, a forgotten line, a pair kept apart, cursors,
    a job run and the bot's documents."""
    (folder / "identity" / "history").mkdir(parents=True)
    (folder / "diary").mkdir()
    (folder / "identity" / "self.md").write_text("# Lumen\n我是一个安静的机器人。\n", "utf-8")
    (folder / "identity" / "self-image.md").write_text("I like slow mornings.\n", "utf-8")
    old = folder / "identity" / "history" / "self-image.20260301T000000000000Z.md"
    old.write_text("I was new.\n", "utf-8")
    (folder / "identity" / "inner-state.json").write_text('{"mood": "calm", "energy": 0.6}\n', "utf-8")
    (folder / "diary" / "2026-03-01.md").write_text("今天和 Ann 聊了茶。\n", "utf-8")
    e = await Engram.open(folder / "store.db", HashEmbedder(dim=16), background=False)
    ids = await e.record_many([
        Episode(place="qq:group:1", content="我喜欢绿茶 🍵", actor="qq:1", actor_name="Ann", time=T0,
                place_title="茶友会"),
        Episode(place="qq:group:1", content="Me too!", actor="qq:2", actor_name="Bob",
                time=T0 + timedelta(minutes=1)),
        Episode(place="qq:group:1", content="[image]", actor="qq:2", actor_name="Bobby", kind="image",
                time=T0 + timedelta(minutes=2), meta={"image": "cup.jpg"}),
        Episode(place="qq:private:7", content="my salary is 9000", actor="qq:7", actor_name="Cat",
                time=T0 + timedelta(hours=5)),
        Episode(place="qq:private:7", content="noted", actor="self", actor_name="Lumen", kind="message_out",
                time=T0 + timedelta(hours=5, seconds=3)),
    ])
    made = T0 + timedelta(days=1)
    async with e.store.transaction() as tx:
        tea = await tx.add_memory(Memory(text="Ann likes tea", scope="space:qq:group:1", subjects=("qq:1",),
                                         sources=(ids[0],), created_at=made, importance=0.7))
        await tx.add_memory(Memory(text="Ann likes green tea", scope="space:qq:group:1", subjects=("qq:1",),
                                   sources=(ids[0], ids[1]), created_at=made + timedelta(hours=1),
                                   valid_from=made + timedelta(hours=1)), supersedes=tea)
        a = await tx.add_memory(Memory(text="Cat earns 9000", scope="owner", kind="fact", sources=(ids[3],),
                                       created_at=made, strength=0.8))
        b = await tx.add_memory(Memory(text="Cat's pay is 9000", scope="owner", sources=(ids[3],),
                                       created_at=made))
        await tx.merge_memories(Memory(text="Cat is paid 9000 a month", scope="owner", sources=(ids[3],),
                                       created_at=made + timedelta(hours=2)), [a, b])
        c = await tx.add_memory(Memory(text="tea is a drink", scope="public", created_at=made))
        d = await tx.add_memory(Memory(text="tea parties are fun", scope="self", kind="reflection",
                                       created_at=made, last_recalled=made + timedelta(days=1)))
        await tx.keep_apart([c, d])
        await tx.set_cursor("consolidate:qq:group:1", ids[2])
        await tx.set_cursor("diary.through", 739311)
    await e.forget_episodes([ids[4]])
    await e.store.save_job_run("consolidate", {"status": "ok", "last": "2026-03-02T00:00:00+00:00",
                                               "added": 3})
    return e


async def export_fixed(where: Path, out: Path) -> None:
    e = await fixed_store(where)
    try:
        await export_bundle(e, out)
    finally:
        await e.close()


async def test_the_fixed_store_exports_exactly_the_golden_bundle(tmp_path: Path) -> None:
    (tmp_path / "s").mkdir()
    await export_fixed(tmp_path / "s", tmp_path / "out")
    golden, now = files_of(GOLDEN), files_of(tmp_path / "out")
    assert sorted(golden) == sorted(now), "the bundle's files changed: see this module's docstring"
    for path in golden:
        assert golden[path] == now[path], f"{path} changed: a format change bumps FORMAT_VERSION (SPEC.md)"
    assert json.loads((GOLDEN / "manifest.json").read_text("utf-8"))["version"] == FORMAT_VERSION


async def test_the_golden_bundle_imports_and_exports_the_same(engram: Engram, tmp_path: Path) -> None:
    report = await import_bundle(engram, GOLDEN)
    assert report.added == {"episodes": 4, "memories": 7, "documents": 5}
    await export_bundle(engram, tmp_path / "again")
    assert files_of(tmp_path / "again") == files_of(GOLDEN)


if __name__ == "__main__":  # write the golden bundle again (after a deliberate format change)
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "s").mkdir()
        asyncio.run(export_fixed(Path(d) / "s", Path(d) / "out"))
        shutil.rmtree(GOLDEN, ignore_errors=True)
        shutil.copytree(Path(d) / "out", GOLDEN)
    print(f"wrote {GOLDEN}")
