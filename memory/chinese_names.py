"""Chinese person names in text, by jieba's part-of-speech tagger (``nr``, ``nrfg``, ``nrt``), filtered.

jieba's dictionary tags many ordinary words as names (谢谢, 明白, 安静), so a dictionary word counts
only when it is shaped like a name (two or three characters after a common surname, or 小/阿/老) and
is rare in jieba's counts (a frequent one is an ordinary word or a famous person, not a private one);
a word jieba's model found outside its dictionary (小美, 王磊) counts as it is.

The tagger's tables take ~150 MB once loaded, and ~50 MB stay for good once it is imported, for a
check that runs once a day (the self-image, the mood). So ``person_names.chinese_names_apart`` runs
this file as a script in a child process, which hands its memory back when it ends. The file
imports nothing of the package (only the standard library and jieba), so it runs on its own:
``python chinese_names.py`` reads a JSON list of texts on stdin and writes their names, a JSON list
of lists, on stdout.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from functools import lru_cache
from typing import Any

_ANY_CJK = re.compile("[\u4e00-\u9fff]")

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


def names_of_texts(texts: list[str]) -> list[list[str]]:
    """Each text's names, sorted (what the script writes)."""
    return [sorted(chinese_names(t)) for t in texts]


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


if __name__ == "__main__":
    sys.stdout.write(json.dumps(names_of_texts(json.loads(sys.stdin.read())), ensure_ascii=False))
