"""Words for the keyword index: jieba (rjieba) for Chinese, Snowball stems without stop words for the rest."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from functools import lru_cache

import rjieba
import snowballstemmer

from ..model import Episode, Memory, aware

MAX_TEXT = 16_000  # characters kept of one episode or memory; longer text is cut and logged

_CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
# A run of Chinese characters, or a run of other letters and digits. Chinese characters are word
# characters too, so the second group excludes them: else a Latin word written against Chinese text
# ("Bart和同学们一起…", "用iPhone拍的") swallowed the Chinese after it as one unfindable token.
_RUNS = re.compile(rf"([{_CJK}]+)|([^\W_{_CJK}]+)", re.UNICODE)
_ANY_CJK = re.compile(f"[{_CJK}]")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
# jieba's own Chinese range: it cuts text outside it (CJK extension A, compatibility ideographs,
# U+9FD6 on) into single characters, while rjieba would join them; stores were indexed by jieba.
_JIEBA_HAN = re.compile("([\u4e00-\u9fd5]+)")
_NOT_JIEBA_HAN = re.compile("[^\u4e00-\u9fd5]")

# English function words plus question words: a question's "when"/"what" never finds the answer.
# Month names are kept on purpose ("may" is a month too).
STOP_EN = frozenset(
    """a about above after again against all am an and any are aren as at be because been before
    being below between both but by can could did didn do does doesn doing don down during
    each few for from further had has have having he her here hers herself him himself his how
    i if in into is isn it its itself just let ll me might more most must my myself no nor not
    now of off on once only or other our ours ourselves out over own re s same shall she
    should so some such t than that the their theirs them themselves then there these they
    this those through to too under until up ve very was wasn we were weren what when where
    which while who whom whose why will with won would you your yours yourself yourselves d m
    o y ever also yes ok oh hey hi tell think know kind like really something anything much
    many""".split()
)
STOP_ZH = frozenset(
    """的 了 是 我 你 他 她 它 们 我们 你们 他们 吗 呢 吧 啊 呀 哦 嗯 在
    和 与 及 也 都 就 还 又 很 太 这 那 这个 那个 这些 那些 有 没 没有 不
    一个 一 个 把 被 给 让 对 从 到 向 说 要 会 能 可以 什么 怎么 怎么样 怎样
    哪 哪里 哪儿 谁 为什么 几 多少 何时 时候 什么时候 吗 么 啦 哈 嘛 呗 之 其 着 过
    得 地 而 但 但是 因为 所以 如果 还是 或者 以及 自己 一下 一些 知道 觉得 告诉""".split()
)
MONTHS = (
    "january february march april may june july august september october november december".split()
)

_stemmer = snowballstemmer.stemmer("english")


@lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    return str(_stemmer.stemWord(word))


def _cjk_words(run: str) -> list[str]:
    """jieba's ``cut_for_search`` words of a CJK run (rjieba: the same words, ~10x faster)."""
    if not _NOT_JIEBA_HAN.search(run):
        cut = rjieba.cut_for_search(run, True)
    else:
        cut = []
        for part in _JIEBA_HAN.split(run):
            cut.extend(rjieba.cut_for_search(part, True) if _JIEBA_HAN.match(part) else part)
    return [w for w in cut if w not in STOP_ZH]


def words(text: str) -> list[str]:
    """The keyword-index words of ``text``, in order (duplicates kept)."""
    return list(iter_words(text))


def iter_words(text: str) -> Iterator[str]:
    """``words`` one at a time: a caller that stops early (``content_free``) stems no further."""
    text = text.lower()
    if not _ANY_CJK.search(text):  # the same words as below; one plain regex is ~1/3 cheaper
        return (_stem(w) for w in _WORD.findall(text) if w not in STOP_EN)
    return _mixed_words(text)


def _mixed_words(text: str) -> Iterator[str]:
    for cjk, other in _RUNS.findall(text):
        if cjk:
            yield from _cjk_words(cjk)
        elif other not in STOP_EN:
            yield _stem(other)


# spaces and the characters that show nothing: zero-width ones, direction marks, soft hyphen, fillers
_INVISIBLE = re.compile(r"[\s\u00ad\u034f\u115f\u1160\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f"
                        r"\u3164\ufeff\uffa0]+")


def blank(text: str) -> bool:
    """Whether ``text`` shows nothing: only spaces and invisible characters ("\\u200b")."""
    return not _INVISIBLE.sub("", text)


def has_cjk(text: str) -> bool:
    """Whether ``text`` holds a Chinese character (a run ``words`` cuts with jieba)."""
    return _ANY_CJK.search(text) is not None


def query_words(text: str) -> list[str]:
    """Distinct words of a query, in order."""
    return list(dict.fromkeys(words(text)))


def date_words(t: datetime) -> list[str]:
    """Words that let a question naming a month or year find things of that time."""
    return [MONTH_WORDS[t.month - 1], str(t.year)]


MONTH_WORDS = tuple(_stem(m) for m in MONTHS)  # as the index holds them


def cap(text: str, limit: int = MAX_TEXT) -> tuple[str, int | None]:
    """``text`` cut to ``limit`` characters; the original length when it was cut, else None."""
    if len(text) <= limit:
        return text, None
    return text[:limit], len(text)


_CJK_CHAR = re.compile("[\u3400-\u9fff]")


def approx_tokens(text: str) -> int:
    """A cheap token estimate for budgets: a CJK character or ~4 latin characters is one token."""
    cjk = len(_CJK_CHAR.findall(text))  # a regex: a Python loop over the characters was ~40 µs a text
    return cjk + (len(text) - cjk + 3) // 4


_ONE_EACH = re.compile("[0-9!-/:-@\\[-`{-~]")  # digits and ASCII punctuation
_NARROW = re.compile("[\u0080-\u04ff]")  # accented Latin, Greek, Cyrillic: two or three a token
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")  # most emoji: two tokens or more each
_WIDE = re.compile("[^\u0000-\u04ff\u3400-\u9fff]")  # kana, Hangul, CJK punctuation, full-width forms,
# symbols, joiners, emoji (also counted in _ASTRAL): about a token each


def budget_tokens(text: str) -> int:
    """An upper estimate of the tokens ``text`` takes in a chat model's tokenizer, for the injection
    budget (``approx_tokens`` undercounts what is not Latin letters or Chinese: Qwen's and Llama's
    tokenizers cut a number into digits, a Korean syllable or an emoji is one to three tokens)."""
    cjk, one = len(_CJK_CHAR.findall(text)), len(_ONE_EACH.findall(text))
    narrow, wide, astral = (len(r.findall(text)) for r in (_NARROW, _WIDE, _ASTRAL))
    rest = len(text) - cjk - one - narrow - wide
    return cjk + one + wide + astral + (2 * narrow + 4) // 5 + (rest + 3) // 4


_MONTH_RE = "|".join(m[:3] + (m[3:] and f"(?:{m[3:]})?") for m in MONTHS)
# Matched against case-folded text (``re.IGNORECASE`` was ~2x slower); the lookahead lets the regex
# engine skip positions no alternative can start at.
_DATE_EN = re.compile(
    rf"(?=[\djfmasondytlw])\b(?:(?:{_MONTH_RE})\b|(?:19|20)\d\d\b|\d{{1,2}}/\d{{1,2}}\b|yesterday|today|tonight|tomorrow|"
    r"(?:last|next|this) (?:week|weekend|month|year|night|summer|winter|spring|fall)|\d+ \w+ ago|"
    r"(?:mon|tues|wednes|thurs|fri|satur|sun)day)")
_DATE_ZH = re.compile(r"昨天|今天|明天|前天|后天|昨晚|今晚|上周|下周|本周|上个?月|下个?月|去年|今年|"
                      r"明年|周末|星期|礼拜|\d+\s*[月号日年]|[一二三四五六七八九十]+月")
_ASKS_WHEN = re.compile(r"\bwhen\b|\bwhat (?:date|day|month|year|time)\b|\bhow long ago\b|什么时候|何时|哪天|"
                        r"哪一天|几月|几号|哪年|多久以前", re.IGNORECASE)
_YEAR = re.compile(r"\b((?:19|20)\d\d)\b|((?:19|20)\d\d)年")
_MONTH_EN = re.compile(rf"\b({_MONTH_RE})\b", re.IGNORECASE)
_MONTH_ZH = re.compile(r"(\d{1,2})月")


# Every English date pattern above contains a digit or one of these, and every Chinese one one of
# the characters of _ZH_HINT: text with none of them names no time (the patterns cost ~10-20 µs on a
# typical message; most messages name no time, and every recorded message is asked).
_DATE_HINTS = (*(m[:3] for m in MONTHS), "day", "tonight", "tomorrow", "last ", "next ", "this ")
_DIGIT = re.compile(r"\d")  # any script's digits
_DIGITS = tuple("0123456789")
_ZH_HINT = re.compile("[天晚周月年星礼号日]")


# Words of acknowledgements, greetings, laughter and being there (as ``words`` gives them: stemmed,
# stop words gone). A line made of these alone ("OK, noted!", "好的，记住了", "👍", "lol", "hi
# everyone", "I'm back", "有人在吗？") has no content of its own: whatever it seems to match, it
# borrows from the line it answers.
ACK_WORDS = frozenset(
    """note got sure thank welcom lol lmao haha hahaha hehe great cool nice good morn night fun sound
    rememb gotcha alright okay yep yeah yup k kk np congratul congrat enjoy understood awesom wow bye
    hello hmm right exact inde agre welcome perfect fine done will thx ty xd
    好 好的 好滴 好嘞 嘞 行 收到 记住 记下 记得 我会 了解 明白 哈哈 哈哈哈 呵呵 嘿嘿 谢谢
    感谢 多谢 客气 不客气 早 早上 上好 早上好 晚安 晚上 晚上好 你好 加油 太棒 太棒了 棒
    厉害 嗯嗯 没错 对 对的 问题 没问题 拜拜 再见 辛苦 辛苦了 真棒 不错 可以
    everyon anyon anybodi everybodi back tell help 大家 大家好 有人 回来 帮 帮忙 听 起来 想想""".split()
)
EMPTY_SHAPE = 1024  # the ``text_shape`` bit of a line with no content of its own


def no_content(content_words: list[str]) -> bool:
    """Whether a line's words (``words(text)``) are all acknowledgements or greetings, or none."""
    return all(w in ACK_WORDS for w in content_words)


def content_free(text: str) -> bool:
    """``no_content(words(text))``, read no further than the first word of content: a memory's shape
    is worked out at every recall that meets it, and most texts say something in their first words."""
    return all(w in ACK_WORDS for w in iter_words(text))


def text_shape(text: str, content_words: list[str] | None = None) -> int:
    """A number for what recall's text features need of a text: its length in tokens (capped at
    80), whether it asks a question, whether it names a time: ``(tokens * 2 + question) * 2 + dated``,
    plus ``EMPTY_SHAPE`` when it has no content of its own (``content_words``: ``words(text)``, if
    at hand). Stored with each episode (``episodes.shape``) so recall never reads a candidate's text."""
    text = text.strip()
    question = text.endswith(("?", "？"))
    empty = content_free(text) if content_words is None else no_content(content_words)
    return (min(approx_tokens(text), 80) * 2 + question) * 2 + has_date(text) + EMPTY_SHAPE * empty


def has_date(text: str) -> bool:
    """Whether ``text`` names a time (a date, a month, a weekday, 'yesterday', '上个月', ...)."""
    plain = text.isascii()
    low = text.lower() if plain else text.casefold()
    digit = any(map(low.__contains__, _DIGITS)) if plain else _DIGIT.search(low) is not None
    if (digit or any(map(low.__contains__, _DATE_HINTS))) and _DATE_EN.search(low):
        return True
    return not plain and _ZH_HINT.search(text) is not None and _DATE_ZH.search(text) is not None


@lru_cache(maxsize=100_000)
def word_set(text: str) -> frozenset[str]:
    """The distinct index words of ``text`` (cached: recall asks for the same items again)."""
    return frozenset(words(text))


def forget_cached_words() -> None:
    """Drop the cached words and stems: they are keyed by text, which a forget may have erased."""
    word_set.cache_clear()
    _stem.cache_clear()


@lru_cache(maxsize=20_000)
def name_words(name: str) -> frozenset[str]:
    """The index words of a person's name (cached: names repeat in every recall)."""
    return frozenset(words(name))


def asks_when(query: str) -> bool:
    """Whether a question asks for a time ('when ...', '什么时候 ...')."""
    return bool(_ASKS_WHEN.search(query))


def named_dates(query: str) -> tuple[set[int], set[int]]:
    """The years and months a query names ('in May 2023', '2023年5月')."""
    years = {int(a or b) for a, b in _YEAR.findall(query)}
    months = {MONTHS.index(next(m for m in MONTHS if m.startswith(x.lower()[:3]))) + 1
              for x in _MONTH_EN.findall(query)}
    months |= {int(x) for x in _MONTH_ZH.findall(query) if 1 <= int(x) <= 12}
    return years, months


def episode_words(ep: Episode, content_words: list[str] | None = None) -> str:
    """What the keyword index holds for an episode: its words, the speaker and the month/year."""
    own = words(ep.content) if content_words is None else content_words
    return " ".join(own + words(ep.actor_name) + date_words(aware(ep.time)))


def memory_words(m: Memory) -> str:
    """What the keyword index holds for a memory: the words of its text."""
    return " ".join(words(m.text))


def prepare_episode(ep: Episode) -> tuple[str, int]:
    """What the store keeps beside an episode: its index words and its text shape."""
    content_words = words(ep.content)
    return episode_words(ep, content_words), text_shape(ep.content, content_words)


def holds_name(text: str, name: str) -> bool:
    """Whether ``text`` holds ``name`` (both lower-cased), a Latin name only as a whole word ("al" is
    not in "also"); Chinese has no spaces to ask, so there any occurrence counts."""
    edge = (r"(?<![a-z0-9])" if name[:1].isascii() and name[:1].isalnum() else "",
            r"(?![a-z0-9])" if name[-1:].isascii() and name[-1:].isalnum() else "")
    return bool(name) and re.search(edge[0] + re.escape(name) + edge[1], text) is not None
