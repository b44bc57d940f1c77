"""Writing a soul bundle: the whole store, or what one place may see (``scopes.visibility`` decides,
as for every read), as the files ``SPEC.md`` describes, then the manifest that counts and checks them.

A folder that holds an earlier bundle is written over (the files its manifest lists are removed
first, so a month or a place forgotten since leaves no file behind): exporting into the same git
working copy again and again gives diffs of what changed. Any other folder must be new or empty.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import BundleError
from ..kernel import Kernel
from ..model import Audience
from ..scopes import visibility
from ..self.diary_files import DAY_RULE_FILE, DIARY_FOLDER
from ..self.identity import FOLDER as IDENTITY_FOLDER
from ..self.identity import IMAGE_FILE, SELF_FILE
from .export_log import KnownExport, remember_export
from .format import (
    CURSORS,
    DOCUMENTS,
    EPISODES,
    FORMAT,
    FORMAT_VERSION,
    JOB_RUNS,
    KEPT_APART,
    MANIFEST,
    MEMORIES,
    PEOPLE,
    PLACES,
    TABLES,
    checksum,
    episode_file,
    episode_record,
    line,
    memory_record,
    utc_iso,
)

PAGE = 5000
# cursors that describe this file, not what the bot knows: the keyword cache's write count, how far
# each embedder got (vectors are not exported: the importer embeds again), the kept-messages journal
LOCAL_CURSORS = ("keywordstamp", "vectors:", "kept:")
Progress = Callable[[str, int, int], None]  # (what, done, of how many)


@dataclass
class ExportReport:
    folder: Path
    place: str | None
    counts: dict[str, int] = field(default_factory=dict)
    size: int = 0  # bytes written, manifest included
    files: int = 0


async def export_bundle(engram: Kernel, folder: Path, *, place: str | None = None,
                        progress: Progress | None = None) -> ExportReport:
    """Write the bundle of ``engram``'s store into ``folder`` (``place``: only what that place may see,
    for someone who asks for their data); returns what was written."""
    folder = Path(folder)
    store = engram.store
    data_folder = Path(store.path).parent
    await asyncio.to_thread(_clear, folder)  # before reading: a folder that cannot take it costs nothing
    vis = visibility(Audience(place)) if place is not None else None
    files: dict[str, list[str]] = {t: [] for t in TABLES}
    counts = {"episodes": 0, "memories": 0, "places": 0, "people": 0, "cursors": 0, "kept_apart": 0,
              "job_runs": 0, "documents": 0}

    # one moment's state: no write of this process lands between the pages (a memory whose new
    # source line or forget came meanwhile would make the bundle disagree with itself); reads go on
    async with store.transaction():
        # episodes, a file per place and month, each in id order
        total, done, after = await store.count_episodes(), 0, 0
        exported: set[int] = set()
        spoken: set[tuple[str, str]] = set()  # (person, name) said in the exported lines
        while page := await store.episodes_page(after, PAGE):
            after = page[-1].id or after
            done += len(page)
            for ep in page:
                if vis is not None and not vis.sees_episode(ep.place):
                    continue
                files.setdefault(episode_file(ep), []).append(line(episode_record(ep)))
                if vis is not None:
                    exported.add(ep.id or 0)
                    spoken.add((ep.actor, ep.actor_name))
                counts["episodes"] += 1
            if progress:
                progress("episodes", done, total)

        # memories, every version, in id order; a place's export cites only the lines it holds
        kept: set[int] = set()
        after = 0
        while mpage := await store.memories_page(after, PAGE):
            after = mpage[-1][0].id or after
            for m, root in mpage:
                if vis is not None:
                    if not vis.sees_memory(m.scope):
                        continue
                    m = _cite_only(m, exported)
                files[MEMORIES].append(line(memory_record(m, root)))
                kept.add(m.id or 0)
                counts["memories"] += 1
            if progress:
                progress("memories", counts["memories"], counts["memories"])

        titles = {p: (t, seen) for p, t, seen in await store.place_title_rows()}
        places = sorted(set(await store.place_names()) | set(titles))
        if place is not None:
            places = [p for p in places if p == place]
        for p in places:
            title, seen = titles.get(p, ("", None))
            files[PLACES].append(line({"place": p, "title": title, "title_seen": utc_iso(seen)}))
        counts["places"] = len(places)

        aliases, names = await store.alias_rows(), await store.place_name_rows()
        if place is not None:
            names = [n for n in names if n[0] == place]
            here = {(person, name) for _, person, name, _ in names} | spoken
            aliases = [a for a in aliases if (a[0], a[1]) in here]
        people: dict[str, dict[str, list[dict[str, Any]]]] = {}
        for person, alias, first, last in aliases:
            people.setdefault(person, {"aliases": [], "names": []})["aliases"].append(
                {"alias": alias, "first_seen": utc_iso(first), "last_seen": utc_iso(last)})
        for p, person, name, last in names:
            people.setdefault(person, {"aliases": [], "names": []})["names"].append(
                {"place": p, "name": name, "last_seen": utc_iso(last)})
        for person in sorted(people):
            files[PEOPLE].append(line({"person": person, **people[person]}))
        counts["people"] = len(people)

        for name, value in sorted((await store.cursors("")).items()):
            if name.startswith(LOCAL_CURSORS) or (place is not None and not name.endswith(":" + place)):
                continue
            files[CURSORS].append(line({"name": name, "value": value}))
            counts["cursors"] += 1
        for a, b in await store.kept_apart_pairs():
            if a in kept and b in kept:
                files[KEPT_APART].append(line({"a": a, "b": b}))
                counts["kept_apart"] += 1
        if place is None:
            for job, record in sorted((await store.job_runs()).items()):
                files[JOB_RUNS].append(line({"job": job, "record": record}))
                counts["job_runs"] += 1

    when = engram.clock().isoformat()
    # the files off the event loop (the bot answers meanwhile)
    report = await asyncio.to_thread(_write_bundle, folder, files, data_folder, place, counts, when)
    remember_export(data_folder, KnownExport(report.folder, when, report.size, place))
    return report


def _write_bundle(folder: Path, files: dict[str, list[str]], data_folder: Path, place: str | None,
                  counts: dict[str, int], when: str) -> ExportReport:
    """Write the tables' lines, the documents and the manifest that lists them all."""
    listed: list[dict[str, Any]] = []
    size = 0
    for path in sorted(files):
        data = "".join(files[path]).encode("utf-8")
        size += _write(folder / path, data)
        listed.append({"path": path, "records": len(files[path]), "sha256": checksum(data)})
    for rel, data in _documents(data_folder, whole=place is None):
        size += _write(folder / DOCUMENTS / rel, data)
        listed.append({"path": f"{DOCUMENTS}/{rel}", "bytes": len(data), "sha256": checksum(data)})
        counts["documents"] += 1
    listed.sort(key=lambda f: str(f["path"]))
    manifest = {"format": FORMAT, "version": FORMAT_VERSION, "exported_at": when, "place": place,
                "counts": counts, "files": listed}
    size += _write(folder / MANIFEST, (json.dumps(manifest, ensure_ascii=False, indent=1) + "\n").encode())
    return ExportReport(folder.resolve(), place, counts, size, len(listed) + 1)


def _cite_only(m: Any, episodes: set[int]) -> Any:
    from dataclasses import replace

    return replace(m, sources=tuple(s for s in m.sources if s in episodes))


def _write(path: Path, data: bytes) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return len(data)


def _documents(data_folder: Path, *, whole: bool) -> list[tuple[str, bytes]]:
    """The bot's documents as (path under ``documents/``, bytes), by path: its identity folder (core
    identity, self-image and their history, inner state, proposals) and its diary files; a place's
    export only the core identity and the self-image, which every chat may see. Lock files,
    temporaries and the other hidden bookkeeping files are left out, but the diaries' day rule."""
    if not whole:
        wanted = [data_folder / IDENTITY_FOLDER / SELF_FILE, data_folder / IDENTITY_FOLDER / IMAGE_FILE]
        return [(p.relative_to(data_folder).as_posix(), p.read_bytes()) for p in wanted if p.is_file()]
    out = []
    for top in (IDENTITY_FOLDER, DIARY_FOLDER):
        root = data_folder / top
        if not root.is_dir():
            continue
        for p in sorted(root.rglob("*")):
            if not p.is_file() or p.is_symlink():
                continue
            if (p.name.startswith(".") and p.name != DAY_RULE_FILE) or p.name.endswith(".tmp"):
                continue
            out.append((p.relative_to(data_folder).as_posix(), p.read_bytes()))
    return sorted(out)


def _clear(folder: Path) -> None:
    """Make ``folder`` ready for a bundle: new, empty (hidden entries such as ``.git`` aside), or one
    holding an earlier bundle, whose files are removed; anything else is refused untouched."""
    if not folder.exists():
        folder.mkdir(parents=True)
        return
    if not folder.is_dir():
        raise BundleError(f"{folder} is not a folder; nothing was exported", code="bundle_target",
                          folder=folder)
    entries = [p for p in folder.iterdir() if not p.name.startswith(".")]
    if not entries:
        return
    manifest = folder / MANIFEST
    try:
        old = json.loads(manifest.read_text("utf-8"))
        paths = [str(f["path"]) for f in old["files"]]
    except (OSError, ValueError, KeyError, TypeError):
        raise BundleError(f"{folder} is not empty and holds no bundle to replace: export into a new or "
                          "empty folder; nothing was exported", code="bundle_target", folder=folder) from None
    root = folder.resolve()
    for rel in paths:
        p = (folder / rel).resolve()
        if p.is_relative_to(root) and p != root and p.is_file():
            p.unlink()
    manifest.unlink()
    for sub in (EPISODES, DOCUMENTS):  # the folders left empty (a place or month gone since)
        top = folder / sub
        for d in sorted(top.rglob("*"), key=lambda d: -len(d.parts)) if top.is_dir() else []:
            if d.is_dir() and not any(d.iterdir()):
                d.rmdir()
        if (folder / sub).is_dir() and not any((folder / sub).iterdir()):
            shutil.rmtree(folder / sub)
