"""SQLite counts a page of episodes' index words with numpy, exactly as its own expression would."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timezone
from pathlib import Path

from astrbot_plugin_engram.memory import Episode
from astrbot_plugin_engram.memory.store.sqlite.keywords import _word_counts

from .conftest import open_sqlite

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)


def counts(words: bytes, rows: int) -> list[int]:
    got = _word_counts(words, rows)
    assert got is not None
    return list(got.tolist())


def test_words_are_counted_row_by_row_empty_rows_included() -> None:
    rows = ["a\ue0001 b\ue0001", "", "灯塔\ue00012", "x y z w"]
    assert counts("\n".join(rows).encode(), len(rows)) == [2, 0, 1, 4]
    assert counts(b"", 1) == [0]


def test_a_newline_inside_a_row_is_not_taken_for_a_row_boundary() -> None:
    assert _word_counts(b"a b\nc\nd", 2) is None  # the caller then has SQLite count them


async def test_a_page_whose_words_hold_a_newline_is_counted_by_sqlite(tmp_path: Path) -> None:
    store = await open_sqlite(tmp_path)
    try:
        async with store.transaction() as tx:
            await tx.add_episodes([Episode(place="qq:group:1", content=t, time=T0) for t in ("a b c", "d e")])
        with sqlite3.connect(tmp_path / "store.db") as db:  # as a store damaged or made elsewhere might
            db.execute("UPDATE episodes_fts SET words = replace(words, ' ', char(10)) WHERE rowid = 1")
        page = await store.episode_keyword_page(0, 10)
        rows = await store.episode_keyword_rows(0, 10)
        assert page.lengths.tolist() == [r.length for r in rows] and page.ids.tolist() == [1, 2]
    finally:
        await store.close()
