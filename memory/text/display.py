"""Stored text as it is shown to a model or a person: without control characters, on one line when
it stands in a line, and names that cannot pose as the bot or the system.

Everything stored came from chat users. A display name with a line break could start a line of its
own in a prompt (a forged note, a forged speaker); a person named "you" would read as the bot in the
injected notes; an escape sequence or a right-to-left override would reach the owner's terminal or
turn a line around. What is stored stays untouched: only its showing leaves such characters out.
"""

from __future__ import annotations

import re
import unicodedata

# control characters that are not whitespace (NUL, ESC, DEL, C1 like the 8-bit CSI) and the bidi
# embeddings, overrides and isolates; joiners, variation selectors and combining marks stay, so
# emoji sequences and accents are shown as written
_HIDDEN = re.compile("[\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f\u202a-\u202e\u2066-\u2069]")
NAME_CHARS = 64  # of a display name shown in a line

# what the bot, its owner or the system are called where a name stands ("astrbot": the framework's own
# name, which AstrBot's webchat gives its user; compared case-folded,
# width-folded, without spaces, punctuation or invisible characters: "[Owner]", "ｙｏｕ", "y\u200bou")
_POSERS = frozenset("""you yourself thebot bot assistant ai system developer tool model owner theowner
    admin administrator user me i youthebot astrbot
    你 你自己 我 系统 助手 机器人 主人 管理员 用户 开发者 你机器人
    系统消息 systemmessage""".split())
NAMED = {"en": 'someone named "{}"', "zh": "名叫“{}”的人"}
# what frames a line around a name (a line break, the quotes around what was said, the colon after a
# speaker, the dash before one, a tag): a name holding one is shown quoted, as a name
_FRAMING = re.compile('["“”:：—<>\n\r\x0b\x0c\x1c-\x1f\x85\u2028\u2029]')
_QUOTES = str.maketrans({'"': "'", "“": "'", "”": "'", "—": "-"})


def visible(text: str) -> str:
    """``text`` without control characters (other than whitespace) and bidi overrides."""
    return _HIDDEN.sub("", text)


def flat(text: str) -> str:
    """``text`` visible and on one line, runs of whitespace (line breaks too) as one space."""
    return " ".join(visible(text).split())


def poses(name: str) -> bool:
    """Whether ``name`` reads as the bot, its owner or the system once decoration is stripped."""
    folded = unicodedata.normalize("NFKC", name).casefold()
    return "".join(c for c in folded if c.isalnum()) in _POSERS


def person(name: str, lang: str = "en") -> str:
    """A person's display name for a line: flat, at most ``NAME_CHARS``; one that poses as the bot,
    the owner or the system, or holds what frames a line, is shown as ``someone named "..."`` (empty
    when nothing visible is left)."""
    shown = cut(flat(name), NAME_CHARS)
    if shown and (poses(shown) or _FRAMING.search(name)):
        return NAMED[lang].format(shown.translate(_QUOTES))
    return shown


def _joined(c: str) -> bool:
    """``c`` belongs to the character before it: a combining mark, a joiner, a variation selector,
    a skin tone, an emoji tag."""
    o = ord(c)
    return (unicodedata.combining(c) != 0 or unicodedata.category(c) in ("Mn", "Me") or o == 0x200D
            or 0xFE00 <= o <= 0xFE0F or 0x1F3FB <= o <= 0x1F3FF or 0xE0020 <= o <= 0xE007F)


def _flag(c: str) -> bool:
    return 0x1F1E6 <= ord(c) <= 0x1F1FF


def cut(text: str, limit: int) -> str:
    """``text`` itself, or its beginning and "…" in at most ``limit`` characters, never ending inside
    an emoji sequence, a flag or a letter with its accents (a cut "👩‍👩‍👧" showed other people)."""
    if len(text) <= limit:
        return text
    return text[:safe_end(text, limit - 1)] + "…"


def safe_end(text: str, end: int) -> int:
    """The largest index up to ``end`` where ``text`` may be cut without splitting an emoji sequence, a
    flag or a letter from its accents."""
    for _ in range(32):  # a pathological run of marks is cut anyway
        if 0 < end < len(text) and (_joined(text[end]) or text[end - 1] == "\u200d"
                                    or _split_flag(text, end)):
            end -= 1
        else:
            break
    return end


def _split_flag(text: str, end: int) -> bool:
    """A cut at ``end`` falls between the two letters of a flag (an odd run of them before it)."""
    if not (_flag(text[end]) and _flag(text[end - 1])):
        return False
    n = 0
    while end - n > 0 and _flag(text[end - n - 1]):
        n += 1
    return n % 2 == 1

