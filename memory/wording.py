"""How Engram says things in English or Chinese: a stored word, a time, and an error that says itself.

One vocabulary for everything a person reads: the plugin's replies, the dashboard's pages and the
model's notes (English) say a memory's kind, a job's result or "9 days ago" through here. English shows
a stored word as it is stored (it is English already) but for a few no one says (``EN_WORDS``, and a
count's underscores); Chinese says it from ``ZH_WORDS``. Each side
keeps its own sentences (the plugin's reply catalogue, the dashboard's labels); the words inside them,
and the errors both raise (``Said``), are said the same way in both.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, tzinfo
from typing import ClassVar

from .clock import age

LANGS = EN, ZH = ("en", "zh")


def pick(lang: str, pair: tuple[str, str]) -> str:
    """The text of an (English, Chinese) pair in ``lang``."""
    en, zh = pair
    return zh if lang == ZH else en


# ---- stored words ------------------------------------------------------------------------------------
ZH_WORDS: dict[str, dict[str, str]] = {
    "kind": {"fact": "事实", "preference": "偏好", "event": "事件", "relation": "关系", "plan": "计划",
             "diary": "日记", "reflection": "反思", "note": "笔记"},
    # "archived": the memory faded (the fade job, 淡忘) and was archived, as /mem recall --archived and
    # the fade job say it; a bare 已归档 reads as filed away by someone
    "status": {"active": "有效", "superseded": "已被取代", "archived": "已淡忘归档"},
    "line": {"message_in": "收到的消息", "message_out": "机器人的回复", "observation": "观察",
             "image": "图片", "note": "笔记"},
    "scope": {"public": "公开", "owner": "仅主人", "self": "机器人自己"},
    "job": {"consolidate": "整理", "fade": "淡忘", "merge": "合并", "check": "检查", "diary": "日记",
            "self-image": "自我形象", "backup": "备份", "ranking": "排序学习"},
    "run": {"ok": "成功", "failed": "失败", "running": "运行中", "cancelled": "已取消",
            "interrupted": "被中断"},
    "diary": {"written": "新写的", "rewritten": "重写的", "exists": "已写过", "empty": "无"},
    # what a job counts: a consolidation's refusals and failures, and the other jobs' counters
    "count": {"bad_field": "字段不对", "unknown_op": "未知操作", "invented_id": "编造的编号",
              "foreign_source": "别处的来源", "other_scope": "看不到的记忆", "wider_scope": "范围过宽",
              "unforeseen": "意外错误", "unavailable": "模型不可用", "timeout": "超时", "error": "出错",
              "malformed": "回答格式不对", "archived": "归档", "protected": "受保护", "merged": "合并",
              "kept_apart": "保持分开", "failed": "失败", "calls": "模型调用", "prompt_tokens": "提示词元",
              "completion_tokens": "回复词元", "episodes": "消息", "added": "新增", "updated": "更新",
              "skipped_batches": "跳过的批次", "diaries": "日记", "inner_state": "内心状态",
              "checked": "检查", "written": "写入", "refused": "拒绝", "diaries_left": "待写的日记",
              "diaries_skipped": "跳过的日记", "replies": "检查的回复", "learned": "学到的召回",
              "serving": "使用学到的权重"},
    # the fields of a model's JSON answer (diary, inner state, self-image), named in its errors
    "field": {"entry": "日记", "mood": "心情", "valence": "情绪", "energy": "精力", "on_mind": "心事",
              "self_image": "自我形象"},
    # recall's features (memory.recall.features.COLUMNS): /mem recall's scores, the dashboard's columns
    "feature": {
        "kw": "关键词匹配", "cos": "语义相似", "cos_qq": "作为问题的语义相似", "mix": "字词加语义",
        "both": "两种方式都找到", "kw_rank": "关键词排名", "cos_rank": "语义排名", "nb_prev": "前一条",
        "nb_next": "后一条", "nb2": "隔一条", "session_best": "所在对话最佳", "mix_rank": "连同上下文的排名",
        "question_turn": "是提问", "length": "长度", "has_date": "提到时间", "when_dated": "问时间且有时间",
        "is_memory": "是记忆", "recency": "新近", "date_match": "日期吻合", "speaker_named": "提到说话人",
        "has_image": "含图片", "strength": "强度", "importance": "重要性", "after_question": "回答提问",
        "cov": "覆盖问题", "wcov": "连同上下文覆盖", "own": "机器人说的", "empty": "无内容",
        "cov_rel": "覆盖（相对最佳）", "wcov_rel": "上下文覆盖（相对最佳）", "in_window": "在所问时间内",
        "recalled": "最近被想起",
    },
}


# the stored words English does not say as they are stored (issue 27: a reply showed ``message_out``)
EN_WORDS: dict[str, dict[str, str]] = {
    "line": {"message_in": "message", "message_out": "the bot's reply"},
}
SPACED = ("count",)  # English says these with spaces: kept_apart is "kept apart", bad_field "bad field"


def word(lang: str, group: str, value: str) -> str:
    """``value`` (a stored word of ``group``) as ``lang`` says it."""
    if lang == ZH:
        return ZH_WORDS[group].get(value, value)
    said = EN_WORDS.get(group, {}).get(value, value)
    return said.replace("_", " ") if group in SPACED else said


# ---- times -------------------------------------------------------------------------------------------
TIME_TEXTS: dict[str, tuple[str, str]] = {  # key -> (English, Chinese); English counts "one|many"
    "undated": ("undated", "无日期"),
    "just_now": ("just now", "刚刚"),
    "minute": ("{n} minute ago|{n} minutes ago", "{n} 分钟前"),
    "hour": ("{n} hour ago|{n} hours ago", "{n} 小时前"),
    "day": ("{n} day ago|{n} days ago", "{n} 天前"),
    "month": ("{n} month ago|{n} months ago", "{n} 个月前"),
    "year": ("{n} year ago|{n} years ago", "{n} 年前"),
    "when": ("{date}, {ago}", "{date}（{ago}）"),
}
_UNITS = (("minute", 60, 60), ("hour", 3600, 24), ("day", 86400, 60), ("month", 86400 * 30.44, 12),
          ("year", 86400 * 365.25, None))


def ago(then: datetime, now: datetime, lang: str = EN) -> str:
    """``just now``, ``5 minutes ago``, ``9 days ago``, ``3 months ago`` (``9 天前`` in Chinese)."""
    s = age(then, now).total_seconds()
    for unit, size, limit in _UNITS:
        n = int(s // size)
        if limit is None or n < limit:
            if n == 0 and unit == "minute":
                return pick(lang, TIME_TEXTS["just_now"])
            one, _, many = pick(lang, TIME_TEXTS[unit]).partition("|")
            return (one if n == 1 or not many else many).format(n=n)
    return "long ago"  # pragma: no cover - the loop always returns


def when(then: datetime | None, now: datetime, tz: tzinfo | None, lang: str = EN) -> str:
    """``2026-11-20, 9 days ago`` / ``2026-11-20（9 天前）``: the day in ``tz`` and how long ago."""
    if then is None:
        return pick(lang, TIME_TEXTS["undated"])
    return pick(lang, TIME_TEXTS["when"]).format(date=f"{then.astimezone(tz):%Y-%m-%d}",
                                                 ago=ago(then, now, lang))


# ---- errors ------------------------------------------------------------------------------------------
class Said(Exception):
    """An error a person reads, in either language: a key of its catalogue (``texts``, each kind of
    error names the table its keys are in) and the values it is filled with; a value that is a
    function of the language is said in the reader's. ``str``: English."""

    texts: ClassVar[Mapping[str, tuple[str, str]]] = {}

    def __init__(self, key: str = "", **values: object):
        self.key, self.values = key, values
        super().__init__(self.text(EN))

    def text(self, lang: str) -> str:
        """What the error says in ``lang`` ("" without a key)."""
        if not self.key:
            return ""
        values = {k: v(lang) if callable(v) else v for k, v in self.values.items()}
        return pick(lang, self.texts[self.key]).format(**values)
