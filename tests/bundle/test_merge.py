"""``import --merge``: into a store that is not empty, idempotent; what the store forgot since stays
forgotten; a bundle from another store's history is refused, nothing changed."""

from __future__ import annotations

from pathlib import Path

import pytest

from astrbot_plugin_engram.memory import Engram, Episode, Memory
from astrbot_plugin_engram.memory.bundle import export_bundle, import_bundle
from astrbot_plugin_engram.memory.errors import BundleError

from ..conftest import EngramOpener
from .test_round_trip import files_of


async def lines(e: Engram, place: str, texts: list[str]) -> list[int]:
    return await e.record_many([Episode(place=place, content=t, actor="qq:1", actor_name="Ann")
                                for t in texts])


async def test_a_later_bundle_merged_into_an_earlier_copy_gives_the_later_store(
        open_engram: EngramOpener, tmp_path: Path) -> None:
    for d in "abc":
        (tmp_path / d).mkdir()
    a = await open_engram(path=tmp_path / "a" / "s.db")
    ids = await lines(a, "qq:group:1", ["one", "two"])
    m = await a.add_memory(Memory(text="Ann counts", scope="space:qq:group:1", sources=(ids[0],)))
    await export_bundle(a, tmp_path / "early")
    await lines(a, "qq:group:1", ["three"])
    await lines(a, "qq:group:2", ["elsewhere"])
    await a.update(m, "Ann counts to three")
    await export_bundle(a, tmp_path / "late")

    b = await open_engram(path=tmp_path / "b" / "s.db")
    await import_bundle(b, tmp_path / "early")
    report = await import_bundle(b, tmp_path / "late", merge=True)
    assert report.added["episodes"] == 2 and report.added["memories"] == 1
    assert report.already == 2 + 1  # the early bundle's lines and memory
    await export_bundle(b, tmp_path / "merged")
    assert files_of(tmp_path / "merged") == files_of(tmp_path / "late")

    again = await import_bundle(b, tmp_path / "late", merge=True)  # idempotent
    assert again.added == {"episodes": 0, "memories": 0, "documents": 0}
    await export_bundle(b, tmp_path / "merged")
    assert files_of(tmp_path / "merged") == files_of(tmp_path / "late")


async def test_what_the_store_forgot_since_stays_forgotten(open_engram: EngramOpener, tmp_path: Path) -> None:
    e = await open_engram()
    ids = await lines(e, "qq:group:1", ["my phone is 5551234", "hello"])
    m = await e.add_memory(Memory(text="Ann's phone is 5551234", scope="space:qq:group:1", sources=(ids[0],)))
    await export_bundle(e, tmp_path / "before")
    await e.forget([m], with_sources=True)
    report = await import_bundle(e, tmp_path / "before", merge=True)
    assert report.added["episodes"] == report.added["memories"] == 0
    assert report.forgotten == 2 and report.already == 1
    assert await e.episodes(ids) == {ids[1]: (await e.episodes([ids[1]]))[ids[1]]}
    assert (await e.counts())["memories"] == 0


async def test_a_bundle_from_another_history_is_refused_and_changes_nothing(
        open_engram: EngramOpener, tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    a = await open_engram(path=tmp_path / "a" / "s.db")
    await lines(a, "qq:group:1", ["from a"])
    await export_bundle(a, tmp_path / "from_a")
    b = await open_engram()
    await lines(b, "qq:group:1", ["from b"])
    with pytest.raises(BundleError, match=r"episodes/.*\.jsonl:1: the store's episode 1 is another line"):
        await import_bundle(b, tmp_path / "from_a", merge=True)
    assert [x.content for x in (await b.episodes([1, 2])).values()] == ["from b"]


async def test_a_line_at_a_sequence_number_the_store_gave_another_line_is_refused(
        open_engram: EngramOpener, tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    a = await open_engram(path=tmp_path / "a" / "s.db")
    await lines(a, "qq:group:2", ["a1", "a2", "a3"])  # ids 1-3 elsewhere, then 4 at seq 1 of group 1
    await lines(a, "qq:group:1", ["from a"])
    await export_bundle(a, tmp_path / "from_a", place="qq:group:1")  # line 4 alone
    b = await open_engram()
    await lines(b, "qq:group:1", ["from b"])  # id 1, seq 1 of group 1
    with pytest.raises(BundleError, match=r"qq_group_1.*\.jsonl:1: the store holds another line at sequence"):
        await import_bundle(b, tmp_path / "from_a", merge=True)
    assert (await b.counts())["episodes"] == 1
