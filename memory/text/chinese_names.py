"""Chinese person names in text, by jieba's part-of-speech tagger (``nr``, ``nrfg``, ``nrt``), filtered.

jieba's dictionary tags many ordinary words as names (谢谢, 明白, 安静), so a dictionary word counts
only when it is shaped like a name (two or three characters after a common surname, or 小/阿/老) and
is rare in jieba's counts (a frequent one is an ordinary word or a famous person, not a private one),
or less common and said where a person stands (小雨说, 叫安静, 李娜下周结婚: ``PERSON_BEFORE``,
``PERSON_AFTER``); a word jieba's model found outside its dictionary (小美, 王磊) counts as it is.
Some names are found whatever the tagger said: a given name said twice (婷婷, 芳芳), 小/老/阿 and a
surname (小张, 小李子), a compound surname and what follows it (欧阳 + 娜娜). Address and family
words are no one's name (阿姨, 老师: ``NOT_NAMES``).

The tagger's tables take ~150 MB once loaded, and ~50 MB stay for good once it is imported, for a
check that runs once a day (the self-image, the mood). So ``person_names.chinese_names_apart`` runs
this file as a script in a child process, which hands its memory back when it ends. The file
imports nothing of the package (only the standard library and jieba), so it runs on its own:
``python chinese_names.py`` reads a JSON list of texts on stdin and writes their names, a JSON list
of lists, on stdout.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import re
import sys
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
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
COMMON_IN_JIEBA = 300  # a dictionary "name" counted this often is an ordinary word or someone famous ...
IN_CONTEXT = 3000  # ... unless a person's context shows it (小雨说, 叫安静, 李娜下周): up to this often
_NAME_FLAGS = ("nr", "nrfg", "nrt")
_GLUED_BEFORE = set("和跟与同给对叫找问被把让请陪带见等")  # the model sometimes joins these to a name
_GLUED_AFTER = set("说的了和是在给也都就又还把被跟对让叫问去来要会很呢吗啊呀吧才")
# What stands before a person (跟小雨吵架, 我朋友宁静) and after one (安静说, 李娜下周结婚)
PERSON_BEFORE = frozenset("""和 跟 与 同 给 陪 叫 找 问 约 等 见 告诉 朋友 同学 同事 室友 闺蜜
    表妹 表哥 表姐 表弟 妹妹 姐姐 哥哥 弟弟 女朋友 男朋友 女儿 儿子 老公 老婆 学生 想念 挂念 担心""".split())
PERSON_AFTER = frozenset("""说 说过 告诉 问 问我 讲 觉得 认为 哭 哭了 笑 笑了 生病 病 病了 住院 出院
    结婚 离婚 辞职 请假 迟到 怀孕 搬家 出国 回国 回来 今天 昨天 明天 前天 后天 最近 下周 上周 刚才
    一直 已经 跟 给 找 借 打电话 发烧 生日 喜欢 讨厌 考上 发消息""".split())
_GIVEN_FLAGS = frozenset("nazjxgb")  # what jieba tags a given name it does not know: nouns, adjectives, ...
_JOINING = frozenset("和 跟 与 同".split())  # before a person (跟小雨吵架) or between two words
# 张伟明|天来: 张伟, then 明天
_TIME_AFTER = frozenset("明天 今天 昨天 后天 前天 今年 明年 去年 今晚 昨晚 明早".split())
# Address forms and family words that look like names but are no one's (阿姨, 老师, 小时)
NOT_NAMES = frozenset("""阿姨 阿婆 阿公 阿伯 阿叔 阿哥 阿妹 阿爸 阿妈 阿爹 阿娘 老公 老婆 老爸 老妈
    老爹 老娘 老哥 老弟 老妹 老姐 老兄 老乡 老师 老板 老总 老大 老太 老伴 老外 老人 老铁 老汉 老路
    老成 老实 小姐 小孩 小伙 小哥 小弟 小妹 小姑 小子 小狗 小猫 小猪 小鸟 小时 小米 小于 小车 小路
    小麦 小康 小心 宝宝 娃娃 姑娘""".split())
# Characters of given names said twice (婷婷, 晶晶); not 宝 or 天 (宝宝, 天天: words, not names)
NAME_CHARS = frozenset("婷晶丹乐莹露豆芳静欣娜丽玲琳敏燕萍红霞雯倩颖洁璐瑶佳蕾菲薇悦怡月兰梅"
                       "英华东伟强磊鹏杰涛斌超宁洋甜贝果朵彤萌妮妍茜媛嘉琪琦思雪冰婉依然安心慧"
                       "文君青云蓉楠凯亮军明")


def chinese_names(text: str) -> set[str]:
    """The person names jieba finds in ``text`` (see the module's docstring for the filter)."""
    if not _ANY_CJK.search(text):
        return set()
    words = [(p.word, p.flag) for p in _tagger()(text)]
    out: set[str] = set()
    for i, (word, flag) in enumerate(words):
        prev = words[i - 1][0] if i else ""
        nxt, nxt_flag = words[i + 1] if i + 1 < len(words) else ("", "")
        out |= _names_at(word, flag, prev, nxt, nxt_flag)
    return out


def names_of_texts(texts: list[str]) -> list[list[str]]:
    """Each text's names, sorted (what the script writes)."""
    return [sorted(chinese_names(t)) for t in texts]


def _names_at(word: str, flag: str, prev: str, nxt: str, nxt_flag: str) -> set[str]:
    """The names ``word`` starts or is, between ``prev`` and ``nxt`` (tagged ``nxt_flag``)."""
    if prev in ADDRESS and word[:1] in SURNAMES and (len(word) == 1 or word[1:] in _GLUED_AFTER):
        return {prev + word[0]}  # 小 + 李, 小 + 陈说: cut apart, a name together
    if prev in ADDRESS and len(word) == 2 and word[0] in SURNAMES and word[1] == "子":
        return {prev + word}  # 小 + 李子
    if prev in ADDRESS and len(word) == 1 and (flag in _NAME_FLAGS or flag == "j"):
        return {prev + word}  # 小 + 美
    if len(word) == 1 and word == prev and word in NAME_CHARS:
        return {word * 2}  # 芳 + 芳
    if word in COMPOUND_SURNAMES:  # 欧阳 + 娜娜, 诸葛 + 明; 欧阳 alone before 说; not 东方 + 升起
        given = nxt_flag in _NAME_FLAGS or (word != "东方" and nxt_flag[:1] in _GIVEN_FLAGS)
        if 1 <= len(nxt) <= 2 and _ANY_CJK.match(nxt) and given and nxt not in PERSON_AFTER | _GLUED_AFTER:
            return {word + nxt}
        return {word} if nxt in PERSON_AFTER or prev in PERSON_BEFORE else set()
    found = {v for v, before, after in _variants(word, prev, nxt) if _is_name(v, flag, before, after)}
    return {v for v in found if not any(o != v and o in v for o in found)}  # 林晓, not 林晓说 too


def _variants(word: str, prev: str, nxt: str) -> list[tuple[str, str, str]]:
    """``word`` and what is left without a character the model glued to it (和小美, 林晓说, 张伟明天),
    each with the words around it."""
    out = [(word, prev, nxt)]
    if len(word) >= 3 and word[0] in _GLUED_BEFORE:
        out.append((word[1:], word[0], nxt))
    for v, before, _ in list(out):
        if len(v) >= 3 and v[-1] in _GLUED_AFTER:
            out.append((v[:-1], before, v[-1]))
        cut = len(v) == 3 and v[0] in SURNAMES and v[:2] not in COMPOUND_SURNAMES
        if cut and v[2] + nxt[:1] in _TIME_AFTER:
            out.append((v[:2], before, v[2] + nxt[:1]))
    return out


def _is_name(word: str, flag: str, before: str, after: str) -> bool:
    """Whether ``word`` (tagged ``flag``, between ``before`` and ``after``) is a person's name."""
    compound = word[:2] in COMPOUND_SURNAMES
    if (not (2 <= len(word) <= 3 or (compound and len(word) == 4)) or word in NOT_NAMES
            or not all(_ANY_CJK.match(c) for c in word)):
        return False
    freq = _counts().get(word) or 0
    if len(word) == 2 and word[0] == word[1] and word[0] in NAME_CHARS and freq < COMMON_IN_JIEBA:
        return True  # 婷婷, whatever the tagger thought
    if len(word) == 2 and word[0] in ADDRESS and word[1] in SURNAMES and freq < IN_CONTEXT:
        return True  # 小张, 老王
    if flag not in _NAME_FLAGS:
        return False
    if not freq:  # outside jieba's dictionary: the tagger's model found it in context
        return True
    starts = word[0] in SURNAMES or word[0] in ADDRESS or compound or (len(word) == 2 and word[0] == word[1])
    joined = before in _JOINING and not _ANY_CJK.match(after[:1])  # 轻松和宁静，: two words joined, no one
    in_context = (before in PERSON_BEFORE and not joined) or after in PERSON_AFTER
    return starts and (freq < COMMON_IN_JIEBA or (in_context and freq < IN_CONTEXT))


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


def dictionary_counts(words: Iterable[str]) -> dict[str, int]:
    """How often jieba's dictionary counts each of ``words`` (0: not in it), read from its file: a
    forget asks about a few names, and loading jieba here would keep its whole dictionary in the
    bot's process (the tagger runs in a child process for that reason)."""
    wanted = {w for w in words if _ANY_CJK.search(w)}
    out = dict.fromkeys(wanted, 0)
    spec = importlib.util.find_spec("jieba")
    if not wanted or spec is None or not spec.submodule_search_locations:
        return out
    path = Path(next(iter(spec.submodule_search_locations))) / "dict.txt"
    with path.open(encoding="utf-8") as f:
        for line in f:
            word, _, rest = line.partition(" ")
            if word in out:
                out[word] = int(rest.split(" ", 1)[0] or 0)
    return out


if __name__ == "__main__":
    sys.stdout.write(json.dumps(names_of_texts(json.loads(sys.stdin.read())), ensure_ascii=False))
