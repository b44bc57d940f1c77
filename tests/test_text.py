"""Keyword words: stems, stop words, Chinese words, and the date facts recall uses."""

from __future__ import annotations

from datetime import datetime, timezone

from astrbot_plugin_engram.memory.text import (
    MONTHS,
    asks_when,
    date_words,
    has_date,
    named_dates,
    query_words,
    words,
)


def test_english_forms_share_a_stem() -> None:
    assert words("hiking")[0] == words("hiked")[0] == words("hikes")[0]


def test_question_words_and_function_words_are_dropped() -> None:
    assert query_words("When did you go, and what was it like?") == ["go"]


def test_chinese_is_cut_into_words() -> None:
    assert {"爬山", "朋友"} <= set(words("我上周末和朋友去爬山了"))
    assert "的" not in words("我的朋友")


def test_every_month_in_the_index_matches_the_month_in_a_question() -> None:
    for i, month in enumerate(MONTHS, start=1):
        t = datetime(2023, i, 5, tzinfo=timezone.utc)
        assert set(date_words(t)) == set(query_words(f"What in {month.title()} 2023?"))


def test_dates_in_text_are_noticed() -> None:
    assert has_date("I went there yesterday") and has_date("我上个月去了北京") and has_date("On 8 May, 2023")
    assert not has_date("The cat slept on the sofa.")


def test_named_dates_of_a_question() -> None:
    assert named_dates("What did Caroline do in May 2023?") == ({2023}, {5})
    assert named_dates("2023年5月我做了什么") == ({2023}, {5})
    assert named_dates("What did she paint?") == (set(), set())


def test_asking_for_a_time() -> None:
    assert asks_when("When did Mel paint a sunrise?") and asks_when("你什么时候去的北京")
    assert not asks_when("What did Mel paint?")
