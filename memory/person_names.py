"""The names of people a text mentions, for the leak check (``leaks.py``): who was talked about.

Three sources, each tuned to catch names rather than miss them (a false name costs at most an
unchanged self-image): ``@``-mentions; English words written capitalised in the middle of a
sentence, except a few capitalised common words (days, months, titles, ...); and Chinese person
names as jieba's part-of-speech tagger finds them (``nr``, ``nrfg``, ``nrt``), filtered, because its
dictionary tags many ordinary words as names (谢谢, 明白, 安静): a dictionary word counts only when
it is shaped like a name (two or three characters after a common surname, or 小/阿/老) and is
rare in jieba's counts (a frequent one is an ordinary word or a famous person, not a private one);
a word jieba's model found outside its dictionary (小美, 王磊) counts as it is.

An English name that is an ordinary word too (written in lower case elsewhere: "Will", the "One" of
a title) counts only where it is capitalised in the middle of a sentence, so a shared text may
still begin a sentence with "One" or say "I will".
"""

from __future__ import annotations

import logging
import re
from functools import lru_cache
from typing import Any

from .text import STOP_EN

MENTION = re.compile(r"@([^\s@,，.。:：;；!！?？()（）\[\]【】]+)")
_WORD = re.compile(r"[A-Za-zÀ-ÖØ-öø-ÿ]+")
_CAPITALISED = re.compile(r"[A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ]+(?:[A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ]+)*")
_SENTENCE_END = set(".!?。！？…:：;；\n")
_OPENING = "\"'“‘«([{（【「『-–—*_ \t\r"
_ANY_CJK = re.compile("[\u4e00-\u9fff]")

# Capitalised mid-sentence yet no one's name: weekdays, months, titles, family words, greetings
# (and the function words of text.STOP_EN, as in a book's title; but "Will" is a name as often as not).
COMMON_CAPITALISED = frozenset(
    """monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs fri
    sat sun january february march april may june july august september october november december
    jan feb mar apr jun jul aug sep sept oct nov dec christmas easter halloween thanksgiving
    mr mrs ms miss dr prof sir madam mom mum dad mama papa grandma grandpa granny auntie uncle
    ok okay oh hi hey hello thanks thank yes no lol omg god lord internet french italian american korean
    german indian russian canadian australian mexican european african asian western eastern thai greek
    dutch arabic latin""".split())
_LANGUAGE = re.compile(r"(?:ese|ish)$")  # Chinese, Japanese, English, Spanish: a language, not a person

# The surnames a Chinese name starts with (the common ones), and the forms of address 小/阿/老.
SURNAMES = frozenset(
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁"
    "任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武"
    "戴莫孔向汤常温康施文牛樊葛邢安齐易乔伍庞颜倪庄聂章鲁岳翟殷詹申欧耿关兰焦俞左柳甘祝包宁尚符舒阮"
    "柯纪梅童凌毕单季裴霍涂成苗谷盛曲翁冉骆蓝路游辛靳管柴蒙鲍华喻祁蒲房滕屈饶解牟艾尤阳时穆农司卓古"
    "吉缪简车项连芦麦褚娄窦戚岑景党宫费卜冷晏席卫米柏宗瞿桂全佟应臧闵苟邬边卞姬师仇栾隋商刁沙荣巫寇"
    "桑郎甄丛仲虞敖巩明佘池查麻苑迟邝")
ADDRESS = frozenset("小阿老")
COMPOUND_SURNAMES = ("欧阳", "司马", "上官", "诸葛", "东方", "皇甫", "尉迟", "公孙", "慕容", "令狐", "司徒")
COMMON_IN_JIEBA = 300  # a dictionary "name" counted this often is an ordinary word or someone famous
_NAME_FLAGS = ("nr", "nrfg", "nrt")
_GLUED_BEFORE = set("和跟与同给对叫找问被把让请陪带见等")  # the model sometimes joins these to a name
_GLUED_AFTER = set("说的了和是在给也都就又还把被跟对让叫问去来要会很呢吗啊呀吧")


def mentions(text: str) -> set[str]:
    """The ``@``-mentioned names in ``text``."""
    return {m for m in MENTION.findall(text) if m.lower() not in ("all", "everyone", "here", "全体成员")}


def english_names(text: str) -> set[str]:
    """Words written capitalised in the middle of a sentence, as written (``Mei``, ``McDonald``)."""
    out = set()
    for m in _CAPITALISED.finditer(text):
        word = m.group()
        if _starts_sentence(text, m.start()) or _attached(text, m.start(), m.end()):
            continue
        low = word.lower()
        if (low not in COMMON_CAPITALISED and low.removesuffix("s") not in COMMON_CAPITALISED
                and not _LANGUAGE.search(low) and (low not in STOP_EN or low == "will")):
            out.add(word)
    return out


def lowercase_words(text: str) -> set[str]:
    """The words ``text`` writes in lower case (a capitalised one among them is an ordinary word too)."""
    return {w for w in _WORD.findall(text) if w[0].islower()}


def chinese_names(text: str) -> set[str]:
    """The person names jieba finds in ``text`` (see the module's docstring for the filter)."""
    if not _ANY_CJK.search(text):
        return set()
    out: set[str] = set()
    prev = ""
    for word, flag in _tagger()(text):
        if flag in _NAME_FLAGS:
            out.update(v for v in _variants(word) if _name_like(v))
        if prev in ADDRESS and len(word) == 1 and (flag in _NAME_FLAGS or flag == "j" or word in SURNAMES):
            out.add(prev + word)  # 小 + 美, 小 + 李: cut apart, a name together
        prev = word
    return out


def names_in(text: str) -> set[str]:
    """Every name ``text`` mentions: ``@``-mentions, English and Chinese names."""
    return mentions(text) | english_names(text) | chinese_names(text)


def written_in(text: str, name: str) -> bool:
    """Whether ``text`` holds ``name`` as written (a Latin name as a whole word, case kept)."""
    if _ANY_CJK.search(name):
        return name in text
    return re.search(rf"(?<![A-Za-zÀ-ÖØ-öø-ÿ]){re.escape(name)}(?![a-zß-öø-ÿ])", text) is not None


def _starts_sentence(text: str, at: int) -> bool:
    before = text[:at].rstrip(_OPENING)
    return not before or before[-1] in _SENTENCE_END


def _attached(text: str, start: int, end: int) -> bool:
    """Part of a longer token (``iPhone``, ``x.Com``, ``#Tag``): not a word of its own."""
    return (start > 0 and (text[start - 1].isalnum() and not _ANY_CJK.match(text[start - 1])
                           or text[start - 1] in "#@/.\\_")) or (end < len(text) and text[end].isdigit())


def _variants(word: str) -> set[str]:
    """``word`` and what is left without a character the model glued to it (和小美, 林晓说, 张伟明天)."""
    out = {word}
    if len(word) >= 3 and word[0] in _GLUED_BEFORE:
        out.add(word[1:])
    for v in list(out):
        if len(v) >= 3 and v[-1] in _GLUED_AFTER:
            out.add(v[:-1])
        if len(v) == 3 and v[0] in SURNAMES:
            out.add(v[:2])  # 张伟明 may be 张伟 + 明天
    return out


def _name_like(word: str) -> bool:
    compound = word[:2] in COMPOUND_SURNAMES
    if not (2 <= len(word) <= 3 or (compound and len(word) == 4)) or not all(_ANY_CJK.match(c) for c in word):
        return False
    freq = _counts().get(word)
    if not freq:  # outside jieba's dictionary: the tagger's model found it in context
        return True
    starts = word[0] in SURNAMES or word[0] in ADDRESS or compound or (len(word) == 2 and word[0] == word[1])
    return starts and freq < COMMON_IN_JIEBA


@lru_cache(maxsize=1)
def _tagger() -> Any:
    import jieba
    import jieba.posseg

    jieba.setLogLevel(logging.WARNING)  # its "Building prefix dict" lines are not ours to log
    return jieba.posseg.lcut


@lru_cache(maxsize=1)
def _counts() -> dict[str, int]:
    import jieba

    _tagger()
    jieba.dt.check_initialized()
    freq: dict[str, int] = jieba.dt.FREQ
    return freq
