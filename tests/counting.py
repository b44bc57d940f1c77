"""What the dashboard's overview and graph should show, counted in Python from every row of the
episodes table (an oracle independent of the store's SQL and of the counts it keeps)."""

from __future__ import annotations

import sqlite3
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path


@dataclass
class Counted:
    episodes: int
    per_day: dict[str, int]
    places: dict[str, tuple[int, float]]  # space -> (episodes, time of the last one)
    speakers: dict[str, int]
    talks: dict[tuple[str, str], int]  # (person, person) in order -> turns


def count_episodes(path: Path) -> Counted:
    db = sqlite3.connect(path)
    try:
        rows = db.execute("SELECT time, tz, space, seq, actor FROM episodes").fetchall()
    finally:
        db.close()
    last = datetime(9999, 12, 31, 23, 59, 59, tzinfo=timezone.utc).timestamp()  # datetime.max rounds past it
    per_day = Counter(datetime.fromtimestamp(min(t + tz * 60, last), timezone.utc).date().isoformat()
                      for t, tz, _, _, _ in rows)
    places: dict[str, tuple[int, float]] = {}
    for t, _, place, _, _ in rows:
        n, last = places.get(place, (0, float("-inf")))
        places[place] = (n + 1, max(last, t))
    speakers = Counter(actor for *_, actor in rows if actor)
    talks: Counter[tuple[str, str]] = Counter()
    for place in places:
        said = [actor for _, _, s, _, actor in sorted(rows, key=lambda r: r[3]) if s == place and actor]
        for a, b in zip(said, said[1:]):
            if a != b:
                talks[(min(a, b), max(a, b))] += 1
    return Counted(len(rows), dict(per_day), places, dict(speakers), dict(talks))
