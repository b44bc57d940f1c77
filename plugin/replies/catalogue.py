"""Every ``/mem`` reply, usage line, refusal and help line in English and Chinese: key -> (English,
Chinese), on one table (the core's errors, by their code, are in ``errors.py`` and joined in here).

``say(lang, key, **values)`` gives one in the reply's language (``language.py`` chooses it). Memory
text, names, ids, places and option names are filled in as they are; stored words and times are said
through ``memory.wording`` (the dashboard's vocabulary too). A counted noun is one key whose English
holds ``singular|plural`` (``counted``).
"""

from __future__ import annotations

from collections.abc import Sequence

from ...memory.wording import ZH, pick
from .errors import ERROR_TEXTS

TEXTS: dict[str, tuple[str, str]] = {  # key -> (English, Chinese)
    # ---- the registry: refusals, usage, help, failures --------------------------------------------
    "refusal": ("Engram: /mem is for the bot's admins only.", "Engram：/mem 仅限机器人的管理员使用。"),
    "usage": ("Usage: {prog} {usage}", "用法：{prog} {usage}"),
    "unknown_sub": (
        "Unknown subcommand {name}. Usage: {prog} <{names}> ...",
        "没有子命令 {name}。用法：{prog} <{names}> ...",
    ),
    "error": ("Engram: {error}", "Engram：{error}"),
    "failed": (
        "Engram: {prog} {name} failed ({error}); see the log.",
        "Engram：{prog} {name} 出错了（{error}），详见日志。",
    ),
    "help_head": ("Engram commands (admins only):", "Engram 记忆指令（仅限管理员）："),
    "help_lang": (
        "回复语言：在 Engram 配置中把 reply_language 设为 zh，所有回复都用中文。",
        "回复语言：配置项 reply_language（auto：指令本身有中文就用中文，否则用英文；zh；en）。",
    ),
    "help_more": ("/mem help <subcommand> shows each", "发送 /mem help <子命令> 可以逐条查看"),
    "no_owner": (
        "no owner is configured, so a memory scoped owner would show nowhere. Add the owner's id to "
        "owner_ids in Engram's configuration (AstrBot WebUI: Plugins -> Engram; /sid in the owner's "
        "private chat shows the id), or use another --scope.",
        "还没有配置主人，范围为 owner 的记忆在任何地方都看不到。请把主人的 ID 加到 Engram 配置的 "
        "owner_ids 里（AstrBot 管理面板：插件 -> Engram；在主人的私聊里发送 /sid 可以看到 "
        "ID），或者换一个 --scope。",
    ),
    "hint_no_owner": (
        " No owner is configured yet: to make this chat the owner's, add {me} to owner_ids in Engram's "
        "configuration (AstrBot WebUI: Plugins -> Engram).",
        "还没有配置主人：要让这个私聊成为主人的私聊，请在 Engram 配置的 owner_ids 里加上 {me}（AstrBot "
        "管理面板：插件 -> Engram）。",
    ),
    "hint_bare_id": (
        " owner_ids holds {bare} without its platform, which counts only while the bot has one chat "
        "platform; write {me}.",
        "owner_ids 里的 {bare} 没有写平台，只在机器人只接入一个聊天平台时才算数；请写成 {me}。",
    ),
    "forget_waits": (
        "Engram: {what}; this forget waits for it and follows right after.",
        "Engram：{what}；这次忘记会等它写完后马上进行。",
    ),
    "holder_diary": ("the diary job is writing now", "日记任务正在写入"),
    "holder_self-image": ("the self-image job is writing now", "自我形象任务正在写入"),
    "holder_forget": ("another forget is running now", "另一个忘记操作正在进行"),
    "cut_reply": (
        "({n} more lines not shown: a chat message carries about 3,000 characters; {rest})",
        "（还有 {n} 行没有显示：一条聊天消息大约只能放 3,000 个字符；{rest}）",
    ),
    "rest_dashboard": ("the dashboard shows them all", "仪表盘里可以看到全部"),
    # ---- arguments ------------------------------------------------------------------------------
    "arg_not_id": ("{arg} is not a memory id (like 12 or m12)", "{arg} 不是记忆编号（例如 12 或 m12）"),
    "arg_needs_value": ("{option} needs a value", "{option} 后面需要一个值"),
    "arg_kind": ("unknown kind {kind}: one of {kinds}", "没有类型 {kind}：可选 {kinds}"),
    "arg_page": (
        "--page needs a page number (1, 2, ...), not {value}",
        "--page 需要页码（1、2……），不是 {value}",
    ),
    "arg_scope_value": (
        "--scope needs a value: public, self, owner or space:<place>",
        "--scope 后面需要一个值：public、self、owner 或 space:<地点>",
    ),
    "arg_scope": (
        "invalid scope {scope}: use public, self, owner or space:<space>",
        "无效的范围 {scope}：请用 public、self、owner 或 space:<地点>",
    ),
    # ---- counts --------------------------------------------------------------------------------
    "n_line": ("{n} line|{n} lines", "{n} 条消息"),
    "n_memory": ("{n} memory|{n} memories", "{n} 条记忆"),
    "n_proposal": ("{n} identity proposal|{n} identity proposals", "{n} 条身份提议"),
    "n_version": ("{n} version|{n} versions", "{n} 个版本"),
    "n_place": ("{n} place|{n} places", "{n} 个地方"),
    "n_person": ("{n} person|{n} people", "{n} 个人"),
    "n_secret": ("{n} secret|{n} secrets", "{n} 处机密"),
    "n_run": ("{n} run|{n} runs", "共运行 {n} 次"),
    "n_call": ("{n} model call|{n} model calls", "调用模型 {n} 次"),
    "and": ("{first} and {last}", "{first}和 {last}"),
    "files_left": (
        " (the files beside the store, such as the diary, could not be written now: they are finished at "
        "the next start; see the log)",
        "（存储旁边的文件，例如日记，现在写不进去：下次启动时会补完；详见日志）",
    ),
    # ---- stats, recall, why ------------------------------------------------------------------------
    "stats_here": (
        "Engram here ({place}): {episodes} recorded in this place, {memories} this chat may see; "
        "embeddings {embedder}. Totals over every place: /mem stats in the owner's private chat.",
        "Engram（此处：{place}）：这里记录了 {episodes}，本聊天可见 {memories}；向量模型 "
        "{embedder}。所有地方的总数：在主人私聊里发送 /mem stats。",
    ),
    "stats_unmatched": (
        "Config entries that match no place (nothing is left out or made public by them): {entries}. "
        "Write a place as /sid shows it (qq:GroupMessage:123) or as Engram names it (aiocqhttp:group:123).",
        "这些配置条目对不上任何地方（它们没有起作用）：{entries}。请写成 /sid 显示的样子"
        "（qq:GroupMessage:123）或 Engram 的写法（aiocqhttp:group:123）。",
    ),
    "stats_all": (
        "Engram: {episodes}, {memories} ({archived} archived, {superseded} superseded), "
        "{spaces}, {people}; embeddings {embedder} ({indexed} indexed); {secrets_redacted} (keys, "
        "tokens, passwords, card numbers) redacted before recording. This place: {place} "
        "(the owner's private chat)",
        "Engram：{episodes}，{memories}（{archived} 条已淡忘归档，{superseded} "
        "条已被新版本取代），{spaces}，{people}；向量模型 {embedder}（已索引 {indexed} "
        "条）；记录前已隐去 {secrets_redacted}（密钥、令牌、密码、卡号）。此处：{place}（主人私聊）",
    ),
    "stats_kept": (
        "{n} messages said while the store could not be written are kept in {file}; they are recorded "
        "as soon as it can be (a damaged store: at the first start after it is repaired or replaced)",
        "有 {n} 条消息在存储无法写入时暂存在 {file}；一旦能写入就会记录（存储损坏时：在修复或替换后的"
        "首次启动时）",
    ),
    "hit": (
        "{key} score {score} ({features}) {when}: {text}",
        "{key} 得分 {score}（{features}）{when}：{text}",
    ),
    "over_budget": (" [over budget]", " [超出预算]"),
    "recall_none": ("Nothing recalled here for {query}.", "在这里没有想起与 {query} 有关的内容。"),
    "recall_head": ("Recalled here for {query}:", "在这里为 {query} 想起："),
    "why_none": (
        "Nothing was injected in this chat since Engram started.",
        "自 Engram 启动以来，这个聊天还没有注入过记忆。",
    ),
    "why_forgotten": (
        "Nothing was injected in this chat since the last forget ({when}), which cleared what earlier "
        "injections held; the next reply here shows it again.",
        "自上次忘记操作（{when}）以来，这个聊天还没有注入过记忆；那次操作清除了之前注入的记录，下次回复后会再显示。",
    ),
    "why_head": ("Last injection here {when} for {query}:", "这里最近一次注入：{when}，针对 {query}："),
    "why_empty": ("no memories (nothing recalled fit).", "没有注入记忆（想起的内容都不合适）。"),
    "why_gone": ("({n} no longer to be seen here)", "（{n} 条现在这里已看不到）"),
    "why_left": ("({n} more recalled but over the budget)", "（另有 {n} 条想起了，但超出了预算）"),
    # ---- remember, show, forget, scope, list ---------------------------------------------------------
    "too_long": (
        "Not remembered: the text has {n} characters, at most {max}; split it into several memories.",
        "没有记住：这段内容有 {n} 个字符，最多 {max} 个；请拆成几条记忆。",
    ),
    "not_remembered": ("Not remembered: {why}", "没有记住：{why}"),
    "no_scope_here": (
        "no scope {scope} here (name a scope this chat does not see only in the owner's private chat)",
        "这里没有范围 {scope}（本聊天看不到的范围只能在主人私聊里指定）",
    ),
    "remembered_kept": (
        "Already remembered as m{id} (scope {scope}).",
        "已经记住了：m{id}（范围 {scope}）。",
    ),
    "remembered": ("Remembered m{id} (scope {scope}).", "记住了 m{id}（范围 {scope}）。"),
    "remembered_updated": (
        "Remembered m{id} (scope {scope}), a new version of an earlier memory.",
        "记住了 m{id}（范围 {scope}），是之前一条记忆的新版本。",
    ),
    "no_memory_here": ("no memory m{id} here", "这里没有记忆 m{id}"),
    "no_episode_here": ("no episode e{id} here", "这里没有消息 e{id}"),
    "show_head": (
        "m{id} ({kind}, {status}) scope {scope}, importance {importance}",
        "m{id}（{kind}，{status}）范围 {scope}，重要性 {importance}",
    ),
    "show_created": ("created {when}", "创建于 {when}"),
    "show_about": ("about: {who}", "关于：{who}"),
    "show_versions": ("versions: {chain}", "版本：{chain}"),
    "show_source": ("source e{id} {when} {who}: {text}", "来源 e{id} {when} {who}：{text}"),
    "show_hidden": (
        "(sources from other places are not shown here)",
        "（来自其他地方的来源这里不显示）",
    ),
    "show_cut": (
        "(cut: {n} characters in all; the whole text: the dashboard or `python -m "
        "astrbot_plugin_engram.memory --db <engram.db> show {key}`)",
        "（已截断：全文共 {n} 个字符；完整内容见仪表盘，或运行 `python -m astrbot_plugin_engram.memory "
        "--db <engram.db> show {key}`）",
    ),
    "the_bot": ("the bot", "机器人"),
    "episode_head": (
        "e{id} ({kind}) in {place}, {when}, {who}:",
        "e{id}（{kind}），在 {place}，{when}，{who}：",
    ),
    "episode_tail": ("(/mem forget e{id} erases it)", "（/mem forget e{id} 可以删除它）"),
    "forgot_episode": (
        "Forgot e{id}, the line from {place}, with what was drawn from it: {summary} erased.",
        "已忘记 e{id}（{place} 里的一条消息）以及由它得出的内容：共删除 {summary}。",
    ),
    "forget_elsewhere": (
        "m{id} came from lines of other chats; forget it with its lines in the owner's private chat "
        "(here: /mem forget m{id} --keep-lines forgets the memory alone)",
        "m{id} 来自其他聊天的消息；要连同这些消息一起忘记，请在主人私聊里操作（在这里：/mem forget m{id} "
        "--keep-lines 只忘记这条记忆）",
    ),
    "forgot_memory": ("Forgot m{id} ({versions}).", "已忘记 m{id}（{versions}）。"),
    "forgot_memory_drawn": (
        "Forgot m{id} ({versions}; and {proposals} drawn from it).",
        "已忘记 m{id}（{versions}；以及由它得出的 {proposals}）。",
    ),
    "forgot_sources": (
        "Forgot m{id} with the lines it came from: {summary} erased ({keys}).",
        "已忘记 m{id} 以及它的来源消息：共删除 {summary}（{keys}）。",
    ),
    "lines_kept": (
        " The lines it came from stay ({keys}; /mem forget e<id> erases one).",
        "它的来源消息保留了（{keys}；用 /mem forget 加上这些编号可以删除）。",
    ),
    "not_moved": ("Not moved: m{id} stays scope {scope}; {why}", "没有移动：m{id} 仍是范围 {scope}；{why}"),
    "move_elsewhere": (
        "no scope {scope} here (move a memory into another chat only from the owner's private chat)",
        "这里没有范围 {scope}（只能在主人私聊里把记忆移到别的聊天）",
    ),
    "moved": ("m{id} is now scope {scope} (was {old}).", "m{id} 的范围现在是 {scope}（原来是 {old}）。"),
    "list_all": ("the memories this chat may see", "本聊天可见的记忆"),
    "list_place": ("the memories of this place", "这个地方的记忆"),
    "list_person": ("the memories about {who} this chat may see", "本聊天可见的关于 {who} 的记忆"),
    "list_kind": ("{what} of kind {kind}", "{what}（类型 {kind}）"),
    "list_none": ("{what}: none yet.", "还没有{what}。"),
    "first_day": (
        "New lines are recalled as they are at once; they become memories once a chat has {n} new "
        "messages, or a day after the first of them when the chat pauses. /mem consolidate turns them "
        "into memories now.",
        "新消息马上就能按原话想起；一个聊天攒够 {n} 条新消息，或者第一条过了一天且聊天停下来时，它们会"
        "整理成记忆。/mem consolidate 可以现在就整理。",
    ),
    "first_day_manual": (
        "New lines are recalled as they are at once; they become memories only when you send "
        "/mem consolidate (consolidate_after_episodes and consolidate_every_minutes are 0).",
        "新消息马上就能按原话想起；只有发送 /mem consolidate 时才会整理成记忆（consolidate_after_episodes "
        "和 consolidate_every_minutes 都是 0）。",
    ),
    "list_past": (
        "There are {pages} page(s) of {what}; page {page} is past the end.",
        "{what}共 {pages} 页；第 {page} 页超出了范围。",
    ),
    "list_head": (
        "{what}, newest first (page {page} of {pages}, {total} in all):",
        "{what}，最新的在前（第 {page}/{pages} 页，共 {total} 条）：",
    ),
    "list_next": ("Next page: /mem list {args}--page {next}", "下一页：/mem list {args}--page {next}"),
    # ---- forget-person, forget-place, confirm ----------------------------------------------------------
    "no_person": (
        "no one called {who} is remembered; nothing was forgotten",
        "不记得有叫 {who} 的人；什么也没有忘记",
    ),
    "no_person_here": (
        "no one called {who} is remembered here (a person seen only elsewhere is named in the owner's "
        "private chat); nothing was forgotten",
        "这里不记得有叫 {who} 的人（只在别处出现过的人请在主人私聊里指定）；什么也没有忘记",
    ),
    "several_people": (
        "{who} names several people ({ids}); give the id",
        "{who} 对应好几个人（{ids}）；请给出 ID",
    ),
    "nothing_of_person": (
        "nothing is remembered by or about {person}; nothing was forgotten",
        "不记得 {person} 说过的或关于 {person} 的任何内容；什么也没有忘记",
    ),
    "nothing_of_place": (
        "nothing is remembered of the place {place}; nothing was forgotten",
        "不记得地点 {place} 的任何内容；什么也没有忘记",
    ),
    "no_place_here": (
        "no place {place} here (name another place only in the owner's private chat)",
        "这里没有地点 {place}（别的地点只能在主人私聊里指定）",
    ),
    "ask_confirm": (
        "This erases {what} for good, from every place. To go on, send /mem confirm {code} in this chat "
        "within {minutes} minutes.",
        "这会从所有地方永久删除：{what}。要继续，请在 {minutes} 分钟内在本聊天发送 /mem confirm {code}。",
    ),
    "erase_person": (
        "everything by or about {person}: {summary}",
        "{person} 说过的和关于 {person} 的一切：{summary}",
    ),
    "erase_place": ("the place {place}: {summary}", "地点 {place} 的一切：{summary}"),
    "confirm_failed": ("Engram: {error}. Nothing was forgotten.", "Engram：{error}。什么也没有忘记。"),
    "confirm_kept": (
        "Engram: nothing was forgotten yet: messages said while the store could not be written ({n}) are "
        "still waiting to be written, and a forget now would not reach them; try again once they are "
        "(the same code works until it expires)",
        "Engram：还没有忘记任何内容：存储无法写入时说的消息（{n} 条）还在等待写入，现在忘记会漏掉它们；"
        "等它们写入后再试（验证码在过期前仍然有效）",
    ),
    "confirm_unknown": ("no pending confirmation with code {code}", "没有等待确认的验证码 {code}"),
    "confirm_elsewhere": (
        "that code was given in another chat (or to someone else); ask again here",
        "这个验证码是在别的聊天里（或给别人）发的；请在这里重新申请",
    ),
    "confirm_expired": ("that code has expired; ask again", "这个验证码已过期；请重新申请"),
    "not_counted_elsewhere": (
        " here (plus whatever other chats hold, not counted here)",
        "（本聊天可见的部分；其他聊天里的不在此计数）",
    ),
    "forgot_target": ("Forgot {target}: {summary} erased.", "已忘记 {target}：共删除 {summary}。"),
    "exports_hold": (
        "\n{n} earlier export(s) still hold the forgotten text (a forget cannot reach files outside the "
        "store); delete them, or export again:\n{paths}",
        "\n之前导出的 {n} 份记忆包里仍有被忘记的内容（忘记无法触及存储之外的文件）；"
        "请删除它们或重新导出：\n{paths}",
    ),
    "exports_hold_elsewhere": (
        " The owner's {n} earlier export(s) may still hold it.",
        "主人之前导出的 {n} 份记忆包里可能仍有这些内容。",
    ),
    # ---- export -----------------------------------------------------------------------------------
    "export_not_owner": (
        "Engram: /mem export answers only in the owner's private chat (a bundle holds every chat).",
        "Engram：/mem export 只在主人私聊里回答（记忆包包含所有聊天的内容）。",
    ),
    "export_done": (
        "Exported everything Engram knows to {path} ({size} MB in {files} files): {episodes} lines, "
        "{memories} memory rows and {documents} documents, as plain text (SPEC.md).",
        "已把 Engram 记得的一切导出到 {path}（{files} 个文件，共 {size} 兆字节）：{episodes} 条消息、"
        "{memories} 条记忆（含旧版本）和 {documents} 份文档，均为纯文本（格式见 SPEC.md）。",
    ),
    # ---- consolidate ------------------------------------------------------------------------------
    "jobs_off": ("Engram: background jobs are not running.", "Engram：后台任务没有在运行。"),
    "no_lines_place": (
        "Engram: no place {place} has any lines; nothing was consolidated (this place is {here}).",
        "Engram：地点 {place} 没有任何消息；什么也没有整理（这里是 {here}）。",
    ),
    "consolidated": ("Consolidated: {summary}.", "整理完成：{summary}。"),
    "consolidated_place": ("Consolidated {place}: {summary}.", "已整理 {place}：{summary}。"),
    "run_counts": (
        "{added} added, {updated} updated, from {episodes}, {calls}",
        "新增 {added} 条，更新 {updated} 条，来自 {episodes}，{calls}",
    ),
    "run_refused": ("refused {counts}", "拒绝 {counts}"),
    "run_failed": ("failed {counts}", "失败 {counts}"),
    "run_skipped": ("{n} batches skipped", "跳过 {n} 批"),
    "run_sep": ("; ", "；"),
    "job_never": ("job {name}: never run yet", "任务 {name}：还没有运行过"),
    "job_last": (
        "job {name}: last run {when} ({status}); {runs}, {failures} failed",
        "任务 {name}：最近一次运行 {when}（{status}）；{runs}，失败 {failures} 次",
    ),
    "job_added": (
        "last run added {added}, updated {updated}; in all added {all_added}, updated {all_updated}, "
        "{calls}",
        "最近一次新增 {added} 条、更新 {updated} 条；累计新增 {all_added} 条、更新 {all_updated} 条，"
        "{calls}",
    ),
    "job_refused": ("refused: {counts}", "拒绝：{counts}"),
    "job_failed": ("failed calls: {counts}", "失败的调用：{counts}"),
    "job_skipped": ("skipped batches: {n}", "跳过的批次：{n}"),
    "job_shown": ("last run {last}; in all {total}", "最近一次 {last}；累计 {total}"),
    "kept_for_later": (
        "The lines of the failed calls are not lost: they are tried again later.",
        "调用失败的那些消息没有丢，稍后会再试。",
    ),
    "no_chat_model": ("No chat model can consolidate yet: {why}.", "还没有可以整理记忆的对话模型：{why}。"),
    "new_elsewhere": (
        "({n} new memories of other places not shown here)",
        "（另有 {n} 条其他地方的新记忆，这里不显示）",
    ),
    # ---- the bot's self: identity proposals, the diary, the dashboard --------------------------------
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
    "proposals_private": (
        "Engram: identity proposals are shown and decided only in your private chat with the bot.",
        "Engram：身份提议只在你和机器人的私聊里查看和决定。",
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
    "backup_not_owner": (
        "Engram: /mem backup answers only in the owner's private chat.",
        "Engram：/mem backup 只在主人私聊里回答。",
    ),
    "backup_done": (
        "Engram: backed up to {path} ({n} backups kept beside the store).",
        "Engram：已备份到 {path}（存储旁共保留 {n} 份备份）。",
    ),
    "backup_newest": (
        "; the newest backup is {path}: with the bot stopped, `python -m astrbot_plugin_engram.memory "
        "--db {store} restore {path}` puts it in place (what was forgotten since stays forgotten).",
        "；最新的备份是 {path}：停止机器人后，运行 `python -m astrbot_plugin_engram.memory --db {store} "
        "restore {path}` 即可恢复（此后忘记的内容仍然不会回来）。",
    ),
    "backup_none": ("; there is no backup of it", "；它没有备份"),
    "dashboard_not_owner": (
        "Engram: /mem dashboard answers only in the owner's private chat.",
        "Engram：/mem dashboard 只在主人私聊里回答。",
    ),
    "dashboard_disabled": (
        "Engram: the dashboard's own port is disabled (dashboard_enabled). Its pages are in AstrBot's "
        "WebUI: sidebar \"Engram memory\", behind its login.",
        "Engram：仪表盘自己的端口已关闭（dashboard_enabled）。它的页面在 AstrBot 的 WebUI 里：侧栏"
        "“Engram 记忆”，使用 WebUI 的登录。",
    ),
    "dashboard_down": (
        "Engram: the dashboard's own port is not running (see the log: the port may be in use). Its "
        "pages are in AstrBot's WebUI: sidebar \"Engram memory\", behind its login.",
        "Engram：仪表盘自己的端口没有在运行（见日志：端口可能被占用）。它的页面在 AstrBot 的 WebUI 里："
        "侧栏“Engram 记忆”，使用 WebUI 的登录。",
    ),
    "dashboard_link": (
        "Engram dashboard (this machine only): {url}\nOpen it in a browser on the bot's machine; the link "
        "sets a cookie and then drops the token from the address.\nAnywhere else (Docker, a VPS): the "
        "same pages are in AstrBot's WebUI, sidebar \"Engram memory\", behind its login.",
        "Engram 仪表盘（仅限本机）：{url}\n请在运行机器人的电脑上用浏览器打开；链接会先设置 "
        "cookie，再从地址栏里去掉令牌。\n在其他地方（容器或云服务器上）：同样的页面在 AstrBot 的 WebUI "
        "里，侧栏“Engram 记忆”，使用 WebUI 的登录。",
    ),
    # ---- /mem help: each subcommand's usage line (options as typed) and what it does -----------------
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
    "usage_forget": ("forget <id> [--keep-lines]", "forget <编号> [--keep-lines]"),
    "sub_forget": (
        "erase a memory, all its versions, the lines it came from and what else was drawn from them "
        "(m12; --keep-lines: the memory alone), or a line (e3) with what was drawn from it",
        "彻底忘记一条记忆及其所有版本、它的来源消息和由这些消息得出的其他内容（m12；--keep-lines："
        "只忘记这条记忆），或一条消息（e3）及由它得出的内容",
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
    "usage_backup": ("backup", "backup"),
    "sub_backup": (
        "a backup of the memory file now (in the owner's private chat only)",
        "现在备份记忆文件（仅主人私聊可用）",
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
    "usage_export": ("export", "export"),
    "sub_export": (
        "write everything Engram knows as plain text into the data folder (owner's private chat only)",
        "把 Engram 记得的一切以纯文本导出到插件数据文件夹（仅主人私聊）",
    ),
    # ---- the ranking that learns (commands/ranking.py) --------------------------------------------------
    "usage_ranking": ("ranking [reset]", "ranking [reset（恢复出厂权重）]"),
    "sub_ranking": (
        "the ranking weights this bot learned from what its replies used, against the shipped ones; "
        "reset puts the shipped ones back",
        "本机器人从回复用到的记忆中学到的排序权重（与出厂权重对比）；`/mem ranking reset` 恢复出厂权重",
    ),
    "usage_good": ("good", "good"),
    "sub_good": ("the last memories injected in this chat were the right ones",
                 "本聊天上一次注入的记忆选得对"),
    "usage_bad": ("bad", "bad"),
    "sub_bad": ("the last memories injected in this chat were the wrong ones",
                "本聊天上一次注入的记忆选得不对"),
    "ranking_off": (
        "Engram: the ranking does not learn (ranking_learn is off): recall uses the shipped weights.",
        "Engram：排序学习已关闭（ranking_learn）：召回使用出厂权重。",
    ),
    "ranking_served": (
        "Engram ranking: the learned weights are in use (they judge new feedback better than the shipped "
        "ones).",
        "Engram 排序：正在使用学到的权重（它们对新反馈的判断优于出厂权重）。",
    ),
    "ranking_shipped": (
        "Engram ranking: the shipped weights are in use (the learned ones have not judged new feedback "
        "better).",
        "Engram 排序：正在使用出厂权重（学到的权重对新反馈的判断还没有更好）。",
    ),
    "ranking_feedback": (
        "Feedback since the last reset: {replies} replies checked ({used} notes used), /mem good {good}, "
        "/mem bad {bad}; {steps} learning steps; gain over the shipped weights on the last {judged} judged "
        "recalls: {gain}.",
        "上次重置以来的反馈：检查了 {replies} 条回复（用到 {used} 条笔记），/mem good {good} 次，/mem bad "
        "{bad} 次；学习 {steps} 步；最近 {judged} 次被评判的召回上相对出厂权重的提升：{gain}。",
    ),
    "ranking_moved": ("Moved most (shipped -> now; largest move {largest}, root mean square {rms}):",
                      "变化最大的权重（出厂 -> 现在；最大变化 {largest}，均方根 {rms}）："),
    "ranking_unmoved": ("No weight has moved from the shipped ones.", "权重与出厂时相同。"),
    "ranking_how": ("/mem ranking reset puts the shipped weights back.",
                    "`/mem ranking reset` 恢复出厂权重。"),
    "ranking_reset": (
        "Engram: the ranking is back to the shipped weights; it learns again from the next replies.",
        "Engram：排序已恢复出厂权重；从之后的回复重新学习。",
    ),
    "judged_good": (
        "Engram: noted: the {n} notes injected last here were right (ranked above the {held} held back).",
        "Engram：已记下：这里上次注入的 {n} 条笔记选得对（排在未注入的 {held} 条之前）。",
    ),
    "judged_bad": (
        "Engram: noted: the {n} notes injected last here were wrong (the {held} held back rank above them).",
        "Engram：已记下：这里上次注入的 {n} 条笔记选得不对（未注入的 {held} 条应排在前面）。",
    ),
    # ---- the core's errors, by their code (errors.py) --------------------------------------------------
    **ERROR_TEXTS,
}


def say(lang: str, key: str, /, **values: object) -> str:
    """The text of ``key`` in ``lang`` (``zh`` or ``en``) with ``values`` filled in."""
    return pick(lang, TEXTS[key]).format(**values)


def counted(lang: str, key: str, n: int) -> str:
    """A counted noun: ``1 memory`` / ``3 memories`` / ``3 条记忆``."""
    text = pick(lang, TEXTS[key])
    one, _, many = text.partition("|")
    return (one if n == 1 or not many else many).format(n=n)


def and_list(lang: str, parts: Sequence[str]) -> str:
    """``a, b and c`` / ``a、b和c``."""
    if len(parts) < 2:
        return "".join(parts)
    comma = "、" if lang == ZH else ", "
    return say(lang, "and", first=comma.join(parts[:-1]), last=parts[-1])
