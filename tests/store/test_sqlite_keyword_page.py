"""SQLite counts a page of episodes' index words with numpy, exactly as its own expression would."""

from __future__ import annotations

from astrbot_plugin_engram.memory.store.sqlite.keywords import _word_counts


def test_words_are_counted_row_by_row_empty_rows_included() -> None:
    rows = ["a\ue0001 b\ue0001", "", "灯塔\ue00012", "x y z w"]
    assert _word_counts("\n".join(rows).encode(), len(rows)).tolist() == [2, 0, 1, 4]
    assert _word_counts(b"", 1).tolist() == [0]


def test_a_newline_inside_a_row_is_not_taken_for_a_row_boundary() -> None:
    assert _word_counts(b"a b\nc\nd", 2) is None  # the caller then has SQLite count them
