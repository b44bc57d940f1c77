"""Keyword words: stems, stop words, Chinese words, and the date facts recall uses."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import jieba
from hypothesis import given
from hypothesis import strategies as st

from astrbot_plugin_engram.memory.text.words import (
    _RUNS,
    MONTHS,
    STOP_ZH,
    asks_when,
    content_free,
    date_words,
    has_date,
    named_dates,
    no_content,
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


# ---- the compiled segmenter gives jieba's words (stores indexed by jieba keep matching) ----------
DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
ROOT = Path(__file__).resolve().parents[1]


def _strings(x: object) -> Iterator[str]:
    if isinstance(x, str):
        yield x
    elif isinstance(x, dict):
        for k, v in x.items():
            yield k
            yield from _strings(v)
    elif isinstance(x, list):
        for v in x:
            yield from _strings(v)


def _texts(paths: list[Path]) -> set[str]:
    out: set[str] = set()
    for p in paths:
        text = p.read_text("utf-8")
        docs = [json.loads(line) for line in text.splitlines() if line.strip()] if p.suffix == ".jsonl" \
            else [json.loads(text)]
        out.update(s for d in docs for s in _strings(d))
    return out


def _cjk_runs(paths: list[Path]) -> list[str]:
    return sorted({cjk for s in _texts(paths) for cjk, _ in _RUNS.findall(s.lower()) if cjk})


jieba.setLogLevel(logging.WARNING)


def _jieba_words(run: str) -> list[str]:
    """What words() gave for a CJK run when it called jieba itself."""
    return [w for w in jieba.cut_for_search(run) if w.strip() and w not in STOP_ZH]


def test_chinese_words_are_jiebas_on_every_run_of_the_real_data() -> None:
    paths = [*DATA.glob("memorybank/*.json*"), DATA / "locomo-dev.json", ROOT / "memory/samples/demo.json",
             *ROOT.glob("bench/data/memorybank-cn*.json")]
    runs = _cjk_runs(paths)
    assert len(runs) > 4000  # MemoryBank's Chinese chats, its questions, the demo and the bench set
    differ = [(r, words(r), _jieba_words(r)) for r in runs if words(r) != _jieba_words(r)]
    assert not differ, f"{len(differ)} runs cut differently, e.g. {differ[:3]}"


def test_characters_outside_jiebas_range_stay_single_words_as_jieba_cuts_them() -> None:
    # CJK extension A, U+9FD6 on and compatibility ideographs: jieba cuts them one by one
    for run in ("㐀㐁中国人", "中国\u9fd6\u9fe0人民", "爬山\uf91a\uf900朋友", "䍥䘽䐦鿬㼓"):
        assert words(run) == _jieba_words(run)


def test_the_quick_no_date_check_agrees_with_the_full_patterns_on_the_real_data() -> None:
    # has_date skips its patterns for text with no digit and no date hint, and folds case itself
    # instead of asking the regex to; same answers as the patterns run in full, ignoring case
    import re

    from astrbot_plugin_engram.memory.text.words import _DATE_EN, _DATE_ZH

    full = re.compile(_DATE_EN.pattern, re.IGNORECASE)

    texts = _texts([*DATA.glob("memorybank/*.json*"), DATA / "locomo-dev.json",
                    ROOT / "memory/samples/demo.json"])
    texts |= {"see you on Monday", "TONIGHT", "last  week", "5 days ago", "ok cool", "this weekend",
              "见面在 JUNE 3", "下个月见", "２０２３年", "１２/２５ 见", "Ｍonday 见"}
    assert len(texts) > 10_000
    wrong = [t for t in texts if has_date(t) != bool(full.search(t) or _DATE_ZH.search(t))]
    assert not wrong, wrong[:5]


_ACKS = ["thanks", "Thank you", "okay", "OK", "lol", "the", "is", "good morning", "好的", "哈哈", "谢谢",
         "记住了", "大家好", "👍", "!", "?", "，", "。", "ok好的"]
_OTHERS = ["hiking", "Paris", "2023", "我们", "去", "北京", "爬山", "Ünïcode", "café", "noted123", "好的北京",
           "哈哈爬山", "谢谢你去爬山"]


@given(st.tuples(st.lists(st.sampled_from(_ACKS), max_size=5), st.lists(st.sampled_from(_OTHERS), max_size=1))
       .map(lambda parts: " ".join(parts[0] + parts[1])) | st.text(max_size=40))
def test_content_free_says_what_no_content_of_every_word_says(text: str) -> None:
    """The shortcut a memory's shape takes (stop at the first word of content) agrees with the whole cut."""
    assert content_free(text) == no_content(words(text))
