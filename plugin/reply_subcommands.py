"""The ``/mem`` subcommands' lines of the help in English and Chinese: each subcommand's usage line
(options as typed, ``usage_<name>``) and what it does (``sub_<name>``). Part of the reply catalogue
(``reply_catalogue.TEXTS``), kept apart: one table of what each command is, one of what it says."""

from __future__ import annotations

SUBCOMMAND_TEXTS: dict[str, tuple[str, str]] = {  # key -> (English, Chinese)
    "usage_help": ("help [subcommand]", "help [子命令]"),
    "sub_help": ("this list (with a subcommand: its line only)", "本列表（带子命令：只看这一条）"),
    "usage_stats": ("stats", "stats"),
    "sub_stats": (
        "how much is remembered (elsewhere than the owner's private chat: here)",
        "记住了多少（不在主人私聊时：只算这里）",
    ),
    "usage_recall": ("recall [--archived] <query>", "recall [--archived] <查询>"),
    "sub_recall": (
        "what would be injected here, with scores (--archived: faded memories too, revived)",
        "在这里会注入哪些记忆，附得分（--archived：连已淡忘的记忆也找，并唤醒它们）",
    ),
    "usage_why": ("why", "why"),
    "sub_why": ("the last injection in this chat, explained", "解释这个聊天最近一次注入了什么"),
    "usage_remember": ("remember <text> [--scope S]", "remember <内容> [--scope 范围]"),
    "sub_remember": (
        "a memory kept in this place (or in scope S)",
        "记下一条记忆，属于这个地方（或 --scope 指定的范围）",
    ),
    "usage_show": ("show <id>", "show <编号>"),
    "sub_show": (
        "a memory (m12) with its sources and versions, or a line (e3)",
        "查看一条记忆（m12）及其来源和版本，或一条消息（e3）",
    ),
    "usage_forget": ("forget <id> [--with-sources]", "forget <编号> [--with-sources]"),
    "sub_forget": (
        "erase a memory and all its versions (m12; --with-sources: and the lines it came from, and what "
        "else was drawn from them), or a line (e3) with what was drawn from it",
        "彻底忘记一条记忆及其所有版本（m12；--with-sources：连同它的来源消息和由这些消息得出的其他内容），"
        "或一条消息（e3）及由它得出的内容",
    ),
    "usage_scope": ("scope <id> <scope>", "scope <编号> <范围>"),
    "sub_scope": (
        "move a memory: public, self, owner or space:<place>",
        "改变记忆的范围：public（公开）、self（机器人自己）、owner（仅主人私聊可见）或 space:<地点>",
    ),
    "usage_list": (
        "list [place|<person>] [--kind K] [--page N]",
        "list [place|<人>] [--kind 类型] [--page 页码]",
    ),
    "sub_list": (
        "the memories this chat may see, newest first, with their ids",
        "列出本聊天可见的记忆，最新的在前，附编号（place：只看这个地方的；<人>：关于某人的）",
    ),
    "usage_forget-person": ("forget-person <name or id>", "forget-person <名字或 ID>"),
    "sub_forget-person": (
        "erase everything said by or about a person (asks for a confirmation)",
        "忘记某人说过的和关于他的一切（需要确认）",
    ),
    "usage_forget-place": ("forget-place [place]", "forget-place [地点]"),
    "sub_forget-place": (
        "erase every line and memory of this place (asks for a confirmation)",
        "忘记这个地方的所有消息和记忆（需要确认）",
    ),
    "usage_confirm": ("confirm <code>", "confirm <验证码>"),
    "sub_confirm": ("carry out the forget a code was given for", "执行验证码对应的忘记操作"),
    "usage_consolidate": ("consolidate [place|here]", "consolidate [地点|here]"),
    "sub_consolidate": (
        "turn new messages into memories now (all places, or one)",
        "现在就把新消息整理成记忆（所有地方，或指定一个；here：这里）",
    ),
    "usage_proposals": ("proposals", "proposals"),
    "sub_proposals": (
        "changes to its identity the bot proposed, waiting for the owner",
        "机器人提出的身份修改，等主人决定",
    ),
    "usage_approve": ("approve <id>", "approve <编号>"),
    "sub_approve": (
        "append a proposed change to identity/self.md (old one kept)",
        "批准提议，把它加到 identity/self.md（保留旧版本）",
    ),
    "usage_reject": ("reject <id>", "reject <编号>"),
    "sub_reject": ("turn a proposed identity change down", "拒绝一条身份修改提议"),
    "usage_diary": ("diary [YYYY-MM-DD] [--force]", "diary [YYYY-MM-DD] [--force]"),
    "sub_diary": (
        "write or show a day's diary (default: yesterday)",
        "写或查看某天的日记（默认昨天；--force：重写）；仅主人私聊可用",
    ),
    "usage_dashboard": ("dashboard", "dashboard"),
    "sub_dashboard": (
        "the dashboard's link (in the owner's private chat only)",
        "仪表盘链接（仅主人私聊可见）",
    ),
}
