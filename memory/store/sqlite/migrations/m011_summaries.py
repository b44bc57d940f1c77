"""m011: the counts kept beside the episodes (per day, place, speaker and who answers whom),
kept by triggers (with its frozen copy of the schema)."""

from __future__ import annotations

import aiosqlite

from .base import migration, run_script


@migration
async def m011_episode_summaries(db: aiosqlite.Connection) -> None:
    """Counts the dashboard's overview and graph read instead of scanning every episode: episodes per
    day (in each episode's own zone), per place and per speaker, and who answers whom (consecutive
    lines by two people in one place, in sequence order, lines without a speaker left out), with each
    place's episodes by time (its last one is a seek).

    Triggers on ``episodes`` keep them in the same transaction as the write, so a crash leaves both or
    neither; a row whose count falls to zero is deleted (an erased place, day or person leaves no
    trace). Episodes are append-only: a later migration that lifts the guard to change a row's time,
    place, sequence number or speaker must fill these again (``summaries.check`` finds a difference).
    SQL only: it computes nothing with the live code.
    """
    await run_script(db, _M011_SCHEMA)


# the line before / after a row in its place said by someone, as a one-row source of column x / y
# (a source, not a scalar subquery: SQLite would look it up once for each time the column is used)
_M011_PREV = ("(SELECT actor AS {c} FROM episodes WHERE space = {r}.space AND seq < {r}.seq AND actor != ''"
              " ORDER BY seq DESC LIMIT 1)")
_M011_NEXT = ("(SELECT actor AS {c} FROM episodes WHERE space = {r}.space AND seq > {r}.seq AND actor != ''"
              " ORDER BY seq LIMIT 1)")


def _m011_pair(x: str, y: str, step: int) -> str:
    """Add ``step`` to the pair of sources x and y when both have a line and are not the same person;
    a pair at zero goes."""
    pair = f"SELECT min(x, y) AS a, max(x, y) AS b FROM {x}, {y} WHERE x != y"
    if step > 0:
        return (f"INSERT INTO talk_pairs(a, b, n) SELECT a, b, 1 FROM ({pair}) WHERE true"
                " ON CONFLICT(a, b) DO UPDATE SET n = n + 1;\n")
    return (f"UPDATE talk_pairs SET n = n - 1 WHERE (a, b) IN ({pair});\n"
            f"DELETE FROM talk_pairs WHERE n <= 0 AND (a, b) IN ({pair});\n")


# an episode's day in its own zone; its local time capped at the last second SQLite's dates reach
# (datetime.max's microseconds round past it as a float, and date() would give NULL)
_M011_DAY = "date(min({r}time + {r}tz * 60, 253402300799), 'unixepoch')"


def _m011_schema() -> str:
    day, new_day, old_day = (_M011_DAY.format(r=r) for r in ("", "NEW.", "OLD."))
    prev_n, next_n = _M011_PREV.format(r="NEW", c="x"), _M011_NEXT.format(r="NEW", c="y")
    prev_o, next_o = _M011_PREV.format(r="OLD", c="x"), _M011_NEXT.format(r="OLD", c="y")
    new_x, new_y, old_x, old_y = ("(SELECT NEW.actor AS x)", "(SELECT NEW.actor AS y)",
                                  "(SELECT OLD.actor AS x)", "(SELECT OLD.actor AS y)")
    # a line between two others parts them and talks with each (a line is nearly always the last one
    # of its place: the check for a next one is one seek); a line taken out joins them again
    between = _m011_pair(prev_n, next_n, -1) + _m011_pair(new_x, next_n, 1)
    unsaid = _m011_pair(prev_o, old_y, -1) + _m011_pair(old_x, next_o, -1) + _m011_pair(prev_o, next_o, 1)
    return f"""
        CREATE INDEX episodes_space_time ON episodes(space, time);
        CREATE TABLE episode_days (day TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE place_counts (space TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE speaker_counts (actor TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE talk_pairs (a TEXT NOT NULL, b TEXT NOT NULL, n INTEGER NOT NULL,
                                 PRIMARY KEY (a, b)) WITHOUT ROWID;

        INSERT INTO episode_days SELECT {day} AS day, count(*) FROM episodes GROUP BY day;
        INSERT INTO place_counts SELECT space, count(*) FROM episodes GROUP BY space;
        INSERT INTO speaker_counts SELECT actor, count(*) FROM episodes WHERE actor != '' GROUP BY actor;
        INSERT INTO talk_pairs SELECT min(x, y), max(x, y), count(*) FROM (SELECT actor AS x, lag(actor)
            OVER (PARTITION BY space ORDER BY seq) AS y FROM episodes WHERE actor != '')
            WHERE y IS NOT NULL AND x != y GROUP BY 1, 2;

        CREATE TRIGGER episodes_counted AFTER INSERT ON episodes BEGIN
            INSERT INTO episode_days VALUES ({new_day}, 1) ON CONFLICT(day) DO UPDATE SET n = n + 1;
            INSERT INTO place_counts VALUES (NEW.space, 1) ON CONFLICT(space) DO UPDATE SET n = n + 1;
        END;
        CREATE TRIGGER episodes_uncounted AFTER DELETE ON episodes BEGIN
            UPDATE episode_days SET n = n - 1 WHERE day = {old_day};
            DELETE FROM episode_days WHERE day = {old_day} AND n <= 0;
            UPDATE place_counts SET n = n - 1 WHERE space = OLD.space;
            DELETE FROM place_counts WHERE space = OLD.space AND n <= 0;
        END;
        CREATE TRIGGER episodes_said AFTER INSERT ON episodes WHEN NEW.actor != '' BEGIN
            INSERT INTO speaker_counts VALUES (NEW.actor, 1) ON CONFLICT(actor) DO UPDATE SET n = n + 1;
            {_m011_pair(prev_n, new_y, 1)}
        END;
        CREATE TRIGGER episodes_said_between AFTER INSERT ON episodes WHEN NEW.actor != ''
            AND EXISTS (SELECT 1 FROM episodes WHERE space = NEW.space AND seq > NEW.seq) BEGIN
            {between}
        END;
        CREATE TRIGGER episodes_unsaid AFTER DELETE ON episodes WHEN OLD.actor != '' BEGIN
            UPDATE speaker_counts SET n = n - 1 WHERE actor = OLD.actor;
            DELETE FROM speaker_counts WHERE actor = OLD.actor AND n <= 0;
            {unsaid}
        END;
        """


_M011_SCHEMA = _m011_schema()
