"""What a reader of a reply in one language would find of the other: English words left in a Chinese
reply (other than ids, numbers, names, places, paths, option and config names, and command words),
and Chinese left in an English one. Written once; the reply tests run every subcommand through it."""

from __future__ import annotations

import re
from collections.abc import Iterable

from astrbot_plugin_engram.plugin.commands.registry import COMMANDS
from astrbot_plugin_engram.plugin.replies.catalogue import say

HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")

# words a Chinese reply keeps as they are: what the owner types (subcommands, scopes, here/place,
# config values), product names, and the few words Chinese chat uses in Latin letters
COMMAND_WORDS = {
    "mem", "engram", "astrbot", "webui", "sqlite", "id", "ids", "sid", "cookie", "public", "self", "owner",
    "space", "here", "place", "zh", "en", "auto", "yyyy-mm-dd", "qq", "python", "m", "db", "show",
}
_KEPT = [
    re.compile(r"https?://\S+"),
    re.compile(r"\b[a-z_-]+（[^（）]*[\u4e00-\u9fff][^（）]*）"),  # a value to type, explained: fact（事实）
    re.compile(r"`[^`]*`"),  # a command line to run
    re.compile(r"(?<![\w-])--?[a-z][\w-]*"),  # options
    re.compile(r"<[^<>\s]{1,20}>"),  # a placeholder of a usage line
    re.compile(r"\b[\w.-]+/[\w./-]*"),  # paths: identity/self.md, diary/2026-11-30.md
    re.compile(r"\b\w+\.(?:md|json|db)\b"),
    re.compile(r"\b[a-z]+:[\w:.-]+"),  # places and scopes: qq:group:g1, space:qq:private:owner1
    re.compile(r"\b[a-z]+_[a-z_]+\b"),  # config keys: owner_ids, reply_language, dashboard_enabled
    re.compile(r"[#mep]?\d[\d,.:-]*"),  # ids, numbers, dates, times
]
_WORD = re.compile(r"[A-Za-z]+(?:['’-][A-Za-z]+)*")


def english_left(reply: str, kept: Iterable[str] = ()) -> list[str]:
    """The English words of a Chinese ``reply`` that are none of the kept kinds; ``kept``: text the
    test put there itself (memory text, names), shown as it is."""
    text = reply
    for part in sorted(kept, key=len, reverse=True):  # as whole words: a kept "x" leaves "export" whole
        text = re.sub(rf"(?<![A-Za-z]){re.escape(part)}(?![A-Za-z])", " ", text)
    for pattern in _KEPT:
        text = pattern.sub(" ", text)
    allowed = COMMAND_WORDS | {n.lower() for n in COMMANDS.names()}
    return [w for w in _WORD.findall(text) if w.lower() not in allowed]


def chinese_left(reply: str, kept: Iterable[str] = ()) -> list[str]:
    """The Chinese of an English ``reply`` (the help's one line on how to switch to Chinese excepted)."""
    text = reply.replace(say("en", "help_lang"), "")
    for part in kept:
        text = text.replace(part, " ")
    return HAN.findall(text)
