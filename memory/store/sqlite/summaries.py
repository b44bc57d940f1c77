"""The counts the writer keeps beside the episodes (migration m011's triggers) for the dashboard's
overview and graph, and the check that they equal a count of the episodes themselves."""

from __future__ import annotations

import aiosqlite

from .codec import fetch_rows

# an episode's day in its own zone (capped as migration m011 caps it: date() ends at 9999-12-31)
DAY = "date(min(time + tz * 60, 253402300799), 'unixepoch')"

# A batch of new episodes (ids ?1 to ?2, each place's appended after its last) counted by one statement
# a table, its rows' own triggers held off by the cursor BATCH_CURSOR (migration m016): the same
# numbers m011's triggers give, row by row, for lines that each follow their place's last. Its speaker
# and talk-pair counts are appended to the tables "_later" (migration m017) rather than upserted: 64
# lines dirtied ~90 pages of the two totals at a million episodes, appended rows one or two. They are
# folded into the totals (FOLD) every FOLD_SPAN ids and before an erase (whose triggers count the totals
# down). The integrity check sums both (SPEAKER_TOTALS, PAIR_TOTALS); the dashboard's reads add only
# the rows beside to the totals' own (SPEAKERS_LATER, PAIR_COUNT, TOP_PAIRS).
BATCH_CURSOR = "batchcounts"  # no ':' in it: an erased place's cursors never match
BATCH_ON = f"INSERT OR REPLACE INTO cursors VALUES ('{BATCH_CURSOR}', 1)"
BATCH_OFF = f"DELETE FROM cursors WHERE name = '{BATCH_CURSOR}'"
_NEW = "FROM episodes WHERE id BETWEEN ?1 AND ?2"
BATCH_COUNTS = (
    f"INSERT INTO episode_days SELECT {DAY} AS d, count(*) {_NEW} GROUP BY d"
    " ON CONFLICT(day) DO UPDATE SET n = n + excluded.n",
    f"INSERT INTO place_counts SELECT space, count(*) {_NEW} GROUP BY space"
    " ON CONFLICT(space) DO UPDATE SET n = n + excluded.n",
    f"INSERT INTO speaker_counts_later(actor, n) SELECT actor, count(*) {_NEW} AND actor != ''"
    " GROUP BY actor",
    # each new line said by someone with the line said before it in its place (the batch's own, or
    # its place's last speaker before the batch), as m011's pairs count them
    "INSERT INTO talk_pairs_later(a, b, n) SELECT min(x, y), max(x, y), count(*) FROM (SELECT id, actor AS x,"
    " lag(actor) OVER (PARTITION BY space ORDER BY seq) AS y FROM ("
    f"SELECT id, space, seq, actor {_NEW} AND actor != '' UNION ALL"
    " SELECT e.id, e.space, e.seq, e.actor FROM (SELECT space, min(seq) AS s"
    f" {_NEW} GROUP BY space) p JOIN episodes e ON e.id = (SELECT id FROM episodes WHERE space = p.space"
    " AND seq < p.s AND actor != '' ORDER BY seq DESC LIMIT 1)))"
    " WHERE id BETWEEN ?1 AND ?2 AND y IS NOT NULL AND x != y GROUP BY 1, 2",
)
FOLD_SPAN = 1 << 14  # a batch whose ids reach a multiple of this folds the rows appended so far
FOLD = (
    "INSERT INTO speaker_counts SELECT actor, sum(n) FROM speaker_counts_later GROUP BY actor"
    " ON CONFLICT(actor) DO UPDATE SET n = n + excluded.n",
    "DELETE FROM speaker_counts_later",
    "INSERT INTO talk_pairs SELECT a, b, sum(n) FROM talk_pairs_later GROUP BY a, b"
    " ON CONFLICT(a, b) DO UPDATE SET n = n + excluded.n",
    "DELETE FROM talk_pairs_later",
)
SPEAKER_TOTALS = ("(SELECT actor, sum(n) AS n FROM (SELECT actor, n FROM speaker_counts UNION ALL"
                  " SELECT actor, n FROM speaker_counts_later) GROUP BY actor)")
PAIR_TOTALS = ("(SELECT a, b, sum(n) AS n FROM (SELECT a, b, n FROM talk_pairs UNION ALL"
               " SELECT a, b, n FROM talk_pairs_later) GROUP BY a, b)")
# What the dashboard reads without summing every total (at a million: ~140,000 pairs, ~90 ms a sum):
# the rows beside, summed per speaker (few: at most a span's)
SPEAKERS_LATER = "(SELECT actor, sum(n) AS n FROM speaker_counts_later GROUP BY actor)"
# the number of pairs: the totals' rows and the pairs only the rows beside hold
PAIR_COUNT = ("SELECT (SELECT count(*) FROM talk_pairs) + (SELECT count(*) FROM (SELECT DISTINCT a, b"
              " FROM talk_pairs_later l WHERE NOT EXISTS (SELECT 1 FROM talk_pairs t WHERE t.a = l.a"
              " AND t.b = l.b)))")
# the ? pairs with the most turns (n DESC, a, b): among the totals' first ? in that order and the pairs
# the rows beside add to (a pair neither holds has no more turns than each of those first ?)
TOP_PAIRS = ("SELECT a, b, sum(n) AS n FROM (SELECT a, b, n FROM talk_pairs WHERE (a, b) IN (SELECT a, b"
             " FROM talk_pairs ORDER BY n DESC, a, b LIMIT ?) OR (a, b) IN (SELECT a, b"
             " FROM talk_pairs_later) UNION ALL SELECT a, b, n FROM talk_pairs_later) GROUP BY a, b"
             " ORDER BY n DESC, a, b LIMIT ?")


def folds(first: int, last: int) -> bool:
    """Whether the batch of ids ``first`` to ``last`` folds the counts appended so far (``FOLD``)."""
    return first // FOLD_SPAN != (last + 1) // FOLD_SPAN


# each summary table and what it holds, counted from the episodes directly (a full scan: checks only)
COUNTED: dict[str, tuple[str, str]] = {
    "episode_days": ("SELECT day, n FROM episode_days",
                     f"SELECT {DAY} AS day, count(*) FROM episodes GROUP BY day"),
    "place_counts": ("SELECT space, n FROM place_counts",
                     "SELECT space, count(*) FROM episodes GROUP BY space"),
    "speaker_counts": (f"SELECT actor, n FROM {SPEAKER_TOTALS}",
                       "SELECT actor, count(*) FROM episodes WHERE actor != '' GROUP BY actor"),
    "talk_pairs": (f"SELECT a, b, n FROM {PAIR_TOTALS}",
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
