"""m001-m004, the first releases: the core tables, the keyword index per place, the shape of each
line (with their frozen copies of the code they compute with)."""

from __future__ import annotations

import logging
import re

import aiosqlite

from ....text.words import words
from .base import APPEND_ONLY, migration, run_script

log = logging.getLogger("engram.store")


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
