"""What the plugin asks recall before a reply: the people's words of the conversation, the query text
and how many hits.

The query is only what people said. AstrBot 4.29 adds its own parts to every user turn, and keeps
them in the history: ``<system_reminder>`` (user id and nickname, group name, ``Current datetime:
..., Weekday: ...``, the group chat's ``--- BEGIN CONTEXT---`` lines), ``<Quoted Message>``,
``<image_caption>``, ``[Audio Attachment: ...]``; the plugin's own block is one too, and tool output
comes as ``tool`` messages. In a request the person's text is ``req.prompt`` and every added part is
in ``req.extra_user_content_parts``; in the history (``assemble_context``) a user turn is a list of
parts, the prompt first and each added part after it, whole. So a part is the person's words unless
it is whole one of those wrappers (a tag around all of it, or a bracketed note): the structure
AstrBot gives, not a list of its sentences. A turn stored as one string (another framework, an old
history) has the same wrappers cut out of it.

Kept apart from ``inject.py`` (which imports AstrBot) so benchmarks can build the plugin's own
queries without loading AstrBot.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ...memory.render import IDENTITY_HEAD, NOTES_HEAD, OPEN
from ...memory.text.words import no_content, words
from .echo import TOOL_HEAD, own_words

QUERY_TURNS = 4  # earlier turns of the conversation that join the latest message in the recall query

# A part that is whole one of the framework's wrappers: "<tag ...>...</tag>" (AstrBot's
# <system_reminder>, <Quoted Message>, <image_caption>, the plugin's <engram-memory>) or "[...]"
# (its attachment notes: "[Audio Attachment: ...]", "[Image Captioning Failed]", "[图片]").
_WRAPPED = re.compile(r"\A\s*(?:<([A-Za-z][\w -]{0,40}?)(?:\s[^<>]*)?>.*</\1>|\[[^\[\]]{1,300}\])\s*\Z", re.S)
# The same wrappers inside one string (a turn stored as text): a tag's whole span, closed.
_WRAPPER_SPAN = re.compile(r"<([A-Za-z][\w -]{0,40}?)(?:\s[^<>]*)?>.*?</\1>", re.S)
_TAGGED = re.compile(r"</[A-Za-z][\w -]{0,40}>")
# what a reply holds when it read back what it was handed (a note's " — ", the block, the tool's head):
# only then is ``own_words`` worth its time
_HANDED = re.compile("|".join(map(re.escape, (" — ", OPEN, TOOL_HEAD, NOTES_HEAD, IDENTITY_HEAD))))


def framework_part(text: str) -> bool:
    """Whether a text part is whole one of the framework's wrappers (not the person's words)."""
    return bool(_WRAPPED.match(text))


def _unwrapped(text: str) -> str:
    """``text`` without the wrappers a framework put in it (only spans that close: a lone "<3" or
    "a<b" is the person's own)."""
    if "<" not in text or not _TAGGED.search(text):
        return text
    return _WRAPPER_SPAN.sub(" ", text)


def said(message: Any) -> str:
    """What a person (or the bot) said in one history message, without what the framework or the plugin
    added: for a user turn, its text parts that are not wrappers; for the bot's turn, its text without
    the block or notes it only copied (``echo.own_words``); tool calls and results say nothing."""
    role = message.get("role") if isinstance(message, dict) else getattr(message, "role", "")
    content = message.get("content") if isinstance(message, dict) else getattr(message, "content", "")
    if role not in ("user", "assistant"):
        return ""
    if isinstance(content, list):
        texts = [str(p.get("text", "")) if isinstance(p, dict) else str(getattr(p, "text", "") or "")
                 for p in content
                 if (p.get("type") if isinstance(p, dict) else getattr(p, "type", "")) == "text"]
        text = " ".join(t for t in texts if t.strip() and not framework_part(t))
    elif isinstance(content, str):
        text = _unwrapped(content)
    else:
        return ""
    text = " ".join(text.split())
    return own_words(text) if role == "assistant" and _HANDED.search(text) else text


def people_turns(contexts: Sequence[Any], n: int = QUERY_TURNS, *, all_turns: bool = False) -> list[str]:
    """The last ``n`` turns' words (``said``) of the conversation that carry content, oldest first: an
    acknowledgement or greeting ("thanks!", "好的") adds nothing a query could find (``all_turns``:
    those too, for what the model already reads)."""
    out: list[str] = []
    for m in reversed(list(contexts or [])):
        text = said(m)
        if text and (all_turns or not no_content(words(text))):
            out.append(text)
            if len(out) == n:
                break
    return out[::-1]


