"""The dashboard's labels in English and Chinese, chosen by the browser's Accept-Language. The words
inside them (a kind, a status, a job's counters, recall's features) are said through
``memory.wording``, the vocabulary the plugin's replies use too."""

from __future__ import annotations

from collections.abc import Callable

from ..memory.wording import LANGS, ZH, pick, word

LABELS: dict[str, tuple[str, str]] = {  # key -> (English, Chinese)
    "title": ("Engram", "Engram 记忆"),
    "overview": ("Overview", "概览"),
    "memories": ("Memories", "记忆"),
    "active_memories": ("active memories", "条有效记忆"),
    "besides": ("(besides: {archived} archived, {superseded} earlier versions kept as history)",
                "（另有 {archived} 条已归档，{superseded} 条作为历史保留的旧版本）"),
    "memory": ("Memory", "记忆"),
    "memories_about": ("Memories about {who}", "关于 {who} 的记忆"),
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
    "last_run": ("Last run", "最近运行"),
    "last_said": ("Last message", "最后一条消息"),
    "times_in": ("Times in {zone}", "时间均为 {zone}"),
    "runs_failed": ("Runs / failed", "运行 / 失败"),
    "last_did": ("Last run did", "最近一次结果"),
    "failed_calls": ("failed calls in all: {pairs}", "累计失败调用：{pairs}"),
    "refused": ("refused in all: {pairs}", "累计拒绝：{pairs}"),
    "failed_last": ("failed calls: {pairs}", "失败调用：{pairs}"),
    "refused_last": ("refused: {pairs}", "拒绝：{pairs}"),
    "scope": ("Scope", "范围"),
    "strength_scale": ("{value} of 1 now: halves every {days:g} days unrecalled, archived below {below:g}",
                       "现在 {value}（满分 1）：每 {days:g} 天未被想起减半，低于 {below:g} 归档"),
    "importance_scale": ("{value} of 1: {protected:g} or more is never archived",
                         "{value}（满分 1）：{protected:g} 及以上永不归档"),
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
    "first": ("First", "第一页"),
    "last": ("Last", "最后一页"),
    "latest": ("Latest", "最新一页"),
    "all_n": ("All {n} →", "全部 {n} 条 →"),
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
    "no_abilities_line": (
        "Made from the data folder (no plugin running): the same block the plugin makes, with its "
        "budget ({budget} tokens) and {k} hits, but without the line on what the bot can do, which "
        "lists AstrBot's tools and goes in only inside the running plugin.",
        "由数据文件夹生成（插件未运行）：与插件生成的内容相同，预算 {budget} 词元、{k} 条召回，"
        "但不含“能力”一行：它列出 AstrBot 的工具，只有运行中的插件才会加入。"),
    "no_hits": ("Nothing this audience may see matches.", "该受众可见的内容中没有匹配项。"),
    "graph_help": (
        "People (circles) and what the bot knows about them (squares, each labelled; the whole text on"
        " hover); lines between people: who answers whom. Click a person to see only them and those"
        " known together with them, a memory to open it.",
        "人物（圆）和机器人对他们的了解（方块，带标签；悬停看全文）；人物之间的连线：谁回复谁。"
        "点击人物只看此人及与其相关的人，点击记忆打开它。",
    ),
    "shown_of": (
        "The first {shown} of {total}, the largest first.",
        "共 {total} 项，显示最多的前 {shown} 项。",
    ),
    "graph_shown": (
        "Shown: the {people} people the bot knows most about (of {people_total}), up to {each} memories"
        " each, held most firmly first ({memories} of {memories_total}), and who answers whom among them"
        " ({talks} pairs of {talks_total}).",
        "显示：机器人最了解的 {people} 个人（共 {people_total} 人），每人最多 {each} 条记忆，"
        "最牢记的在前（共显示 {memories} 条，总共 {memories_total} 条），以及他们之间谁回复谁"
        "（{talks} 对，总共 {talks_total} 对）。",
    ),
    "written_by": ("Written by", "发送者"),
    "person_id": ("a person id (optional)", "人物编号（可选）"),
    "graph_place": ("Learned in", "学到的地点"),
    "graph_person": ("Person (id or name)", "人物（编号或名字）"),
    "graph_n": ("People", "人数"),
    "graph_everywhere": ("everywhere", "所有地点"),
    "graph_draw": ("Draw", "绘制"),
    "graph_of": ("Graph: {who}", "关系图：{who}"),
    "graph_all": ("Everyone", "所有人"),
    "no_places": ("No place has a recorded line yet.", "还没有记录任何地点的消息。"),
    "graph_none": ("Nothing to draw yet: no one has said anything that was recorded.",
                   "还没有可画的内容：还没有记录任何人说的话。"),
    "rewritten": ("Rewritten after a forget: the earlier versions", "遗忘后重写：查看之前的版本"),
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
    "id": ("id", "编号"),
    "where": ("Where", "所在"),
    "legend": ("What the columns measure (each from 0 to 1; the score weighs them)",
               "各列的含义（每项 0 到 1；得分是它们的加权和）"),
    "you": ("the bot", "机器人"),
}


# the groups of stored words a page shows as a value (the filter's option values and the JSON keep the
# stored word)
VALUE_GROUPS = ("kind", "status", "run", "scope")


# the jobs the hosts schedule (scheduler/jobs.py, scheduler/self_jobs.py), as a page names them
JOBS: dict[str, tuple[str, str]] = {
    "consolidate": ("consolidate", "整理记忆"),
    "fade": ("fade", "记忆淡化"),
    "merge": ("merge", "合并重复"),
    "check": ("check", "文件检查"),
    "backup": ("backup", "备份"),
    "diary": ("diary", "写日记"),
    "self-image": ("self-image", "自我形象"),
}
# what a host may say instead of a chat model's name (plugin/dashboard.py, dashboard/__main__.py)
HOST_WORDS: dict[str, tuple[str, str]] = {
    "none (command line)": ("none (command line)", "无（命令行）"),
    "the chat's current provider": ("the chat's current provider", "当前对话使用的模型提供商"),
}


def job_name(lang: str, name: str) -> str:
    """A job's name in ``lang`` (a job not listed: its name)."""
    return pick(lang, JOBS.get(name, (name, name)))


def host_word(lang: str, text: str) -> str:
    return pick(lang, HOST_WORDS.get(text, (text, text)))


def counter(lang: str, key: str) -> str:
    """A job counter's name as a page says it (English: the key with spaces)."""
    return word(lang, "count", key) if lang == ZH else key.replace("_", " ")


# messages of a bad request (400) or a missing page (404), with their parameters
MESSAGES: dict[str, tuple[str, str]] = {
    "too_long": ("{name} is longer than {n} characters", "{name}超过 {n} 个字符"),
    "nul": ("{name} contains a NUL character", "{name}含有 NUL 字符"),
    "not_whole": ("{name} must be a whole number, not {raw!r}", "{name}必须是整数，而不是 {raw!r}"),
    "page_range": ("page must be from 1 to {n}", "页码必须在 1 到 {n} 之间"),
    "size_range": ("size must be from 1 to {n}", "每页条数必须在 1 到 {n} 之间"),
    "not_memory_id": ("{raw!r} is not a memory id (like 12 or m12)",
                      "{raw!r} 不是记忆编号（例如 12 或 m12）"),
    "not_flag": ("{name} must be 1 or 0", "{name}必须是 1 或 0"),
    "bad_scope": ("{detail}", "范围 {raw!r} 无效：可用 public、owner、self 或 space:<地点>"),
    "one_of": ("{name} must be one of {options}", "{name}必须是以下之一：{options}"),
    "no_memory": ("no memory m{id}", "没有记忆 m{id}"),
    "no_place": ("no place {place!r}", "没有地点 {place!r}"),
    "query_empty": ("query is empty: type what to recall", "查询为空：请输入要召回的内容"),
    "unknown_audience": ("unknown audience: no place {place!r}", "未知的受众：没有地点 {place!r}"),
    "no_page": ("no page at {path}", "没有这个页面：{path}"),
    "graph_people": ("n must be from 1 to {n}", "人数必须在 1 到 {n} 之间"),
}
PARAM_NAMES: dict[str, tuple[str, str]] = {  # a parameter as a message names it
    "page": ("page", "页码"), "size": ("size", "每页条数"), "q": ("q", "搜索"), "kind": ("kind", "类型"),
    "status": ("status", "状态"), "scope": ("scope", "范围"), "place": ("place", "地点"),
    "person": ("person", "人物"), "space": ("space", "地点"), "owner": ("owner", "主人私聊"),
}


def param(name: str) -> Callable[[str], str]:
    """A parameter as an error names it, in the page's language."""
    return lambda lang: pick(lang, PARAM_NAMES.get(name, (name, name)))


def value(lang: str, stored: object) -> str:
    """A stored word (a kind, a status, a job's result, a scope) as this language says it."""
    said = str(stored)
    for group in VALUE_GROUPS:
        shown = word(lang, group, said)
        if shown != said:
            return shown
    return said


# recall's features (memory.recall.features.FEATURES), as the hits table names and explains them (the
# Chinese name is the vocabulary's: memory.wording, "feature")
FEATURES: dict[str, tuple[str, str, str]] = {  # name -> (English, its meaning, its meaning in Chinese)
    "kw": ("Keyword match", "how well the words match (BM25, scaled to the best)",
           "字词匹配程度（BM25，按最佳者缩放）"),
    "cos": ("Meaning match", "how close the meaning is (cosine of the vectors)",
            "语义接近程度（向量余弦）"),
    "cos_qq": ("Meaning as a question", "the same, with the item read as a question",
               "同上，把该条当作问题来比较"),
    "mix": ("Words + meaning", "the mean of the two matches",
            "两种匹配的平均值"),
    "both": ("Found both ways", "found by the keywords and by the meaning",
             "关键词和语义都找到了它"),
    "kw_rank": ("Keyword rank", "higher the nearer the top of the keyword list",
                "在关键词结果中越靠前越高"),
    "cos_rank": ("Meaning rank", "higher the nearer the top of the meaning list",
                 "在语义结果中越靠前越高"),
    "nb_prev": ("Line before", "how well the line just before matches",
                "紧接在前的一条消息的匹配程度"),
    "nb_next": ("Line after", "how well the line just after matches",
                "紧接在后的一条消息的匹配程度"),
    "nb2": ("Two lines away", "the better match two lines before or after",
            "前后隔一条的消息中较好的匹配"),
    "session_best": ("Best in its conversation", "the best match in the same stretch of conversation",
                     "同一段对话中的最佳匹配"),
    "mix_rank": ("Rank with neighbours", "rank by its match and its neighbours'",
                 "按自身与上下文匹配的排名"),
    "question_turn": ("Is a question", "the line asks a question",
                      "这条消息在提问"),
    "length": ("Length", "longer lines say more (up to 80 tokens)",
               "越长信息越多（最多 80 词元）"),
    "has_date": ("Names a time", "the text names a date or time",
                 "内容提到了日期或时间"),
    "when_dated": ("Time asked, time named", "names a time when the question asks when",
                   "问题问“何时”且内容提到时间"),
    "is_memory": ("Is a memory", "a memory rather than a chat line",
                  "是记忆而不是聊天消息"),
    "recency": ("Recent", "newer is higher (halves every few weeks)",
                "越新越高（每隔数周减半）"),
    "date_match": ("Date asked", "the question names its year or month",
                   "问题提到了它的年份或月份"),
    "speaker_named": ("Speaker named", "the question names who said it",
                      "问题提到了说话的人"),
    "has_image": ("Has an image", "the line holds an image",
                  "这条消息含有图片"),
    "strength": ("Strength", "a memory's strength (fades unless recalled)",
                 "记忆的强度（不被想起就会减弱）"),
    "importance": ("Importance", "a memory's importance",
                   "记忆的重要性"),
    "after_question": ("Answers a question", "the line before asks a question",
                       "前一条消息是提问"),
    "cov": ("Question covered", "share of the question's words in the text (rare words count more)",
            "问题中的词出现在内容里的比例（少见的词更重）"),
    "wcov": ("Covered with neighbours", "the same over the line and the lines around it",
             "同上，连同前后的消息一起算"),
    "cov_rel": ("Coverage vs best", "its coverage over the best one's",
                "覆盖率除以最佳者的覆盖率"),
    "wcov_rel": ("Neighbour coverage vs best", "the same with neighbours",
                 "同上，连同上下文"),
    "in_window": ("In the time asked", "happened in the time the question names (\"yesterday\")",
                  "发生在问题所说的时间内（“昨天”）"),
    "recalled": ("Recalled lately", "recently injected or shown",
                 "最近被注入或显示过"),
    "own": ("Said by the bot", "the bot's own line",
            "机器人自己说的话"),
    "empty": ("No content", "a line with nothing of its own (\"ok\", \"haha\")",
              "没有实际内容的消息（“好的”“哈哈”）"),
}


def feature(lang: str, name: str) -> tuple[str, str]:
    """A recall feature's name and meaning in ``lang`` (a feature not listed: its key)."""
    en, en_means, zh_means = FEATURES.get(name, (name, "", ""))
    return (word(lang, "feature", name), zh_means) if lang == ZH else (en, en_means)


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


def label(lang: str, key: str) -> str:
    return pick(lang, LABELS[key])
