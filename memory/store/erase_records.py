"""The erase list's records, the same in a file beside a SQLite store (``memory/backups.py``) and in
a PostgreSQL database's ``erase_list`` table: a first record holding the list's salt, then one record
per forget, the episode and memory ids (never given out again, so an id names one line forever) and
the people and places forgotten as salted SHA-256 hashes (no name, no text, no plain id: a hash can
only confirm a guess). A restore applies every record to the backup before it takes the store's place."""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any


def new_salt() -> str:
    return secrets.token_hex(16)


def salt_record(salt: str) -> str:
    return json.dumps({"erase_list": 1, "salt": salt})


def hashed(salt: str, key: str) -> str:
    return hashlib.sha256(f"{salt}\0{key}".encode("utf-8", "surrogatepass")).hexdigest()


def erase_record(salt: str, episodes: Sequence[int], memories: Sequence[int], people: Sequence[str],
                 places: Sequence[str]) -> str:
    """One forget as a record (a line of JSON)."""
    return json.dumps({"episodes": sorted(set(episodes)), "memories": sorted(set(memories)),
                       "people": sorted({hashed(salt, p) for p in people}),
                       "places": sorted({hashed(salt, p) for p in places})})


@dataclass
class EraseList:
    episodes: set[int] = field(default_factory=set)
    memories: set[int] = field(default_factory=set)
    people: set[str] = field(default_factory=set)  # salted hashes
    places: set[str] = field(default_factory=set)
    salt: str = ""


def parse_records(records: Iterable[str]) -> EraseList:
    """The list the records make: the first holds the salt; a record cut by a kill is skipped."""
    out = EraseList()
    for i, line in enumerate(records):
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if not isinstance(rec, dict):
            continue
        if i == 0:
            out.salt = str(rec.get("salt", ""))
            continue
        out.episodes |= _ids(rec.get("episodes", []))
        out.memories |= _ids(rec.get("memories", []))
        out.people.update(str(x) for x in rec.get("people", []))
        out.places.update(str(x) for x in rec.get("places", []))
    return out


def _ids(items: list[Any]) -> set[int]:
    """Ids as noted: each a number, or a run ``[first, last]`` (a compacted list)."""
    out: set[int] = set()
    for x in items:
        if isinstance(x, list) and len(x) == 2:
            out.update(range(int(x[0]), int(x[1]) + 1))
        else:
            out.add(int(x))
    return out
