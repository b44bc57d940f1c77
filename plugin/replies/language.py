"""Which language a ``/mem`` reply is in (config ``reply_language``).

``zh`` or ``en`` is that language. ``auto`` (the default) answers in the language of the message it
answers (issue 27): Chinese when the ``/mem`` line holds a Chinese character (``/mem recall 奶茶``),
else English (``/mem stats``, ``／mem stats`` too: its words are English). Nothing else decides it:
not what others said in the chat, nor what the last recall read (a forget, which drops that, used to
switch the language of the next reply). An owner who types ``/mem stats`` and wants Chinese sets
``reply_language`` to ``zh`` (the English help says so in Chinese).
"""

from __future__ import annotations

import re
from typing import Any

from ..config import REPLY_LANGUAGES

AUTO, ZH, EN = REPLY_LANGUAGES
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f]")


def has_chinese(text: str) -> bool:
    return bool(_HAN.search(text or ""))


def chinese_message(event: Any, command_text: str) -> bool:
    """Whether the ``/mem`` line (``command_text``: what follows ``/mem``; the event's whole text)
    holds a Chinese character."""
    return has_chinese(command_text) or has_chinese(str(getattr(event, "message_str", "") or ""))


async def reply_language(service: Any, event: Any, command_text: str) -> str:
    """``zh`` or ``en`` for the reply to ``command_text`` (the ``/mem`` line) from ``event``."""
    setting = service.settings.reply_language
    if setting != AUTO:
        return str(setting)
    return ZH if chinese_message(event, command_text) else EN
