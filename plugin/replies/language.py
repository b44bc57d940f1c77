"""Which language a ``/mem`` reply is in (config ``reply_language``).

``zh`` or ``en`` is that language. ``auto`` (the default) answers in Chinese when the command's own
text holds a Chinese character (``/mem recall 奶茶``); else when half or more of this chat's recent
lines hold Chinese: the lines the last recall before a reply here read (the latest message and the
turns before it), or, when the bot has not answered here since it started, the last
``RECENT_LINES`` lines recorded in this chat; else in English.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from typing import Any

from ..config import REPLY_LANGUAGES
from ..events import place_of

log = logging.getLogger("engram.plugin")

AUTO, ZH, EN = REPLY_LANGUAGES
RECENT_LINES = 20  # recorded lines of a chat read when no reply since the start tells its language
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f]")
_WORDY = re.compile(r"[^\W\d_]")  # a letter of any script: a line of digits, emoji or stickers does not count


def has_chinese(text: str) -> bool:
    return bool(_HAN.search(text or ""))


def mostly_chinese(lines: Iterable[str]) -> bool:
    """Whether half or more of the lines with words in them hold Chinese (False when none has)."""
    wordy = [line for line in lines if _WORDY.search(line or "")]
    return bool(wordy) and 2 * sum(has_chinese(line) for line in wordy) >= len(wordy)


async def reply_language(service: Any, event: Any, command_text: str) -> str:
    """``zh`` or ``en`` for the reply to ``command_text`` (the ``/mem`` line) from ``event``."""
    setting = service.settings.reply_language
    if setting != AUTO:
        return str(setting)
    if has_chinese(command_text):
        return ZH
    return ZH if mostly_chinese(await recent_lines(service, place_of(event))) else EN


async def recent_lines(service: Any, place: str) -> list[str]:
    """This chat's recent lines: those the last recall here read (kept by the service, no store read),
    else the last ``RECENT_LINES`` recorded here; [] when there are none or the store cannot be read."""
    injection = service.last_injection.get(place)
    if injection is not None:
        return str(injection.query).splitlines()
    if service.engram is None and not service.path.exists():
        return []  # nothing recorded yet: no store is created to find that out
    try:
        store = await (await service.memory()).browser()  # read-only, the dashboard's way in
        n = await store.count_place_episodes(place)
        return [e.content for e in await store.place_episodes(place, RECENT_LINES, max(0, n - RECENT_LINES))]
    except Exception:  # the language is a courtesy: a store that cannot be read answers in English
        log.debug("Engram: this chat's recent lines could not be read (the reply's language)", exc_info=True)
        return []

