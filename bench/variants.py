"""Tokenizer variants for bench/zh_explore.py, patched into memory.text / memory.rows (experiments only)."""

from __future__ import annotations

import re

import rjieba

from astrbot_plugin_engram.memory.text import words as text

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
STOP_CHARS = set("的了是我你他她它们吗呢吧啊呀哦嗯在和也都就还又很这那有没不个一")


def bigrams(run: str, skip_stop: bool) -> list[str]:
    out = []
    for i in range(len(run) - 1):
        b = run[i : i + 2]
        if b in text.STOP_ZH or (skip_stop and (b[0] in STOP_CHARS or b[1] in STOP_CHARS)):
            continue
        out.append(b)
    return out


def make(mode: str):  # noqa: ANN201
    base = text.words

    def words(t: str) -> list[str]:
        low = t.lower()
        if not text._ANY_CJK.search(low):
            return base(t)
        out: list[str] = []
        for cjk, other in text._RUNS.findall(low):
            if cjk:
                if mode in ("bigram", "bigram_ns", "precise_bigram"):
                    if mode == "precise_bigram":
                        out += [w for w in rjieba.cut(cjk, True) if w not in text.STOP_ZH and len(w) != 2]
                    else:
                        out += [w for w in text._cjk_words(cjk) if len(w) != 2]
                    out += bigrams(cjk, mode == "bigram_ns")
                elif mode == "bigram_only":
                    out += bigrams(cjk, False) or [cjk]
                elif mode == "uni_bigram":
                    out += [c for c in cjk if c not in STOP_CHARS] + bigrams(cjk, False)
                elif mode == "precise":
                    out += [w for w in rjieba.cut(cjk, True) if w not in text.STOP_ZH]
                else:
                    raise ValueError(mode)
            elif other not in text.STOP_EN:
                out.append(text._stem(other))
        return out

    return words


FIXED_RUNS = re.compile(rf"([{text._CJK}]+)|([^\W_{text._CJK}]+)", re.UNICODE)


def apply(mode: str) -> None:
    if mode == "current":
        return
    text._RUNS = FIXED_RUNS  # a Latin word glued to Chinese text no longer swallows it
    if mode == "runs":
        text.word_set.cache_clear()
        text.name_words.cache_clear()
        return
    w = make(mode)
    text.words = w
    text.word_set.cache_clear()
    text.name_words.cache_clear()
