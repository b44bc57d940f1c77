"""The counts the writer keeps beside the episodes (migration m011's triggers) for the dashboard's
overview and graph, and the check that they equal a count of the episodes themselves."""

from __future__ import annotations

import aiosqlite

from .codec import fetch_rows

# an episode's day in its own zone (capped as migration m011 caps it: date() ends at 9999-12-31)
DAY = "date(min(time + tz * 60, 253402300799), 'unixepoch')"

# each summary table and what it holds, counted from the episodes directly (a full scan: checks only)
COUNTED: dict[str, tuple[str, str]] = {
    "episode_days": ("SELECT day, n FROM episode_days",
                     f"SELECT {DAY} AS day, count(*) FROM episodes GROUP BY day"),
    "place_counts": ("SELECT space, n FROM place_counts",
                     "SELECT space, count(*) FROM episodes GROUP BY space"),
    "speaker_counts": ("SELECT actor, n FROM speaker_counts",
                       "SELECT actor, count(*) FROM episodes WHERE actor != '' GROUP BY actor"),
    "talk_pairs": ("SELECT a, b, n FROM talk_pairs",
                   "SELECT min(x, y), max(x, y), count(*) FROM (SELECT actor AS x, lag(actor) OVER"
                   " (PARTITION BY space ORDER BY seq) AS y FROM episodes WHERE actor != '')"
                   " WHERE y IS NOT NULL AND x != y GROUP BY 1, 2"),
}


async def check(db: aiosqlite.Connection) -> list[str]:
    """One line per summary table that differs from a count of the episodes (empty when they agree)."""
    problems = []
    for table, (kept, counted) in COUNTED.items():
        one_way = "SELECT count(*) FROM (SELECT * FROM ({}) EXCEPT SELECT * FROM ({}))"
        sql = f"SELECT ({one_way.format(kept, counted)}) + ({one_way.format(counted, kept)})"  # one snapshot
        n = (await fetch_rows(db, sql))[0][0]
        if n:
            problems.append(f"{table}: {n} rows differ from a count of the episodes")
    return problems
