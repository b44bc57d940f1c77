"""Schema migrations: named functions, applied in order, each recorded by name in its own transaction.

A migration is frozen once released: whatever it computes, it computes with its own copy of the
code (below each one), so changing the live code later never changes what an old migration does.
The checks run before a file is touched (a foreign or newer file is refused) are in ``opening.py``.
"""

from __future__ import annotations

import logging
import re
import sqlite3
from collections.abc import Awaitable, Callable

import aiosqlite

from ...text import episode_words, has_cjk, words
from .codec import EPISODE_COLUMNS, episode_row
from .keywords import keyed_words

log = logging.getLogger("engram.store")

Migration = Callable[[aiosqlite.Connection], Awaitable[None]]
MIGRATIONS: list[tuple[str, Migration]] = []


def migration(fn: Migration) -> Migration:
    """Register ``fn`` as the next migration; its name is what the store records."""
    MIGRATIONS.append((fn.__name__, fn))
    return fn


async def run_script(db: aiosqlite.Connection, script: str) -> None:
    """Run statements one by one (``executescript`` would commit the open transaction)."""
    stmt = ""
    for line in script.splitlines(keepends=True):
        stmt += line
        if sqlite3.complete_statement(stmt):
            await db.execute(stmt)
            stmt = ""
    if stmt.strip():
        raise ValueError(f"incomplete SQL statement in migration: {stmt!r}")


@migration
async def m001_core_tables(db: aiosqlite.Connection) -> None:
    await run_script(
        db,
        """
        CREATE TABLE episodes (
            id INTEGER PRIMARY KEY,
            time REAL NOT NULL,
            tz INTEGER NOT NULL DEFAULT 0,
            space TEXT NOT NULL,
            seq INTEGER NOT NULL,
            section INTEGER NOT NULL,
            source TEXT NOT NULL DEFAULT '',
            actor TEXT NOT NULL DEFAULT '',
            actor_name TEXT NOT NULL DEFAULT '',
            kind TEXT NOT NULL,
            content TEXT NOT NULL,
            meta TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX episodes_space_seq ON episodes(space, seq);
        CREATE TRIGGER episodes_append_only BEFORE UPDATE ON episodes
        BEGIN SELECT RAISE(ABORT, 'episodes are append-only'); END;

        CREATE TABLE memories (
            id INTEGER PRIMARY KEY,
            root INTEGER NOT NULL,
            kind TEXT NOT NULL,
            text TEXT NOT NULL,
            scope TEXT NOT NULL,
            subjects TEXT NOT NULL DEFAULT '[]',
            importance REAL NOT NULL DEFAULT 0.5,
            strength REAL NOT NULL DEFAULT 1.0,
            last_recalled REAL,
            created_at REAL NOT NULL,
            valid_from REAL,
            valid_to REAL,
            status TEXT NOT NULL DEFAULT 'active',
            supersedes INTEGER
        );
        CREATE INDEX memories_root ON memories(root);
        CREATE INDEX memories_scope ON memories(scope, status);

        CREATE TABLE sources (
            memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            episode_id INTEGER NOT NULL,
            PRIMARY KEY (memory_id, episode_id)
        ) WITHOUT ROWID;
        CREATE INDEX sources_episode ON sources(episode_id);

        CREATE TABLE vectors (
            model TEXT NOT NULL,
            kind TEXT NOT NULL,
            item INTEGER NOT NULL,
            vec BLOB NOT NULL,
            PRIMARY KEY (model, kind, item)
        ) WITHOUT ROWID;

        CREATE TABLE cursors (name TEXT PRIMARY KEY, value INTEGER NOT NULL);

        CREATE TABLE aliases (
            person TEXT NOT NULL,
            alias TEXT NOT NULL,
            first_seen REAL NOT NULL,
            last_seen REAL NOT NULL,
            PRIMARY KEY (person, alias)
        ) WITHOUT ROWID;

        CREATE VIRTUAL TABLE episodes_fts USING fts5(words, tokenize = 'unicode61 remove_diacritics 0');
        CREATE VIRTUAL TABLE memories_fts USING fts5(words, tokenize = 'unicode61 remove_diacritics 0');
        """
    )


@migration
async def m002_keyword_index_per_space(db: aiosqlite.Connection) -> None:
    """Each episode's index words carry its space's key, so a MATCH reads only that chat's lists.

    Without it every keyword recall scored the matches of all chats (~14k rows at 100k episodes)
    and then threw away the other chats' rows; see ``keywords.keyed_words``.
    """
    await run_script(
        db,
        """
        CREATE TABLE spaces (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
        INSERT INTO spaces(name) SELECT space FROM episodes GROUP BY space ORDER BY min(id);
        CREATE VIRTUAL TABLE episodes_kw USING fts5(words, tokenize = 'unicode61 remove_diacritics 0');
        """,
    )
    n = (await (await db.execute("SELECT count(*) FROM episodes")).fetchone())[0]  # type: ignore[index]
    if n:
        log.info("re-indexing the words of %d episodes per chat (once)", n)
    last = 0
    while True:
        rows = list(await db.execute_fetchall(
            "SELECT e.id, s.id, f.c0 FROM episodes e JOIN spaces s ON s.name = e.space"
            " JOIN episodes_fts_content f ON f.id = e.id WHERE e.id > ? ORDER BY e.id LIMIT 5000", (last,)))
        if not rows:
            break
        await db.executemany("INSERT INTO episodes_kw(rowid, words) VALUES (?, ?)",
                             [(i, _m002_keyed_words(w, key)) for i, key, w in rows])
        last = rows[-1][0]
    await db.execute("DROP TABLE episodes_fts")
    await db.execute("ALTER TABLE episodes_kw RENAME TO episodes_fts")


@migration
async def m003_episode_shape(db: aiosqlite.Connection) -> None:
    """Each episode's text shape (``text.text_shape`` as it was then), so recall's text features need
    no text.

    Episodes are append-only: the trigger that guards them is lifted for this one fill only.
    """
    await run_script(
        db,
        """
        ALTER TABLE episodes ADD COLUMN shape INTEGER NOT NULL DEFAULT 0;
        DROP TRIGGER episodes_append_only;
        """,
    )
    n = (await (await db.execute("SELECT count(*) FROM episodes")).fetchone())[0]  # type: ignore[index]
    if n:
        log.info("working out the text shape of %d episodes (once)", n)
    last = 0
    while rows := list(await db.execute_fetchall(
            "SELECT id, content FROM episodes WHERE id > ? ORDER BY id LIMIT 5000", (last,))):
        await db.executemany("UPDATE episodes SET shape = ? WHERE id = ?",
                             [(_m003_text_shape(text), i) for i, text in rows])
        last = rows[-1][0]
    await db.execute(APPEND_ONLY)


@migration
async def m004_empty_lines(db: aiosqlite.Connection) -> None:
    """Mark the episodes with no content of their own ("OK, noted", emoji) in their text shape
    (``text.EMPTY_SHAPE``); the same one-time lift of the append-only trigger as m003.

    Frozen but for the tokenizer: its copy of the shape and of the acknowledgement words is below;
    the words of a line come from ``text.words`` (a copy of jieba and the stemmer is not kept).
    """
    await db.execute("DROP TRIGGER episodes_append_only")
    n = (await (await db.execute("SELECT count(*) FROM episodes")).fetchone())[0]  # type: ignore[index]
    if n > 10_000:
        log.info("looking for lines without content of their own among %d episodes (once)", n)
    last = 0
    while rows := list(await db.execute_fetchall(
            "SELECT id, content, shape FROM episodes WHERE id > ? ORDER BY id LIMIT 5000", (last,))):
        changed = [(new, i) for i, text, old in rows if (new := _m004_text_shape(text)) != old]
        await db.executemany("UPDATE episodes SET shape = ? WHERE id = ?", changed)
        last = rows[-1][0]
    await db.execute(APPEND_ONLY)


def _m002_keyed_words(words: str, key: int) -> str:
    """m002's copy of ``keywords.keyed_words``: each word followed by U+E000 and the space's key."""
    mark = f"\ue000{key}"
    return words.replace(" ", mark + " ") + mark if words else ""


# m003's copy of ``text.text_shape`` and what it uses, as released with m003.
_M003_MONTHS = (
    "january february march april may june july august september october november december".split()
)
_M003_CJK_CHAR = re.compile("[\u3400-\u9fff]")
_M003_MONTH_RE = "|".join(m[:3] + (m[3:] and f"(?:{m[3:]})?") for m in _M003_MONTHS)
_M003_DATE_EN = re.compile(
    rf"(?=[\djfmasondytlw])\b(?:(?:{_M003_MONTH_RE})\b|(?:19|20)\d\d\b|\d{{1,2}}/\d{{1,2}}\b|yesterday|today|"
    r"tonight|tomorrow|(?:last|next|this) (?:week|weekend|month|year|night|summer|winter|spring|fall)|"
    r"\d+ \w+ ago|(?:mon|tues|wednes|thurs|fri|satur|sun)day)")
_M003_DATE_ZH = re.compile(r"昨天|今天|明天|前天|后天|昨晚|今晚|上周|下周|本周|上个?月|下个?月|去年|今年|"
                           r"明年|周末|星期|礼拜|\d+\s*[月号日年]|[一二三四五六七八九十]+月")
_M003_DATE_HINTS = (*(m[:3] for m in _M003_MONTHS), "day", "tonight", "tomorrow", "last ", "next ", "this ")
_M003_DIGIT = re.compile(r"\d")
_M003_DIGITS = tuple("0123456789")
_M003_ZH_HINT = re.compile("[天晚周月年星礼号日]")


def _m003_text_shape(text: str) -> int:
    """``(tokens * 2 + question) * 2 + dated``, tokens capped at 80."""
    text = text.strip()
    question = text.endswith(("?", "？"))
    cjk = len(_M003_CJK_CHAR.findall(text))
    tokens = cjk + (len(text) - cjk + 3) // 4
    return (min(tokens, 80) * 2 + question) * 2 + _m003_has_date(text)


def _m003_has_date(text: str) -> bool:
    plain = text.isascii()
    low = text.lower() if plain else text.casefold()
    digit = any(map(low.__contains__, _M003_DIGITS)) if plain else _M003_DIGIT.search(low) is not None
    if (digit or any(map(low.__contains__, _M003_DATE_HINTS))) and _M003_DATE_EN.search(low):
        return True
    return not plain and _M003_ZH_HINT.search(text) is not None and _M003_DATE_ZH.search(text) is not None

# m004's copy of ``text.text_shape``: m003's shape plus the bit of a line with no content of its own.
_M004_EMPTY_SHAPE = 1024
_M004_ACK_WORDS = frozenset(
    """note got sure thank welcom lol lmao haha hahaha hehe great cool nice good morn night fun sound
    rememb gotcha alright okay yep yeah yup k kk np congratul congrat enjoy understood awesom wow bye
    hello hmm right exact inde agre welcome perfect fine done will thx ty xd
    好 好的 好滴 好嘞 嘞 行 收到 记住 记下 记得 我会 了解 明白 哈哈 哈哈哈 呵呵 嘿嘿 谢谢
    感谢 多谢 客气 不客气 早 早上 上好 早上好 晚安 晚上 晚上好 你好 加油 太棒 太棒了 棒
    厉害 嗯嗯 没错 对 对的 问题 没问题 拜拜 再见 辛苦 辛苦了 真棒 不错 可以""".split()
)


def _m004_text_shape(text: str) -> int:
    empty = all(w in _M004_ACK_WORDS for w in words(text))
    return _m003_text_shape(text) + _M004_EMPTY_SHAPE * empty


@migration
async def m005_job_runs(db: aiosqlite.Connection) -> None:
    """The scheduler's record of each job (last run, status, stats, totals), one JSON row per job; and
    episodes in id order per place, so consolidation reads a place's new lines without its old ones."""
    await run_script(
        db,
        """
        CREATE TABLE job_runs (job TEXT PRIMARY KEY, record TEXT NOT NULL);
        CREATE INDEX episodes_space_id ON episodes(space, id);
        """,
    )


@migration
async def m006_latin_beside_chinese(db: aiosqlite.Connection) -> None:
    """Index words again where a Latin word touches Chinese text ("Bart和同学们一起…").

    Such a word used to swallow the Chinese after it as one token no query could match (see
    ``text._RUNS``); only rows with Chinese in them can differ, and only those that do are rewritten.
    Unlike the migrations before it, it brings the index to the live code's words (``text.words``,
    as the store writes them): that is what it is for; a later change of the words needs its own.
    """
    n = 0
    last = 0
    cols = ", ".join(f"e.{c.strip()}" for c in EPISODE_COLUMNS.split(","))
    while rows := list(await db.execute_fetchall(
            f"SELECT {cols}, s.id, f.c0 FROM episodes e JOIN spaces s ON s.name = e.space"
            " JOIN episodes_fts_content f ON f.id = e.id WHERE e.id > ? ORDER BY e.id LIMIT 5000", (last,))):
        changed = []
        for r in rows:
            if has_cjk(r[10]) or has_cjk(r[8]):  # content, actor_name
                new = keyed_words(episode_words(episode_row(r)), r[-2])
                if new != r[-1]:
                    changed.append((new, r[0]))
        await db.executemany("UPDATE episodes_fts SET words = ? WHERE rowid = ?", changed)
        n += len(changed)
        last = rows[-1][0]
    last = 0
    while rows := list(await db.execute_fetchall(
            "SELECT m.id, m.text, f.c0 FROM memories m JOIN memories_fts_content f ON f.id = m.id"
            " WHERE m.id > ? ORDER BY m.id LIMIT 5000", (last,))):
        changed = [(new, i) for i, text, old in rows
                   if has_cjk(text) and (new := " ".join(words(text))) != old]
        await db.executemany("UPDATE memories_fts SET words = ? WHERE rowid = ?", changed)
        n += len(changed)
        last = rows[-1][0]
    if n:
        log.info("indexed the words of %d items with Latin words beside Chinese again", n)


@migration
async def m007_episode_time_indexes(db: aiosqlite.Connection) -> None:
    """A day's episodes across places (the diary) and a person's last line (the sense of time)."""
    await db.execute("CREATE INDEX episodes_time ON episodes(time)")
    await db.execute("CREATE INDEX episodes_actor_time ON episodes(actor, time)")


@migration
async def m008_kept_apart(db: aiosqlite.Connection) -> None:
    """Groups of similar memories the model said record different things (merging asks them once)."""
    await db.execute("CREATE TABLE kept_apart (a INTEGER NOT NULL, b INTEGER NOT NULL, PRIMARY KEY (a, b))"
                     " WITHOUT ROWID")


@migration
async def m009_unique_space_seq(db: aiosqlite.Connection) -> None:
    """A place's sequence numbers are unique: two writers (the bot and the CLI) can no longer give two
    episodes the same place in a chat. Files that already hold such pairs get those chats renumbered
    in their order (sequence number, then id); episodes are append-only, so the guard is lifted for it.
    SQL only: it computes nothing with the live code.
    """
    dup = [r[0] for r in await db.execute_fetchall(
        "SELECT DISTINCT space FROM (SELECT space FROM episodes GROUP BY space, seq HAVING count(*) > 1)")]
    if dup:
        log.warning("renumbering the episodes of %d chats whose sequence numbers repeat (once)", len(dup))
        await db.execute("DROP TRIGGER episodes_append_only")
        for space in dup:
            ids = [r[0] for r in await db.execute_fetchall(
                "SELECT id FROM episodes WHERE space = ? ORDER BY seq, id", (space,))]
            await db.executemany("UPDATE episodes SET seq = ? WHERE id = ?",
                                 [(n, i) for n, i in enumerate(ids, 1)])
        await db.execute(APPEND_ONLY)
    await run_script(
        db,
        """
        DROP INDEX episodes_space_seq;
        CREATE UNIQUE INDEX episodes_space_seq ON episodes(space, seq);
        """,
    )


@migration
async def m010_names_per_place(db: aiosqlite.Connection) -> None:
    """The name each person last went by in each place, so a note shows the name this chat knows
    (SQL only: it computes nothing with the live code)."""
    await run_script(
        db,
        """
        CREATE TABLE place_names (
            space TEXT NOT NULL,
            person TEXT NOT NULL,
            name TEXT NOT NULL,
            last_seen REAL NOT NULL,
            PRIMARY KEY (space, person)
        ) WITHOUT ROWID;
        INSERT INTO place_names
            SELECT space, actor, actor_name, max(time) FROM episodes
            WHERE actor != '' AND actor_name != '' GROUP BY space, actor;
        """,
    )


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


APPEND_ONLY = """CREATE TRIGGER episodes_append_only BEFORE UPDATE ON episodes
        BEGIN SELECT RAISE(ABORT, 'episodes are append-only'); END"""


async def migrate(db: aiosqlite.Connection) -> None:
    await db.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at REAL)")
    async with db.execute("SELECT name FROM _migrations") as cur:
        applied = {r[0] for r in await cur.fetchall()}
    for name, fn in MIGRATIONS:
        if name in applied:
            continue
        await db.execute("BEGIN IMMEDIATE")
        try:
            await fn(db)
            await db.execute("INSERT INTO _migrations VALUES (?, julianday('now'))", (name,))
            await db.execute("COMMIT")
        except BaseException:
            try:
                await db.execute("ROLLBACK")
            except sqlite3.Error as e:  # SQLite rolled back itself (a full disk): the first error stands
                log.debug("rollback of migration %s: %s", name, e)
            raise
        log.info("applied migration %s", name)
