"""The replies of the bot's self in English and Chinese: identity, proposals, the diary, the
dashboard's link. Part of the reply catalogue (``reply_catalogue.TEXTS``), kept apart for its size."""

from __future__ import annotations

SELF_TEXTS: dict[str, tuple[str, str]] = {  # key -> (English, Chinese)
    "not_owner": (
        "Engram: only the bot's owner decides about its identity (config key owner_ids).",
        "Engram：只有机器人的主人能决定它的身份（配置项 owner_ids）。",
    ),
    "not_proposal_id": ("{arg} is not a proposal number", "{arg} 不是提议编号"),
    "no_proposal": ("no proposal #{id}", "没有提议 #{id}"),
    "proposal_decided": ("proposal #{id} was already {status}", "提议 #{id} 已经{status}过了"),
    "status_approved": ("approved", "批准"),
    "status_rejected": ("rejected", "拒绝"),
    "no_proposals": ("No identity proposal waits for you.", "没有等你决定的身份提议。"),
    "proposal": ("#{id} ({day}, from {place}): {change}", "#{id}（{day}，来自 {place}）：{change}"),
    "proposal_reason": (" — because {reason}", " —— 理由：{reason}"),
    "proposals_hidden": (
        "({n} more waits, made in other chats: /mem proposals in your private chat with the bot shows "
        "it)|({n} more wait, made in other chats: /mem proposals in your private chat with the bot shows "
        "them)",
        "（还有 {n} 条在等待，来自其他聊天：在你和机器人的私聊里发送 /mem proposals 可以看到）",
    ),
    "proposals_head": (
        "Proposed changes to identity/self.md (/mem approve <id> or /mem reject <id>):",
        "对 identity/self.md 的修改提议（/mem approve <编号> 批准，/mem reject <编号> 拒绝）：",
    ),
    "approved": (
        "Approved #{id}: identity/self.md ends with it now; the old version is in identity/history/.",
        "已批准 #{id}：它已经加到 identity/self.md 的末尾；旧版本保存在 identity/history/。",
    ),
    "rejected": (
        "Rejected #{id}; identity/self.md is unchanged.",
        "已拒绝 #{id}；identity/self.md 没有改动。",
    ),
    "diary_not_owner": (
        "Engram: the diary is the owner's; ask in your private chat with the bot.",
        "Engram：日记仅主人私聊可见；请在你和机器人的私聊里查看。",
    ),
    "diary_no_owner": (
        "Engram: the diary is for the bot's owner alone; until one is configured no chat shows it. It is "
        "kept in diary/<date>.md in Engram's data folder and on the dashboard's Diary page.",
        "Engram：日记只给机器人的主人看；配置主人之前，任何聊天里都看不到。它保存在 Engram 数据文件夹的 "
        "diary/日期.md 里，也可以在管理面板的“日记”页查看。",
    ),
    "diary_off": (
        "Engram: the diary job is not running (diary_enabled is off, or the jobs did not start).",
        "Engram：日记任务没有在运行（diary_enabled 已关闭，或后台任务没有启动）。",
    ),
    "diary_one_date": ("one date at most, not {dates}", "最多一个日期，不是 {dates}"),
    "diary_not_date": ("{arg} is not a date like 2026-11-30", "{arg} 不是 2026-11-30 这样的日期"),
    "diary_range": ("{arg} is out of range (years 2 to 9998)", "{arg} 超出范围（年份 2 到 9998）"),
    "diary_not_ended": (
        "Engram: {day} has not ended yet (a day ends at {hour}:00 the next morning); its diary is written "
        "once it has.",
        "Engram：{day} 还没有结束（一天到第二天早上 {hour}:00 才结束）；结束后才会写这天的日记。",
    ),
    "diary_empty": ("{day}: nothing was lived that day; no diary.", "{day}：那天什么也没有经历，没有日记。"),
    "diary_head": ("Diary of {day} ({status}, m{id}):", "{day} 的日记（{status}，m{id}）："),
    "diary_cut": (
        "(cut: {n} characters in all; the whole diary: the dashboard's Diary page, or the file "
        "diary/{day}.md in Engram's data folder)",
        "（已截断：全文共 {n} 个字符；完整日记见仪表盘的“日记”页，或 Engram 数据文件夹里的 "
        "diary/{day}.md）",
    ),
    "dashboard_not_owner": (
        "Engram: /mem dashboard answers only in the owner's private chat.",
        "Engram：/mem dashboard 只在主人私聊里回答。",
    ),
    "dashboard_disabled": (
        "Engram: the dashboard is disabled (dashboard_enabled).",
        "Engram：仪表盘已关闭（dashboard_enabled）。",
    ),
    "dashboard_down": (
        "Engram: the dashboard is not running (see the log: the port may be in use).",
        "Engram：仪表盘没有在运行（见日志：端口可能被占用）。",
    ),
    "dashboard_link": (
        "Engram dashboard (this machine only): {url}\nOpen it in a browser on the bot's machine; the link "
        "sets a cookie and then drops the token from the address.",
        "Engram 仪表盘（仅限本机）：{url}\n请在运行机器人的电脑上用浏览器打开；链接会先设置 "
        "cookie，再从地址栏里去掉令牌。",
    ),
}
