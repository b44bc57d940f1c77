"""The core's errors said in a reply, in English or Chinese: a text for each code they carry
(``memory.errors``: ``err_<code>``) and a line for each kind of error that has none. English is the
core's own message, shown as it is (with the details only it names); the table is part of the reply
catalogue (``catalogue.TEXTS``)."""

from __future__ import annotations

from ...memory.errors import EngramError
from ...memory.wording import ZH, pick, word

ERROR_TEXTS: dict[str, tuple[str, str]] = {  # key -> (English, Chinese)
    "err_shut_down": ("Engram is shut down", "Engram 已经停止（插件正在关闭或已关闭）"),
    # ---- the soul bundle ------------------------------------------------------------------------
    "err_bundle_invalid": ("{file}:{line}: {problem}; nothing was imported",
                           "记忆包 {file} 第 {line} 行：{problem}；什么也没有导入"),
    "err_bundle_target": ("{folder} cannot hold a bundle (a file, or a folder that is not empty)",
                          "{folder} 无法存放记忆包（是文件，或是非空文件夹）"),
    "err_bundle_not_empty": ("the store {path} is not empty; nothing was imported",
                             "存储 {path} 不是空的；什么也没有导入"),
    "err_restore_conflict": ("another episode of {place} has the sequence number {seq}",
                             "{place} 里已有另一条序号为 {seq} 的消息"),
    "err_restore_out_of_order": ("a line at the sequence number {seq} of {place} would stand out of order",
                                 "{place} 里序号 {seq} 的消息会打乱它的先后顺序"),
    # ---- the store file -------------------------------------------------------------------------
    "err_store_folder": (
        "{path} is a folder; give the path of a store file inside it",
        "{path} 是一个文件夹；请给出里面存储文件的路径",
    ),
    "err_store_no_folder": (
        "cannot create {path}: the folder {folder} does not exist",
        "无法创建 {path}：文件夹 {folder} 不存在",
    ),
    "err_store_not_sqlite": (
        "{path} is not an Engram store (not an SQLite file); left untouched",
        "{path} 不是 Engram 的存储文件（不是 SQLite 文件）；没有改动它",
    ),
    "err_store_foreign": (
        "{path} is an SQLite file of another program; left untouched",
        "{path} 是别的程序的 SQLite 文件；没有改动它",
    ),
    "err_store_unreadable": (
        "{path} cannot be read as an Engram store; left untouched",
        "{path} 无法作为 Engram 的存储文件读取；没有改动它",
    ),
    "err_store_newer": (
        "{path} was written by a newer Engram; upgrade the plugin to open it. The file was left untouched.",
        "{path} 是更新版本的 Engram 写的；请升级插件后再打开。文件没有被改动。",
    ),
    "err_store_not_migrated": (
        "{path} is not an Engram store yet; open it read-write once",
        "{path} 还不是可以只读打开的 Engram 存储；请先以读写方式打开一次",
    ),
    "err_store_read_only": ("{path} was opened read-only", "{path} 是以只读方式打开的"),
    "err_store_unwritable": (
        "{path} cannot be written",
        "{path} 现在写不进去（磁盘满了，或者文件夹是只读的？）；什么也没有写入，稍后可以再试",
    ),
    "err_store_unwritable_open": (
        "cannot open {path} for writing: is the folder {folder} read-only or its disk full? Nothing was "
        "changed; it is opened again at the next message",
        "无法以写入方式打开 {path}：文件夹 {folder} 是只读的，还是磁盘满了？什么也没有改动；"
        "下一条消息时会再试着打开",
    ),
    "err_store_locked": (
        "the memory file stayed locked by another writer for {seconds} s (another process writing it?); "
        "nothing was written",
        "记忆文件被另一个写入者锁住了 {seconds} 秒（是不是有别的进程在写它？）；什么也没有写入",
    ),
    "err_backup_no_store": ("there is no store at {path} to back up yet", "{path} 还没有存储文件可以备份"),
    "err_backup_damaged": (
        "the backup of {path} failed its check; no backup was kept (is the store damaged?)",
        "{path} 的备份没有通过检查，没有保留这份备份（存储文件是不是损坏了？）",
    ),
    "err_backup_failed": (
        "{path} could not be backed up ({error}); no backup was kept",
        "{path} 无法备份（{error}）；没有保留这份备份",
    ),
    "err_backup_unsettled": (
        "the backup {path} was left mid-erase by a stopped process and could not be made whole ({error}); "
        "nothing was changed",
        "备份 {path} 在一次擦除中途被中断，无法恢复完整（{error}）；什么也没有改变",
    ),
    "err_store_cannot_open": ("cannot open {path}", "无法打开 {path}"),
    "err_store_unreachable": ("{path} could not be read now (the database server is away?); try again",
                              "现在读不到 {path}（数据库服务器连不上？），请稍后再试"),
    "err_store_needs_psycopg": (
        "a postgresql:// memory needs the psycopg driver: {command} (docs/postgres.md)",
        "数据库里的记忆需要先安装数据库驱动：{command}（见 docs/postgres.md）"),
    "err_store_in_use": (
        "{path} is open in another Engram instance (a bot, the MCP server, a dashboard or a command): stop "
        "them all first; nothing was changed",
        "{path} 正被另一个 Engram 实例打开（机器人、记忆服务、仪表盘或命令）：请先全部停止；什么都没有改动"),
    "err_migrate_not_empty": ("the database to copy into is not empty: nothing was copied",
                              "要复制进去的数据库不是空的：什么都没有复制"),
    "err_store_missing": ("no store at {path} to open read-only", "{path} 没有存储文件可以只读打开"),
    "err_store_damaged": (
        "{path} is damaged; it was left untouched and nothing is recorded until it is dealt with. Keep a "
        "copy of it (with its -wal and -shm files, if any); recover what it holds with the sqlite3 "
        "command's .recover into recovered.db, then put recovered.db in its place (or move it away to "
        "start anew)",
        "{path} 已损坏；文件没有被改动，处理好之前什么也不记录。请先备份它（连同 -wal 和 -shm "
        "文件，如果有），"
        "再用 `sqlite3 {path} \".recover\" | sqlite3 recovered.db` 恢复其中的内容，然后用 recovered.db "
        "替换它（或者把它移走，重新开始）",
    ),
    "err_store_damaged_open": (
        "{path} is damaged, found by the check in the background; nothing more is written to it (recall "
        "goes on from what can be read). Stop the bot; see the log for how to recover it",
        "后台检查发现 {path} 已损坏；不再往里写入任何内容（还能读出的记忆照常使用）。请停止机器人；"
        "恢复方法见日志",
    ),
    "err_store_copied": (
        "{path} was copied while its store was open, without its log {wal}. Nothing was changed. Copy "
        "{wal} too, from the folder it was copied from (stop the bot there first); or, to open it "
        "without those changes, delete {shm}",
        "{path} 是在存储打开时复制的，没有带上它的日志 {wal}。什么也没有改动。请从原来的文件夹把 {wal} "
        "也复制过来（先停止那边的机器人）；或者删除 {shm}，不要那些改动直接打开",
    ),
    # ---- ids, forgets, writes -------------------------------------------------------------------
    "err_no_memory": ("no memory with id {id}", "没有编号为 {id} 的记忆"),
    "err_no_episode": ("no episode with id {id}", "没有编号为 {id} 的消息"),
    "err_memory_superseded": (
        "memory {id} was superseded; update its newest version",
        "记忆 {id} 已被新版本取代；请改它最新的版本",
    ),
    "err_erased_meanwhile": (
        "some of the lines these memories came from were forgotten meanwhile",
        "这些记忆的部分来源消息在此期间被忘记了；什么也没有写入",
    ),
    "err_moved_meanwhile": (
        "another writer applied this work meanwhile",
        "另一个写入者（例如命令行）在此期间已经做了同样的工作；什么也没有写入",
    ),
    "err_ids_not_numbers": ("give ids (whole numbers)", "请给出编号（整数）"),
    "err_name_person": ("name the person to forget", "请说出要忘记的人"),
    "err_name_place": ("name the place to forget", "请说出要忘记的地点"),
    "err_own_forget": (
        "a person's own forget needs the person and the place",
        "本人要求的忘记需要知道是谁、在哪里",
    ),
    "err_own_forget_many": (
        "at most {n} lines and memories at a time",
        "一次最多 {n} 条消息和记忆",
    ),
    "err_nothing_of_person": (
        "nothing is remembered by or about {person}; nothing was forgotten",
        "不记得 {person} 说过的或关于 {person} 的任何内容；什么也没有忘记",
    ),
    "err_nothing_of_place": (
        "nothing is remembered of the place {place}; nothing was forgotten",
        "不记得地点 {place} 的任何内容；什么也没有忘记",
    ),
    "err_scope_invalid": (
        "invalid scope {scope}: use public, self, owner or space:<space>",
        "无效的范围 {scope}：请用 public、self、owner 或 space:<地点>",
    ),
    "err_no_text": ("a memory needs some text", "记忆需要一些内容"),
    "err_arg_kind": ("unknown memory kind {kind}: use one of {kinds}", "没有记忆类型 {kind}：可选 {kinds}"),
    # bad arguments to the core (issue 28)
    "err_arg_not_text": ("this must be text", "这里需要文字"),
    "err_arg_empty": ("this is empty", "这里不能为空"),
    "err_arg_too_long": ("this is longer than {limit} characters", "太长了：最多 {limit} 个字符"),
    "err_arg_count": ("give a whole number, 0 or more", "请给出 0 或更大的整数"),
    "err_arg_people": ("give a list of person ids", "请给出一组用户 id"),
    "err_arg_audience": ("who reads this is unknown", "不知道这是给谁看的"),
    "err_place_too_long": ("a place id is at most {limit} characters", "地点 id 最多 {limit} 个字符"),
    "err_importance_range": ("importance must be between 0 and 1", "重要性必须在 0 到 1 之间"),
    "err_time_range": (
        "{time} is out of range (years 2 to 9998)",
        "时间 {time} 超出范围（年份 2 到 9998）",
    ),
    # ---- the ranking that learns (memory/recall/ranking.py, learner.py, feedback.py) -------------------
    "err_unknown_recall": (
        "no recent injection has the recall id {recall}",
        "最近的注入里没有召回编号 {recall}",
    ),
    "err_feedback_not_injected": (
        "those notes were not injected by {recall}",
        "这些笔记不是召回 {recall} 注入的",
    ),
    "err_feedback_no_injection": ("no injection in this chat to judge yet", "这个聊天里还没有可以评判的注入"),
    "err_feedback_nothing_held": (
        "{recall} held nothing back to compare with",
        "召回 {recall} 没有留下可以比较的笔记",
    ),
    "err_feedback_shape": (
        "the feedback does not match the recall's features",
        "反馈与这次召回的特征对不上",
    ),
    "err_feedback_not_finite": ("feedback features must be finite numbers", "反馈的特征必须是有限的数"),
    "err_feedback_unreadable": ("the saved feedback is not readable", "保存的反馈无法读取"),
    "err_ranking_unreadable": ("the saved ranking weights are not readable", "保存的排序权重无法读取"),
    # ---- identity proposals ---------------------------------------------------------------------
    "err_proposals_unreadable": (
        "identity/proposals.json cannot be read; nothing was changed: fix or move the file",
        "identity/proposals.json 读不出来；什么也没有改动：请修好或移走这个文件",
    ),
    "err_proposal_empty": ("a proposal needs the change itself", "提议需要写出修改的内容"),
    "err_proposal_too_long": (
        "a proposal is at most {change} characters, its reason {reason}",
        "提议最多 {change} 个字符，理由最多 {reason} 个",
    ),
    "err_proposal_flood": (
        "{n} proposals already wait for the owner; no new one is taken until they are decided",
        "已经有 {n} 条提议在等主人决定；决定之前不再接受新的提议",
    ),
    "err_proposal_decided": ("proposal #{id} was already {status}", "提议 #{id} 已经{status}过了"),
    "err_no_proposal": ("no proposal #{id}", "没有提议 #{id}"),
    "err_not_approved": (
        "not approved: identity/self.md cannot be read whole",
        "没有批准：identity/self.md 无法完整读取（为了不覆盖它）；详见日志",
    ),
    # ---- the models -----------------------------------------------------------------------------
    "err_answer_empty": ("the answer is empty", "模型的回答是空的；什么也没有改动，可以再试一次"),
    "err_answer_no_json": (
        "no JSON object with {keys} in the answer ({n} characters)",
        "模型的回答（{n} 个字符）里没有{keys}；什么也没有改动，可以再试一次",
    ),
    "err_field_not_text": (
        "{key} must be non-empty text",
        "模型回答里的{key}不是有内容的文字；什么也没有改动，可以再试一次",
    ),
    "err_field_too_long": (
        "{key} is {n} characters, at most {max}",
        "模型写的{key}有 {n} 个字符，最多 {max} 个；什么也没有改动，可以再试一次",
    ),
    "err_field_not_number": (
        "{key} must be a number from {low} to {high}",
        "模型回答里的{key}必须是 {low} 到 {high} 之间的数；什么也没有改动，可以再试一次",
    ),
    "err_chat_none": ("no chat provider is configured in AstrBot", "AstrBot 里没有配置对话模型"),
    "err_chat_gone": (
        "chat provider {provider} (chat_provider_id) is not in AstrBot",
        "对话模型 {provider}（chat_provider_id）不在 AstrBot 里；在它恢复或改设置之前，不会改用别的模型",
    ),
    "err_chat_timeout": (
        "chat provider {provider} timed out after {seconds}s",
        "对话模型 {provider} 在 {seconds} 秒内没有回答",
    ),
    "err_chat_failed": ("chat provider {provider} failed", "对话模型 {provider} 出错了（详见日志）"),
    "err_chat_empty": ("chat provider {provider} answered nothing", "对话模型 {provider} 什么也没有回答"),
    "err_embedding_gone": ("embedding provider {provider} is gone", "向量模型 {provider} 不在 AstrBot 里了"),
    "err_embedding_timeout": (
        "embedding provider {provider} timed out",
        "向量模型 {provider} 没有及时回答",
    ),
    "err_embedding_failed": ("embedding provider {provider} failed", "向量模型 {provider} 出错了"),
    "err_embedding_shape": (
        "embedding provider {provider} answered the wrong shape",
        "向量模型 {provider} 回答的向量形状不对",
    ),
    # ---- an error without a code, by its kind (the core's message follows in parentheses) --------
    "err_kind_WrongShape": ("the model's answer had the wrong shape", "模型的回答格式不对"),
    "err_kind_MalformedReply": ("the model's answer had the wrong shape", "模型的回答格式不对"),
    "err_kind_ChatTimeout": ("the chat model timed out", "对话模型没有及时回答"),
    "err_kind_StoreDamaged": ("the store is damaged", "存储文件已损坏"),
    "err_kind_ErasedMeanwhile": ("what it was drawn from was forgotten meanwhile", "它的来源在此期间被忘了"),
    "err_kind_MovedMeanwhile": ("another writer did the same work meanwhile", "别的写入者在此期间做了这件事"),
    "err_kind_StoreUnwritable": ("the store cannot be written now", "存储现在写不进去；什么也没有写入"),
    "err_kind_StoreError": ("the store cannot be used", "存储文件无法使用；它没有被改动"),
    "err_kind_EmbeddingError": ("the embedding model failed", "向量模型出错了"),
    "err_kind_ChatError": ("the chat model failed", "对话模型出错了"),
    "err_kind_UnknownIdError": ("unknown id", "编号不存在"),
    "err_kind_InvalidScopeError": ("invalid scope", "无效的范围"),
    "err_kind_InvalidInputError": ("invalid input", "输入无效"),
    "err_kind_EngramError": ("Engram failed", "Engram 出错了"),
}


def error_text(lang: str, e: EngramError) -> str:
    """What ``e`` says, in ``lang``: English, the core's own message (with every detail it names);
    Chinese, its code's text, or its kind and, in parentheses, the core's message."""
    if lang != ZH:
        return str(e)
    if e.code and f"err_{e.code}" in ERROR_TEXTS:
        try:
            values = {**e.values}
            if "key" in values:  # a field of the model's answer: what it holds
                values["key"] = word(lang, "field", str(values["key"]))
            if "keys" in values:
                values["keys"] = "、".join(word(lang, "field", k) for k in str(values["keys"]).split(", "))
            return pick(lang, ERROR_TEXTS[f"err_{e.code}"]).format(**values)
        except (KeyError, IndexError):  # a raise site that names other values than the catalogue
            pass
    kind = next(f"err_kind_{c.__name__}" for c in type(e).__mro__ if f"err_kind_{c.__name__}" in ERROR_TEXTS)
    return f"{pick(lang, ERROR_TEXTS[kind])}（{e}）"


def failure(lang: str, recorded: str) -> str:
    """A job's failure as its record keeps it (``<kind of error>: <message>``), in ``lang``: Chinese
    says the kind of error (the message, English, is in the log and on the dashboard)."""
    if lang != ZH:
        return recorded
    kind, _, _ = recorded.partition(":")
    key = f"err_kind_{kind}"
    return pick(lang, ERROR_TEXTS[key]) if key in ERROR_TEXTS else f"{kind}（详见日志）"
