"""A bad bundle is refused whole, with the file and line of what is wrong, and changes nothing: a
truncated file, an invalid JSON line, an unknown scope, a source that names a missing episode, a
duplicate id, counts or checksums that do not match the manifest, a path outside the bundle folder,
a newer format version; and a store that is not empty without --merge."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from astrbot_plugin_engram.memory import Engram, Episode, Memory
from astrbot_plugin_engram.memory.bundle import export_bundle, import_bundle
from astrbot_plugin_engram.memory.errors import BundleError

from ..conftest import HashEmbedder
from .worlds import write_documents


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small, valid bundle: lines in two places, memories with a version and sources, documents."""
    import asyncio

    where = tmp_path_factory.mktemp("good")
    write_documents(where)

    async def make() -> None:
        e = await Engram.open(where / "store.db", HashEmbedder(dim=16), background=False)
        try:
            ids = await e.record_many([Episode(place="qq:group:1", content=f"line {n}", actor="qq:1",
                                               actor_name="Ann") for n in range(3)]
                                      + [Episode(place="qq:private:7", content="secret", actor="qq:7")])
            m = await e.add_memory(Memory(text="Ann likes tea", scope="space:qq:group:1", sources=(ids[0],)))
            await e.update(m, "Ann likes green tea")
            await e.add_memory(Memory(text="the sky is blue", scope="public"))
            await export_bundle(e, where / "bundle")
        finally:
            await e.close()

    asyncio.run(make())
    return where / "bundle"


def rewrite(folder: Path, path: str, change: Callable[[list[str]], list[str]], *, fix: bool = True) -> None:
    """Change the lines of one file; ``fix``: its manifest entry follows (length and checksum), so
    the problem left is the one made."""
    f = folder / path
    lines = change(f.read_text("utf-8").splitlines(keepends=True))
    data = "".join(lines).encode("utf-8")
    f.write_bytes(data)
    if fix:
        manifest = json.loads((folder / "manifest.json").read_text("utf-8"))
        for entry in manifest["files"]:
            if entry["path"] == path:
                entry["records"], entry["sha256"] = data.count(b"\n"), hashlib.sha256(data).hexdigest()
        (folder / "manifest.json").write_text(json.dumps(manifest), "utf-8")


def edit_manifest(folder: Path, change: Callable[[dict], None]) -> None:
    manifest = json.loads((folder / "manifest.json").read_text("utf-8"))
    change(manifest)
    (folder / "manifest.json").write_text(json.dumps(manifest), "utf-8")


def first_episode_file(folder: Path) -> str:
    return sorted(p.relative_to(folder).as_posix() for p in (folder / "episodes").rglob("*.jsonl"))[0]


def memory_line(n: int, **changes: object) -> Callable[[list[str]], list[str]]:
    def change(lines: list[str]) -> list[str]:
        d = json.loads(lines[n - 1])
        d.update(changes)
        lines[n - 1] = json.dumps(d, ensure_ascii=False) + "\n"
        return lines
    return change


def _drop_counts(m: dict) -> None:
    m["counts"]["episodes"] += 1


def _planted(m: dict) -> None:  # a file an import would write beside the store: refused
    m["files"].append({"path": "documents/dashboard_token", "bytes": 0,
                       "sha256": hashlib.sha256(b"").hexdigest()})


def _newer(m: dict) -> None:
    m["version"] = 2


def _outside(m: dict) -> None:
    m["files"].append({"path": "../outside.jsonl", "records": 0, "sha256": hashlib.sha256(b"").hexdigest()})


CASES: list[tuple[str, Callable[[Path], None], str, int | None, str]] = [
    ("truncated", lambda b: rewrite(b, "memories.jsonl", lambda ls: [*ls[:-1], ls[-1][:30]], fix=False),
     "memories.jsonl", 3, "truncated"),
    ("invalid JSON", lambda b: rewrite(b, "memories.jsonl", lambda ls: [ls[0], "{not json\n", *ls[2:]]),
     "memories.jsonl", 2, "not a valid JSON line"),
    ("unknown scope", lambda b: rewrite(b, "memories.jsonl", memory_line(3, scope="friends")),
     "memories.jsonl", 3, "unknown scope 'friends'"),
    ("missing source", lambda b: rewrite(b, "memories.jsonl", memory_line(1, sources=[999])),
     "memories.jsonl", 1, "source e999"),
    ("duplicate id", lambda b: rewrite(b, "memories.jsonl", lambda ls: [*ls, ls[0]]),
     "memories.jsonl", 4, "duplicate memory id 1 (first at memories.jsonl:1)"),
    ("counts", lambda b: edit_manifest(b, _drop_counts), "manifest.json", None,
     "counts episodes as 5, the files hold 4"),
    ("checksum", lambda b: rewrite(b, "people.jsonl", lambda ls: [ls[0].replace("Ann", "Anm"), *ls[1:]],
                                   fix=False), "people.jsonl", None, "checksum does not match"),
    ("records", lambda b: rewrite(b, "memories.jsonl", lambda ls: ls[:-1], fix=False),
     "memories.jsonl", None, "holds 2 records, the manifest says 3"),
    ("outside", lambda b: edit_manifest(b, _outside), "manifest.json", None,
     "'../outside.jsonl' is a path outside the bundle folder"),
    ("not a document", lambda b: edit_manifest(b, _planted), "manifest.json", None,
     "'documents/dashboard_token' is no file of a bundle"),
    ("newer version", lambda b: edit_manifest(b, _newer), "manifest.json", None,
     "format version 2, newer than this Engram reads (1)"),
    ("misplaced episode", lambda b: rewrite(b, first_episode_file(b), lambda ls: [
        ls[0].replace('"time": "', '"time": "2020-01-01T00:00:00+00:00", "was": "'), *ls[1:]]),
     "episodes/", 1, "belongs in episodes/"),
]


@pytest.mark.parametrize("make_bad, file, line, said", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
async def test_a_bad_bundle_is_refused_naming_file_and_line_and_changes_nothing(
        good: Path, tmp_path: Path, make_bad: Callable[[Path], None], file: str, line: int | None,
        said: str) -> None:
    bad = tmp_path / "bad"
    shutil.copytree(good, bad)
    make_bad(bad)
    (tmp_path / "target").mkdir()
    e = await Engram.open(tmp_path / "target" / "store.db", HashEmbedder(dim=16), background=False)
    try:
        with pytest.raises(BundleError) as got:
            await import_bundle(e, bad)
        message = str(got.value)
        assert said in message and "nothing was imported" in message
        assert str(got.value.values["file"]).startswith(file)
        if line is not None:
            assert got.value.values["line"] == line
            assert f"{got.value.values['file']}:{line}: " in message
        counts = await e.counts()
        assert counts["episodes"] == counts["memories"] == counts["superseded"] == 0
        assert not (tmp_path / "target" / "identity").exists()  # no document written either
    finally:
        await e.close()
    assert not (tmp_path / "outside.jsonl").exists()


async def test_a_store_that_is_not_empty_needs_merge(good: Path, engram: Engram) -> None:
    await engram.record(Episode(place="qq:group:9", content="already here"))
    with pytest.raises(BundleError, match="not empty.*--merge"):
        await import_bundle(engram, good)
    assert (await engram.counts())["episodes"] == 1


async def test_the_good_bundle_itself_imports(good: Path, engram: Engram) -> None:
    report = await import_bundle(engram, good)
    assert report.added == {"episodes": 4, "memories": 3, "documents": 7}
    assert [m.text for m in await engram.history(2)] == ["Ann likes tea", "Ann likes green tea"]
