"""Reading a soul bundle back: the whole bundle is read and checked before anything is written (the
manifest's version, every file's place, length and checksum, every line, every id and every reference),
then written in one transaction: a bad bundle changes nothing, and says which file and line is wrong.

Into an empty store the bundle goes as it is: the same ids, versions, scopes, sources and sequence
numbers (exported again, the same bytes). ``merge`` puts it into a store that is not empty, and is
idempotent: a line the store already has (the same id, the same record) is skipped, one it forgot
since (an id it gave out and erased) stays forgotten, and one whose id the store gives to something
else is refused (the bundle is from another store's history: import it into an empty store instead).
The store's own state wins where both have a thing (a memory's strength, a document): a merge adds
what is missing, it never undoes what happened since. Vectors are not in a bundle: the indexer embeds
what was imported in the background, as for new lines.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import BundleError, StoreError
from ..kernel import Kernel
from ..model import Episode, Memory
from ..self.identity import atomic_write
from ..text.words import prepare_episode
from .format import (
    CURSORS,
    DOCUMENT_FOLDERS,
    DOCUMENTS,
    EPISODES,
    FORMAT,
    FORMAT_VERSION,
    KEPT_APART,
    MANIFEST,
    MEMORIES,
    PEOPLE,
    PLACES,
    TABLES,
    Where,
    checksum,
    episode_file,
    parse_line,
    read_cursor,
    read_episode,
    read_job_run,
    read_memory,
    read_pair,
    read_person,
    read_place,
)

Progress = Callable[[str, int, int], None]  # (what, done, of how many)
CHUNK = 500
# from this many episodes their index words are worked out on every core (the English stemmer is
# pure Python: ~half an import's time), in processes of their own
PARALLEL_FROM, PARALLEL_CHUNK = 20_000, 5_000


@dataclass
class Bundle:
    """A bundle read and checked in itself (its references to episodes are checked against the store
    it goes into: ``import_bundle``)."""

    folder: Path
    manifest: dict[str, Any]
    episodes: list[Episode] = field(default_factory=list)  # in id order
    memories: list[tuple[Memory, int]] = field(default_factory=list)  # (memory, root), in id order
    titles: list[tuple[str, str, float]] = field(default_factory=list)
    places: list[str] = field(default_factory=list)
    aliases: list[tuple[str, str, float, float]] = field(default_factory=list)
    place_names: list[tuple[str, str, str, float]] = field(default_factory=list)
    cursors: list[tuple[str, int]] = field(default_factory=list)
    kept_apart: list[tuple[int, int]] = field(default_factory=list)
    job_runs: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    documents: list[tuple[str, bytes]] = field(default_factory=list)
    at: dict[tuple[str, Any], Where] = field(default_factory=dict)  # ('e'|'m', id) ... -> its line


@dataclass
class ImportReport:
    folder: Path
    added: dict[str, int] = field(default_factory=dict)  # what was written, by kind
    already: int = 0  # lines the store had already (a merge)
    forgotten: int = 0  # lines the store forgot since the bundle was written (a merge): left forgotten
    documents_kept: int = 0  # documents the data folder has its own of (a merge): left as they are


def read_bundle(folder: Path, progress: Progress | None = None) -> Bundle:
    """Read and check the bundle in ``folder`` whole; ``BundleError`` names the file and line of the
    first problem."""
    folder = Path(folder).resolve()
    manifest = _manifest(folder)
    b = Bundle(folder, manifest)
    listed = manifest["files"]
    total = sum(f.get("records", 0) for f in listed if isinstance(f, dict))
    done = 0
    seen_files: set[str] = set()
    seq: dict[tuple[str, int], Where] = {}
    for entry in listed:
        path, data = _file(folder, entry, seen_files)
        if path.startswith(DOCUMENTS + "/"):
            b.documents.append((path[len(DOCUMENTS) + 1:], data))
            continue
        for n, text in _lines(path, data, entry):
            at = Where(path, n)
            d = parse_line(text, at)
            if path.startswith(EPISODES + "/"):
                ep = read_episode(d, at)
                assert ep.id is not None and ep.seq is not None
                _once(b.at, ("e", ep.id), at, f"episode id {ep.id}")
                _once(seq, (ep.place, ep.seq), at, f"sequence number {ep.seq} in {ep.place!r}")
                if episode_file(ep) != path:
                    raise at.error(f"episode {ep.id} belongs in {episode_file(ep)} (its place and month)")
                b.episodes.append(ep)
            elif path == MEMORIES:
                m, root = read_memory(d, at)
                assert m.id is not None
                _once(b.at, ("m", m.id), at, f"memory id {m.id}")
                b.memories.append((m, root))
            elif path == PLACES:
                place, title, seen = read_place(d, at)
                _once(b.at, ("p", place), at, f"place {place!r}")
                b.places.append(place)
                if title and seen is not None:
                    b.titles.append((place, title, seen))
            elif path == PEOPLE:
                aliases, names = read_person(d, at)
                _once(b.at, ("person", d["person"]), at, f"person {d['person']!r}")
                b.aliases += aliases
                b.place_names += names
            elif path == CURSORS:
                name, value = read_cursor(d, at)
                _once(b.at, ("c", name), at, f"cursor {name!r}")
                b.cursors.append((name, value))
            elif path == KEPT_APART:
                pair = read_pair(d, at)
                _once(b.at, ("k", pair), at, f"pair {pair}")
                b.kept_apart.append(pair)
            else:
                job, record = read_job_run(d, at)
                _once(b.at, ("j", job), at, f"job {job!r}")
                b.job_runs.append((job, record))
            done += 1
            if progress and done % 5000 == 0:
                progress("read", done, total)
    for table in TABLES:
        if table not in seen_files:
            raise Where(MANIFEST).error(f"the manifest lists no {table}")
    _check_counts(b)
    _check_history(b)
    b.episodes.sort(key=lambda e: e.id or 0)
    b.memories.sort(key=lambda m: m[0].id or 0)
    if progress:
        progress("read", done, total)
    return b


def _once(seen: dict[Any, Where], key: Any, at: Where, what: str) -> None:
    if key in seen:
        first = seen[key]
        raise at.error(f"duplicate {what} (first at {first.path}:{first.number})")
    seen[key] = at


def _manifest(folder: Path) -> dict[str, Any]:
    at = Where(MANIFEST)
    if not folder.is_dir():
        raise BundleError(f"{folder} is not a folder; nothing was imported", code="bundle_target",
                          folder=folder)
    try:
        data = (folder / MANIFEST).read_bytes()
    except FileNotFoundError:
        raise at.error(f"{folder} holds no {MANIFEST} (is it a bundle?)") from None
    try:
        m = json.loads(data.decode("utf-8"))
    except ValueError as e:
        raise at.error(f"not valid JSON ({e})") from None
    if not isinstance(m, dict) or m.get("format") != FORMAT:
        raise at.error(f"not an Engram bundle's manifest (no \"format\": \"{FORMAT}\")")
    version = m.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise at.error(f"the format version is {version!r}, not a whole number")
    if version > FORMAT_VERSION:
        raise at.error(f"the bundle is of format version {version}, newer than this Engram reads "
                       f"({FORMAT_VERSION}): update Engram to import it")
    if not isinstance(m.get("files"), list) or not isinstance(m.get("counts"), dict):
        raise at.error("'files' must be a list and 'counts' an object")
    return m


def _file(folder: Path, entry: Any, seen: set[str]) -> tuple[str, bytes]:
    """A file the manifest lists, read whole, its place in the bundle checked."""
    at = Where(MANIFEST)
    if not isinstance(entry, dict) or not isinstance(entry.get("path"), str) \
            or not isinstance(entry.get("sha256"), str):
        raise at.error(f"each of 'files' needs a 'path' and a 'sha256' ({entry!r})")
    path: str = entry["path"]
    parts = path.split("/")
    root = folder.resolve()
    full = (folder / path).resolve()
    if path.startswith("/") or "\\" in path or ".." in parts or "" in parts or not full.is_relative_to(root) \
            or full == root:
        raise at.error(f"{path!r} is a path outside the bundle folder")
    known = (path in TABLES or (parts[0] == EPISODES and path.endswith(".jsonl") and len(parts) == 3)
             or (parts[0] == DOCUMENTS and len(parts) > 2 and parts[1] in DOCUMENT_FOLDERS))
    if not known:
        raise at.error(f"{path!r} is no file of a bundle (see SPEC.md)")
    if path in seen:
        raise at.error(f"{path!r} is listed twice")
    seen.add(path)
    try:
        data = full.read_bytes()
    except FileNotFoundError:
        raise Where(path).error("missing (the manifest lists it)") from None
    except OSError as e:
        raise Where(path).error(f"cannot be read ({e.strerror or e})") from None
    if path.startswith(DOCUMENTS + "/"):
        if entry.get("bytes") != len(data):
            raise Where(path).error(f"holds {len(data)} bytes, the manifest says {entry.get('bytes')!r}")
        if checksum(data) != entry["sha256"]:
            raise Where(path).error("its checksum does not match the manifest (changed after the export?)")
    return path, data  # a table's length and checksum: ``_lines`` (a file cut short is said so first)


def _lines(path: str, data: bytes, entry: dict[str, Any]) -> list[tuple[int, str]]:
    """The lines of a JSON Lines file, numbered from 1; a file cut short (its last line has no end),
    one of another length than the manifest says, or one that is not UTF-8 is refused."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise Where(path, data[:e.start].count(b"\n") + 1).error("not UTF-8") from None
    lines = text.split("\n")
    if lines[-1] != "":
        raise Where(path, len(lines)).error("truncated: its last line has no end (a file cut short?)")
    lines.pop()
    records = entry.get("records")
    if records != len(lines):
        raise Where(path).error(f"holds {len(lines)} records, the manifest says {records!r} (truncated?)")
    if checksum(data) != entry["sha256"]:
        raise Where(path).error("its checksum does not match the manifest (changed after the export?)")
    return list(enumerate(lines, 1))


def _check_counts(b: Bundle) -> None:
    have = {"episodes": len(b.episodes), "memories": len(b.memories), "places": len(b.places),
            "people": len({a[0] for a in b.aliases} | {n[1] for n in b.place_names}),
            "cursors": len(b.cursors), "kept_apart": len(b.kept_apart), "job_runs": len(b.job_runs),
            "documents": len(b.documents)}
    for key, n in have.items():
        if b.manifest["counts"].get(key) != n:
            said = b.manifest["counts"].get(key)
            raise Where(MANIFEST).error(f"counts {key} as {said!r}, the files hold {n}")


def _check_history(b: Bundle) -> None:
    """Each memory's root and the version it supersedes are memories of the bundle; each kept-apart
    pair names two."""
    ids = {m.id for m, _ in b.memories}
    for m, root in b.memories:
        at = b.at[("m", m.id or 0)]
        if root not in ids:
            raise at.error(f"memory {m.id}'s first version m{root} is not in the bundle")
        if m.supersedes is not None and m.supersedes not in ids:
            raise at.error(f"memory {m.id} supersedes m{m.supersedes}, which is not in the bundle")
    for a, c in b.kept_apart:
        if a not in ids or c not in ids:
            raise b.at[("k", (a, c))].error(f"the pair ({a}, {c}) names a memory not in the bundle")


def _check_sources(b: Bundle, episodes: set[int]) -> None:
    for m, _ in b.memories:
        for s in m.sources:
            if s not in episodes:
                raise b.at[("m", m.id or 0)].error(
                    f"source e{s} of memory {m.id} is an episode not in the bundle")


# ---- writing ----------------------------------------------------------------------------------
async def import_bundle(engram: Kernel, folder: Path, *, merge: bool = False,
                        progress: Progress | None = None) -> ImportReport:
    """Import the bundle in ``folder`` into ``engram``'s store: an empty one, or with ``merge`` one that
    is not (see the module's docstring). Everything is checked first; one transaction writes it."""
    b = await asyncio.to_thread(read_bundle, folder, progress)  # off the event loop
    store = engram.store
    counts = await store.counts()
    held = counts["episodes"] + counts["memories"] + counts["archived"] + counts["superseded"]
    report = ImportReport(b.folder)
    data_folder = Path(store.path).parent
    if held and not merge:
        raise BundleError(f"the store {store.path} is not empty ({counts['episodes']} lines, "
                          f"{held - counts['episodes']} memory rows): import into a new store, or add "
                          "--merge to merge the bundle into it; nothing was imported",
                          code="bundle_not_empty", path=store.path)
    superseded: list[tuple[int, int, Any]] = []
    if merge:
        episodes, memories, kept_apart, superseded = await _merge_plan(engram, b, report)
    else:
        _check_sources(b, {e.id for e in b.episodes if e.id is not None})
        episodes, memories, kept_apart = b.episodes, b.memories, b.kept_apart
    documents = []
    for rel, data in b.documents:
        target = data_folder / rel
        if target.is_file():
            if target.read_bytes() != data:
                if not merge:
                    raise Where(f"{DOCUMENTS}/{rel}").error(
                        f"{target} exists with other text: it is not overwritten (add --merge to keep it)")
                report.documents_kept += 1
            continue
        documents.append((target, data))
    jobs = await store.job_runs() if merge else {}
    if progress:
        progress("write", 0, len(episodes) + len(memories))
    prepared = await _prepare(episodes)
    try:
        async with store.transaction() as tx:
            await tx.restore_episodes(episodes, prepared)
            await tx.restore_memories(memories)
            await tx.restore_superseded(superseded)
            await tx.restore_names(b.aliases, b.place_names, b.titles)
            for a, c in kept_apart:
                await tx.keep_apart([a, c])
            for name, value in b.cursors:
                if not merge or value > await tx.cursor(name):
                    await tx.set_cursor(name, value)
            for job, record in b.job_runs:
                if job not in jobs:
                    await tx.save_job_run(job, record)
    except StoreError as e:
        if e.code not in ("restore_conflict", "restore_out_of_order"):
            raise
        ep = next(x for x in episodes if (x.place, x.seq) == (e.values["place"], e.values["seq"]))
        clash = ("holds another line at" if e.code == "restore_conflict" else
                f"has lines whose ids do not rise with their numbers around line {ep.id} at")
        raise b.at[("e", ep.id)].error(
            f"the store {clash} sequence number {ep.seq} of {ep.place!r}: the bundle is from "
            "another store's history (import it into an empty store)") from None
    for target, data in documents:
        atomic_write(target, data)
    if episodes or memories:
        engram.indexer.kick()  # embedded in the background, as new lines are
    if progress:
        progress("write", len(episodes) + len(memories), len(episodes) + len(memories))
    report.added = {"episodes": len(episodes), "memories": len(memories), "documents": len(documents)}
    return report


async def _merge_plan(engram: Kernel, b: Bundle, report: ImportReport
                      ) -> tuple[list[Episode], list[tuple[Memory, int]], list[tuple[int, int]],
                                 list[tuple[int, int, Any]]]:
    """What a merge writes: the lines the store lacks and never had (an id it erased stays erased);
    a line whose id the store holds with other content is refused, naming it."""
    store = engram.store
    erased = await store.cursors("erased:")
    erased_e, erased_m = erased.get("erased:episodes", 0), erased.get("erased:memories", 0)
    have_e: dict[int, Episode] = {}
    for chunk in _chunks([e.id for e in b.episodes if e.id is not None]):
        have_e.update(await store.get_episodes(chunk))
    new_e = []
    for ep in b.episodes:
        assert ep.id is not None
        old = have_e.get(ep.id)
        if old is not None:
            if (old.place, old.seq, old.time, old.content, old.actor, old.kind) != \
                    (ep.place, ep.seq, ep.time, ep.content, ep.actor, ep.kind):
                raise b.at[("e", ep.id)].error(
                    f"the store's episode {ep.id} is another line: the bundle is from another store's "
                    "history (import it into an empty store)")
            report.already += 1
        elif ep.id <= erased_e:
            report.forgotten += 1
        else:
            new_e.append(ep)
    known_e = set(have_e) | {e.id for e in new_e if e.id is not None}
    missing = sorted({s for m, _ in b.memories for s in m.sources} - known_e)
    for chunk in _chunks(missing):  # cited lines the bundle does not hold but the store may
        known_e |= set(await store.get_episodes(chunk))

    have_m: dict[int, Memory] = {}
    for chunk in _chunks([m.id for m, _ in b.memories if m.id is not None]):
        have_m.update(await store.get_memories(chunk))
    new_m: list[tuple[Memory, int]] = []
    superseded = []  # active here, superseded in the bundle (a newer version of it came later)
    known_m = set(have_m)
    for m, root in b.memories:
        assert m.id is not None
        had = have_m.get(m.id)
        if had is not None:
            if (had.text, had.kind, had.created_at) != (m.text, m.kind, m.created_at):
                raise b.at[("m", m.id)].error(
                    f"the store's memory {m.id} is another memory: the bundle is from another store's "
                    "history (import it into an empty store)")
            report.already += 1
            if m.status == "superseded" and had.status != "superseded":
                superseded.append((m.id, root, m.valid_to))
        elif m.id <= erased_m or root not in known_m | {m.id} \
                or (m.supersedes is not None and m.supersedes not in known_m):
            report.forgotten += 1  # forgotten here, or its history was
        else:
            new_m.append((replace(m, sources=tuple(s for s in m.sources if s in known_e)), root))
            known_m.add(m.id)
    pairs = [(a, c) for a, c in b.kept_apart if a in known_m and c in known_m]
    return new_e, new_m, pairs, superseded


async def _prepare(episodes: Sequence[Episode]) -> list[tuple[str, int]] | None:
    """Each episode's ``prepare_episode``, worked out on every core for a large import (None: the store
    works them out as it writes, for a small one). The same words in any process: the tokenizer and
    the stemmer hold no state of the process."""
    workers = min(os.cpu_count() or 1, 4)
    if len(episodes) < PARALLEL_FROM or workers < 2:
        return None
    loop = asyncio.get_running_loop()
    # spawn: a fork of a process running threads (aiosqlite's) may copy a held lock
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        parts = await asyncio.gather(*[
            loop.run_in_executor(pool, _prepare_chunk, list(episodes[i:i + PARALLEL_CHUNK]))
            for i in range(0, len(episodes), PARALLEL_CHUNK)])
    return [p for part in parts for p in part]


def _prepare_chunk(episodes: list[Episode]) -> list[tuple[str, int]]:
    return [prepare_episode(e) for e in episodes]


def _chunks(ids: list[int]) -> list[list[int]]:
    return [ids[i:i + CHUNK] for i in range(0, len(ids), CHUNK)]
