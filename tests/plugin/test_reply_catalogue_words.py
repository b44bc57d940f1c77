"""The words of the reply catalogue beside its sentences: every code the core's errors carry has its
Chinese (``reply_errors``), every stored word a reply shows has its Chinese (``reply_words``), and an
error without a code is still said in the reply's language (its kind, then the core's message)."""

from __future__ import annotations

import re
import string
from pathlib import Path

from astrbot_plugin_engram.memory.consolidation.actions import (
    BAD_FIELD,
    FOREIGN_SOURCE,
    INVENTED_ID,
    UNFORESEEN,
    UNKNOWN_OP,
    UNSEEN_MEMORY,
    WIDER_SCOPE,
)
from astrbot_plugin_engram.memory.errors import EngramError, StoreError
from astrbot_plugin_engram.memory.model import EPISODE_KINDS, MEMORY_KINDS, MEMORY_STATUSES
from astrbot_plugin_engram.memory.recall.features import COLUMNS
from astrbot_plugin_engram.memory.wording import ZH_WORDS
from astrbot_plugin_engram.plugin.replies.catalogue import TEXTS
from astrbot_plugin_engram.plugin.replies.errors import error_text

from .reply_words import HAN, english_left

ROOT = Path(__file__).resolve().parents[2]


def test_an_error_without_a_code_says_its_kind_in_chinese_and_english_says_the_message() -> None:
    e = StoreError("the disk said no")
    assert error_text("zh", e) == "存储文件无法使用；它没有被改动（the disk said no）"
    assert error_text("en", e) == "the disk said no"
    assert error_text("zh", EngramError("odd")) == "Engram 出错了（odd）"


def test_every_code_the_core_and_the_plugin_raise_has_its_chinese() -> None:
    """A new raise site's code without its catalogue entry would be said as its kind and English."""
    codes = set()
    for path in [*ROOT.glob("memory/**/*.py"), *ROOT.glob("plugin/**/*.py")]:
        codes |= set(re.findall(r"\bcode=\"(\w+)\"", path.read_text("utf-8")))
        codes |= {f"no_{kind}" for kind in re.findall(r"_known\(ids, \"(\w+)\"", path.read_text("utf-8"))}
    codes |= {"chat_gone", "chat_none", "store_damaged_open"}  # given by a method and a class
    assert len(codes) > 40
    assert sorted(c for c in codes if f"err_{c}" not in TEXTS) == []


def test_every_stored_word_a_reply_shows_has_its_chinese() -> None:
    assert set(ZH_WORDS["kind"]) == set(MEMORY_KINDS)
    assert set(ZH_WORDS["status"]) == set(MEMORY_STATUSES)
    assert set(ZH_WORDS["line"]) == set(EPISODE_KINDS)
    assert set(ZH_WORDS["feature"]) == set(COLUMNS)
    reasons = {BAD_FIELD, UNKNOWN_OP, INVENTED_ID, FOREIGN_SOURCE, UNSEEN_MEMORY, WIDER_SCOPE, UNFORESEEN}
    assert reasons | {"unavailable", "timeout", "error", "malformed"} <= set(ZH_WORDS["count"])
    for group in ZH_WORDS.values():
        assert all(HAN.search(zh) for zh in group.values()), group


def test_no_chinese_text_of_the_catalogue_holds_an_english_word() -> None:
    """The checker the reply tests run over every subcommand, run over every Chinese text itself (its
    values filled in with numbers): what no test's store happens to reach is Chinese too."""

    left = {}
    for key, (_, zh) in TEXTS.items():
        names = {name for _, name, _, _ in string.Formatter().parse(zh) if name}
        values = {name: "12 " if name == "args" else "12" for name in names}  # args: what /mem list was given
        if words := english_left(zh.format(**values)):
            left[key] = words
    assert left == {}
