"""Data words in a reply (a memory's kind and status, a line's kind, a job's name and how its run
went, recall's feature names...) and the core's errors, in the reply's language.

English shows a word as it is stored (it is English already); Chinese says it from ``ZH_WORDS``. An
error says its code's text from the catalogue (``reply_errors``); one without a code says its kind
and, in parentheses, the core's message.
"""

from __future__ import annotations

from ..memory.errors import EngramError
from .reply_catalogue import TEXTS, say

ZH_WORDS: dict[str, dict[str, str]] = {
    "kind": {"fact": "事实", "preference": "偏好", "event": "事件", "relation": "关系", "plan": "计划",
             "diary": "日记", "reflection": "反思", "note": "笔记"},
    "status": {"active": "有效", "superseded": "已被取代", "archived": "已淡忘归档"},
    "line": {"message_in": "收到的消息", "message_out": "机器人的回复", "observation": "观察",
             "image": "图片", "note": "笔记"},
    "job": {"consolidate": "整理", "fade": "淡忘", "merge": "合并", "check": "检查", "diary": "日记",
            "self-image": "自我形象"},
    "run": {"ok": "成功", "failed": "失败", "running": "运行中", "cancelled": "已取消",
            "interrupted": "被中断"},
    "diary": {"written": "新写的", "rewritten": "重写的", "exists": "已写过", "empty": "无"},
    # a consolidation's refusals and failures, and the counts /mem stats shows of the other jobs
    "count": {"bad_field": "字段不对", "unknown_op": "未知操作", "invented_id": "编造的编号",
              "foreign_source": "别处的来源", "other_scope": "看不到的记忆", "wider_scope": "范围过宽",
              "unforeseen": "意外错误", "unavailable": "模型不可用", "timeout": "超时", "error": "出错",
              "malformed": "回答格式不对", "archived": "归档", "protected": "受保护", "merged": "合并",
              "kept_apart": "保持分开", "failed": "失败"},
    # the fields of a model's JSON answer (diary, inner state, self-image), named in its errors
    "field": {"entry": "日记", "mood": "心情", "valence": "情绪", "energy": "精力", "on_mind": "心事",
              "self_image": "自我形象"},
    "feature": {
        "kw": "关键词", "cos": "语义", "cos_qq": "语义（问句）", "mix": "综合", "both": "两路都命中",
        "kw_rank": "关键词名次", "cos_rank": "语义名次", "nb_prev": "前一句", "nb_next": "后一句",
        "nb2": "隔一句", "session_best": "同段最佳", "mix_rank": "综合名次", "question_turn": "提问",
        "length": "长度", "has_date": "含日期", "when_dated": "问时间且含日期", "is_memory": "是记忆",
        "recency": "新近", "date_match": "日期吻合", "speaker_named": "提到说话人", "has_image": "含图片",
        "strength": "强度", "importance": "重要性", "after_question": "紧跟提问", "cov": "覆盖",
        "wcov": "上下文覆盖", "own": "机器人自己的话", "empty": "无内容", "cov_rel": "相对覆盖",
        "wcov_rel": "相对上下文覆盖", "in_window": "在所问时间内", "recalled": "最近想起过",
    },
}


def word(lang: str, group: str, value: str) -> str:
    """``value`` (a stored word of ``group``) as a reply in ``lang`` says it."""
    return ZH_WORDS[group].get(value, value) if lang == "zh" else value


def error_text(lang: str, e: EngramError) -> str:
    """What ``e`` says, in ``lang``: English, the core's own message (with every detail it names)."""
    if lang != "zh":
        return str(e)
    if e.code and f"err_{e.code}" in TEXTS:
        try:
            values = {**e.values}
            if "key" in values:  # a field of the model's answer: what it holds
                values["key"] = word(lang, "field", str(values["key"]))
            if "keys" in values:
                values["keys"] = "、".join(word(lang, "field", k) for k in str(values["keys"]).split(", "))
            return say(lang, f"err_{e.code}", **values)
        except (KeyError, IndexError):  # a raise site that names other values than the catalogue
            pass
    kind = next(f"err_kind_{c.__name__}" for c in type(e).__mro__ if f"err_kind_{c.__name__}" in TEXTS)
    return f"{say(lang, kind)}（{e}）"


def failure(lang: str, recorded: str) -> str:
    """A job's failure as its record keeps it (``<kind of error>: <message>``), in ``lang``: Chinese
    says the kind of error (the message, English, is in the log and on the dashboard)."""
    if lang != "zh":
        return recorded
    kind, _, _ = recorded.partition(":")
    return say(lang, f"err_kind_{kind}") if f"err_kind_{kind}" in TEXTS else f"{kind}（详见日志）"
