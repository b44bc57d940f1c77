"""The dashboard's labels in English and Chinese, chosen by the browser's Accept-Language."""

from __future__ import annotations

LANGS = ("en", "zh")

LABELS: dict[str, tuple[str, str]] = {  # key -> (English, Chinese)
    "title": ("Engram", "Engram 记忆"),
    "overview": ("Overview", "概览"),
    "memories": ("Memories", "记忆"),
    "memory": ("Memory", "记忆"),
    "place": ("Place", "地点"),
    "places": ("Places", "地点"),
    "people": ("People", "人物"),
    "recall": ("Recall explained", "召回解释"),
    "graph": ("Graph", "关系图"),
    "diary": ("Diary", "日记"),
    "identity": ("Identity", "自我认知"),
    "episodes": ("Episodes", "消息"),
    "episodes_per_day": ("Episodes per day", "每日消息数"),
    "by_kind": ("By kind", "按类型"),
    "by_scope": ("By scope", "按范围"),
    "by_status": ("By status", "按状态"),
    "jobs": ("Jobs: last runs and failures", "任务：最近运行与失败"),
    "models": ("Models", "模型"),
    "embedder": ("Embedder", "向量模型"),
    "chat_model": ("Chat model", "对话模型"),
    "index": ("Index coverage", "索引覆盖"),
    "indexed": ("indexed", "已索引"),
    "not_yet": ("Not there yet.", "尚未提供。"),
    "no_jobs": ("No job has run yet.", "还没有任务运行过。"),
    "never_run": ("never run yet", "尚未运行"),
    "job": ("Job", "任务"),
    "last_run": ("Last run (UTC)", "最近运行 (UTC)"),
    "runs_failed": ("Runs / failed", "运行 / 失败"),
    "last_did": ("Last run did", "最近一次结果"),
    "failed_calls": ("failed calls in all", "累计失败调用"),
    "refused": ("refused in all", "累计拒绝"),
    "scope": ("Scope", "范围"),
    "kind": ("Kind", "类型"),
    "status": ("Status", "状态"),
    "person": ("Person", "人物"),
    "search": ("Search", "搜索"),
    "text": ("Text", "内容"),
    "filter": ("Filter", "筛选"),
    "any": ("any", "全部"),
    "subjects": ("About", "关于"),
    "strength": ("Strength", "强度"),
    "importance": ("Importance", "重要性"),
    "created": ("Created", "创建于"),
    "sources": ("Source episodes, in their conversation", "来源消息（含上下文）"),
    "versions": ("Every version", "所有版本"),
    "no_sources": ("Told directly: no source episodes.", "直接告知：没有来源消息。"),
    "timeline": ("Timeline", "时间线"),
    "learned_here": ("Memories learned here", "在此学到的记忆"),
    "none": ("None.", "无。"),
    "page_of": ("Page {page} of {pages} ({total} in all)", "第 {page}/{pages} 页（共 {total} 条）"),
    "prev": ("Previous", "上一页"),
    "next": ("Next", "下一页"),
    "query": ("Query", "查询"),
    "audience": ("Audience (a place)", "受众（地点）"),
    "owner_chat": ("This is the owner's private chat", "这是主人的私聊"),
    "explain": ("Explain", "解释"),
    "hits": ("Ranked hits", "排序结果"),
    "score": ("Score", "得分"),
    "features": ("Features", "特征"),
    "injected": ("injected", "已注入"),
    "over_budget": ("over budget", "超出预算"),
    "block": ("The block that would be injected", "将被注入的内容"),
    "tokens": ("tokens", "词元"),
    "no_hits": ("Nothing this audience may see matches.", "该受众可见的内容中没有匹配项。"),
    "graph_help": (
        "People (circles) and the memories about them (squares); lines between people: who answers whom.",
        "人物（圆）与关于他们的记忆（方块）；人物之间的连线：谁回复谁。",
    ),
    "shown_of": (
        "The first {shown} of {total}, the largest first.",
        "共 {total} 项，显示最多的前 {shown} 项。",
    ),
    "graph_shown": (
        "Shown: the {talks} pairs of people who answer each other most (of {talks_total}) and the {memories}"
        " most important memories about someone (of {memories_total}); every count is over all episodes.",
        "显示：互相回复最多的 {talks} 对人物（共 {talks_total} 对），以及关于某人最重要的 {memories} 条记忆"
        "（共 {memories_total} 条）；所有计数涵盖全部消息。",
    ),
    "diary_none": ("No diary entries yet.", "还没有日记。"),
    "identity_note": ("Core identity (identity/self.md)", "核心身份（identity/self.md）"),
    "identity_none": ("No core identity written yet.", "还没有写核心身份。"),
    "self_image": ("Self-image (identity/self-image.md)", "自我形象（identity/self-image.md）"),
    "self_image_none": (
        "No self-image yet: it is written after the first diary.",
        "还没有自我形象：第一篇日记之后生成。",
    ),
    "image_history": ("Earlier self-images", "以前的自我形象"),
    "core_history": ("Earlier core identities", "以前的核心身份"),
    "history_none": ("No earlier version.", "没有更早的版本。"),
    "replaced_at": ("replaced", "替换于"),
    "proposals": (
        "Open identity proposals (/mem approve, /mem reject)",
        "待定的身份提议（/mem approve、/mem reject）",
    ),
    "proposals_none": ("No proposal waits for the owner.", "没有等待主人决定的提议。"),
    "change": ("Change", "修改"),
    "reason": ("Reason", "理由"),
    "proposed": ("Proposed", "提出时间"),
    "error": ("Error", "错误"),
    "not_found": ("Not found", "未找到"),
    "said": ("said", "说"),
    "you": ("the bot", "机器人"),
}


def pick_lang(accept_language: str) -> str:
    """``zh`` or ``en``: the first of them the browser prefers (by q value), else ``en``."""
    best, best_q = "en", -1.0
    for order, part in enumerate(accept_language.split(",")[:20]):
        tag, _, params = part.strip().partition(";")
        try:
            q = float(params.strip()[2:]) if params.strip().startswith("q=") else 1.0
        except ValueError:
            q = 0.0
        base = tag.strip().lower().split("-")[0]
        if base in LANGS and q > best_q and q > 0:
            best, best_q = base, q - order * 1e-6
    return best


def pick(lang: str, pair: tuple[str, str]) -> str:
    """The text of an (English, Chinese) pair in ``lang`` (the dashboard's labels, the /mem replies)."""
    en, zh = pair
    return zh if lang == "zh" else en


def label(lang: str, key: str) -> str:
    return pick(lang, LABELS[key])
