"""The bundle's layout and each record's line (``SPEC.md``): one JSON object a line, keys in a fixed
order, UTF-8 as it is (no ``\\u`` escapes), times in ISO 8601 with their zone; and the checks a line
read back must pass, each failing with the file and line it is on (``BundleError``).

Writing a record and reading it back give the same record, and writing it again the same bytes: that
is what makes an export, imported and exported again, byte-identical.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

from ..errors import BundleError, InvalidScopeError
from ..model import EPISODE_KINDS, MEMORY_KINDS, MEMORY_STATUSES, Episode, Memory
from ..scopes import parse_scope

FORMAT = "engram-bundle"
FORMAT_VERSION = 1  # bump it with any change of what a line holds or where it is (tests/bundle/golden)
MANIFEST = "manifest.json"
EPISODES = "episodes"  # episodes/<place>/<YYYY-MM>.jsonl
MEMORIES, PLACES, PEOPLE = "memories.jsonl", "places.jsonl", "people.jsonl"
CURSORS, KEPT_APART, JOB_RUNS = "cursors.jsonl", "kept_apart.jsonl", "job_runs.jsonl"
DOCUMENTS = "documents"  # the data folder's identity/ and diary/, byte for byte
DOCUMENT_FOLDERS = ("identity", "diary")  # an import writes nothing else into the data folder
TABLES = (MEMORIES, PLACES, PEOPLE, CURSORS, KEPT_APART, JOB_RUNS)


# ---- where things go --------------------------------------------------------------------------
def place_folder(place: str) -> str:
    """A place's folder under ``episodes/``: its name with what a file name cannot hold replaced, and
    a short hash of the whole name (two places that differ only there stay apart)."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", place)[:60].strip(".") or "_"
    return f"{safe}-{hashlib.sha256(place.encode('utf-8')).hexdigest()[:8]}"


def episode_file(ep: Episode) -> str:
    """The file an episode's line is in: its place's folder and the month of its own (local) time."""
    assert ep.time is not None
    return f"{EPISODES}/{place_folder(ep.place)}/{ep.time.strftime('%Y-%m')}.jsonl"


def line(record: dict[str, Any]) -> str:
    """One record as its line (with the newline)."""
    return json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n"


def checksum(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def iso(t: datetime | None) -> str | None:
    return None if t is None else t.isoformat()


def utc_iso(seconds: float | None) -> str | None:
    """A time the store keeps as seconds since 1970 (no zone of its own), as ISO 8601 in UTC."""
    return None if seconds is None else datetime.fromtimestamp(seconds, timezone.utc).isoformat()


# ---- records as lines -------------------------------------------------------------------------
def episode_record(ep: Episode) -> dict[str, Any]:
    return {"id": ep.id, "place": ep.place, "seq": ep.seq, "section": ep.section, "time": iso(ep.time),
            "kind": ep.kind, "actor": ep.actor, "actor_name": ep.actor_name, "source": ep.source,
            "content": ep.content, "meta": ep.meta}


def memory_record(m: Memory, root: int) -> dict[str, Any]:
    return {"id": m.id, "root": root, "supersedes": m.supersedes, "status": m.status, "kind": m.kind,
            "scope": m.scope, "text": m.text, "subjects": list(m.subjects), "sources": list(m.sources),
            "importance": m.importance, "strength": m.strength, "created_at": iso(m.created_at),
            "valid_from": iso(m.valid_from), "valid_to": iso(m.valid_to),
            "last_recalled": iso(m.last_recalled)}


# ---- reading lines back, checked ---------------------------------------------------------------
class Where:
    """A file and line being read, for the errors that name them."""

    def __init__(self, path: str, number: int = 0):
        self.path, self.number = path, number

    def error(self, what: str) -> BundleError:
        at = f"{self.path}:{self.number}" if self.number else self.path
        return BundleError(f"{at}: {what}; nothing was imported", file=self.path, line=self.number,
                           problem=what)


def parse_line(text: str, at: Where) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError as e:
        raise at.error(f"not a valid JSON line ({e.args[0] if e.args else e})") from None
    if not isinstance(value, dict):
        raise at.error("a line must be a JSON object")
    return value


def _get(d: dict[str, Any], key: str, kind: type | tuple[type, ...], at: Where, *, null: bool = False) -> Any:
    if key not in d:
        raise at.error(f"no {key!r}")
    v = d[key]
    if v is None and null:
        return None
    if not isinstance(v, kind) or (isinstance(v, bool) and kind in (int, float, (int, float))):
        raise at.error(f"{key!r} is {v!r}, not a {getattr(kind, '__name__', 'number')}")
    return v


def _id(d: dict[str, Any], key: str, at: Where, *, null: bool = False) -> int | None:
    v = _get(d, key, int, at, null=null)
    if v is not None and not 0 < v < 2**63:
        raise at.error(f"{key!r} is {v}, not an id (a whole number from 1)")
    return v  # type: ignore[no-any-return]


def _time(d: dict[str, Any], key: str, at: Where, *, null: bool = False) -> datetime | None:
    v = _get(d, key, str, at, null=null)
    if v is None:
        return None
    try:
        t = datetime.fromisoformat(v)
    except ValueError:
        raise at.error(f"{key!r} is {v!r}, not an ISO 8601 time") from None
    if t.tzinfo is None:
        raise at.error(f"{key!r} is {v!r}, a time without its zone")
    return t


def _texts(d: dict[str, Any], key: str, at: Where) -> list[str]:
    v = _get(d, key, list, at)
    if not all(isinstance(x, str) for x in v):
        raise at.error(f"{key!r} must be a list of strings")
    return v  # type: ignore[no-any-return]


def _scope(d: dict[str, Any], at: Where) -> str:
    v = _get(d, "scope", str, at)
    try:
        scope = parse_scope(v)
    except InvalidScopeError:
        raise at.error(f"unknown scope {v!r} (public, self, owner or space:<place>)") from None
    if scope != v:
        raise at.error(f"scope {v!r} is not written as the store keeps it ({scope!r})")
    return scope


def _number(d: dict[str, Any], key: str, at: Where) -> float:
    v = _get(d, key, (int, float), at)
    return float(v)


def read_episode(d: dict[str, Any], at: Where) -> Episode:
    kind = _get(d, "kind", str, at)
    if kind not in EPISODE_KINDS:
        raise at.error(f"unknown episode kind {kind!r}")
    place = _get(d, "place", str, at)
    if not place.strip() or place != place.strip():
        raise at.error(f"place {place!r} is empty or has spaces around it")
    content = _get(d, "content", str, at)
    seq, section = _get(d, "seq", int, at), _get(d, "section", int, at)
    if seq < 1 or section < 0:
        raise at.error("'seq' must be 1 or more and 'section' 0 or more")
    return Episode(id=_id(d, "id", at), place=place, seq=seq, section=section, time=_time(d, "time", at),
                   kind=kind, actor=_get(d, "actor", str, at), actor_name=_get(d, "actor_name", str, at),
                   source=_get(d, "source", str, at), content=content, meta=_get(d, "meta", dict, at))


def read_memory(d: dict[str, Any], at: Where) -> tuple[Memory, int]:
    kind, status = _get(d, "kind", str, at), _get(d, "status", str, at)
    if kind not in MEMORY_KINDS:
        raise at.error(f"unknown memory kind {kind!r}")
    if status not in MEMORY_STATUSES:
        raise at.error(f"unknown memory status {status!r}")
    sources = _get(d, "sources", list, at)
    if not all(isinstance(s, int) and not isinstance(s, bool) and 0 < s < 2**63 for s in sources):
        raise at.error("'sources' must be a list of episode ids")
    created = _time(d, "created_at", at)
    m = Memory(id=_id(d, "id", at), supersedes=_id(d, "supersedes", at, null=True), status=status, kind=kind,
               scope=_scope(d, at), text=_get(d, "text", str, at), subjects=tuple(_texts(d, "subjects", at)),
               sources=tuple(sources), importance=_number(d, "importance", at),
               strength=_number(d, "strength", at), created_at=created,
               valid_from=_time(d, "valid_from", at, null=True), valid_to=_time(d, "valid_to", at, null=True),
               last_recalled=_time(d, "last_recalled", at, null=True))
    root = _id(d, "root", at)
    assert root is not None
    return m, root


def read_place(d: dict[str, Any], at: Where) -> tuple[str, str, float | None]:
    seen = _time(d, "title_seen", at, null=True)
    return _get(d, "place", str, at), _get(d, "title", str, at), None if seen is None else seen.timestamp()


def read_person(d: dict[str, Any], at: Where) -> tuple[list[tuple[str, str, float, float]],
                                                        list[tuple[str, str, str, float]]]:
    person = _get(d, "person", str, at)
    aliases, names = [], []
    for a in _get(d, "aliases", list, at):
        if not isinstance(a, dict):
            raise at.error("each of 'aliases' must be an object")
        first, last = _time(a, "first_seen", at), _time(a, "last_seen", at)
        assert first is not None and last is not None
        aliases.append((person, _get(a, "alias", str, at), first.timestamp(), last.timestamp()))
    for n in _get(d, "names", list, at):
        if not isinstance(n, dict):
            raise at.error("each of 'names' must be an object")
        last = _time(n, "last_seen", at)
        assert last is not None
        names.append((_get(n, "place", str, at), person, _get(n, "name", str, at), last.timestamp()))
    return aliases, names


def read_cursor(d: dict[str, Any], at: Where) -> tuple[str, int]:
    return _get(d, "name", str, at), _get(d, "value", int, at)


def read_pair(d: dict[str, Any], at: Where) -> tuple[int, int]:
    a, b = _id(d, "a", at), _id(d, "b", at)
    assert a is not None and b is not None
    if not a < b:
        raise at.error("a kept-apart pair is written smaller id first")
    return a, b


def read_job_run(d: dict[str, Any], at: Where) -> tuple[str, dict[str, Any]]:
    return _get(d, "job", str, at), _get(d, "record", dict, at)


Reader = Callable[[dict[str, Any], Where], Any]
