"""AstrBot events translated into the core's words: the place, the person, the episode, the audience."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Any

from astrbot.api.message_components import At, AtAll, Image, Plain, Reply
from astrbot.core.star.filter.command import CommandFilter
from astrbot.core.star.filter.command_group import CommandGroupFilter

from ..memory import SELF, Audience, Episode
from ..memory.clock import AHEAD, plausible
from ..memory.model import now_utc
from .config import Settings

COMMAND = "mem"  # the command group addressed to Engram: such messages are not conversation
FULL_WIDTH_MEM = "／" + COMMAND  # typed with a Chinese keyboard's slash (AstrBot's wake prefix is "/")
UNKNOWN = "unknown"
COMMAND_FILTERS = (CommandFilter, CommandGroupFilter)
IMAGE_TEXT = "sent an image"


def _clean(value: Any) -> str:
    """A value as stripped text ("" when missing)."""
    return "" if value is None else str(value).strip()


def platform_of(event: Any) -> str:
    """The platform type (``aiocqhttp``, ``telegram``, ``webchat``...), so a person keeps one id."""
    for get in ("get_platform_name", "get_platform_id"):
        try:
            name = _clean(getattr(event, get)())
        except Exception:  # a half-built event from an odd adapter must not stop recording
            name = ""
        if name:
            return name
    return UNKNOWN


def sender_of(event: Any) -> str:
    try:
        return _clean(event.get_sender_id())
    except Exception:
        return ""


def _group(event: Any) -> str | None:
    """The group id ("" when a group message lacks one), or None in a private chat.

    Fails closed: a chat whose type cannot be read is a group (nobody gets the owner's rights there).
    """
    try:
        private = bool(event.is_private_chat())
    except Exception:
        private = False
    try:
        group = _clean(event.get_group_id())
    except Exception:
        group = ""
    return group if group or not private else None


def place_of(event: Any) -> str:
    """``<platform>:group:<gid>`` or ``<platform>:private:<uid>``; the session id when an id is missing."""
    group = _group(event)
    if group is not None:
        return f"{platform_of(event)}:group:{group or _session(event)}"
    return f"{platform_of(event)}:private:{sender_of(event) or _session(event)}"


def _session(event: Any) -> str:
    return _clean(getattr(event, "session_id", "")) or UNKNOWN


def actor_of(event: Any) -> str:
    """The stable person id ``<platform>:<user_id>``."""
    return f"{platform_of(event)}:{sender_of(event) or UNKNOWN}"


def event_time(event: Any) -> datetime:
    """When the message was sent (the platform's timestamp), else now; never after now (a platform
    clock ahead of this server's would put the bot's reply before the message it answers), unless
    this server's clock reads a time too early to be right (1970, before NTP): then the platform's."""
    now = now_utc()
    ts = getattr(getattr(event, "message_obj", None), "timestamp", None)
    try:
        if isinstance(ts, int | float) and ts > 0:
            sent = datetime.fromtimestamp(ts, timezone.utc)
            return sent if not plausible(now) and plausible(sent) else min(now, sent)
    except (OverflowError, OSError, ValueError):
        pass
    return now


def is_command(event: Any) -> bool:
    """Whether AstrBot matched this message to a command of any plugin (``/reset``, ``/help``, ``/mem``,
    another plugin's): its waking stage lists the handlers it activated on the event."""
    try:
        handlers = event.get_extra("activated_handlers") or []
    except Exception:
        handlers = []
    for handler in handlers:
        for f in getattr(handler, "event_filters", None) or []:
            if isinstance(f, COMMAND_FILTERS):
                return True
    return is_engram_command(event)


def is_engram_command(event: Any) -> bool:
    """Whether AstrBot routes this message to ``/mem``: addressed to the bot and starting with ``mem``."""
    text = re.sub(r"\s+", " ", str(getattr(event, "message_str", "") or "")).strip()
    addressed = bool(getattr(event, "is_at_or_wake_command", False))
    if text.startswith("/"):  # the wake prefix, when the waking stage has not stripped it yet
        text, addressed = text[1:], True
    return addressed and text.split(" ", 1)[0] in (COMMAND, FULL_WIDTH_MEM)


@dataclass(frozen=True)
class Parsed:
    """What one message holds: its text, its images, whom it mentions and what it answers."""

    text: str
    images: tuple[str, ...]
    meta: dict[str, Any]


def parse_message(event: Any) -> Parsed:
    """The text, image references, mentions and reply of an incoming message."""
    platform, self_id = platform_of(event), _clean(_safe(event, "get_self_id"))
    try:
        components = list(event.get_messages() or [])
    except Exception:
        components = []
    plain, images, mentions = [], [], []
    stickers = sticker_files(event)
    meta: dict[str, Any] = {}
    for comp in components:
        if isinstance(comp, Plain):
            plain.append(comp.text or "")
        elif isinstance(comp, Image):
            if not _is_sticker(comp, stickers):
                images.append(_clean(comp.url or comp.file or getattr(comp, "path", "")) or "image")
        elif isinstance(comp, AtAll):
            mentions.append({"id": "all"})
        elif isinstance(comp, At):
            who = _clean(comp.qq)
            mentions.append({"id": SELF if who and who == self_id else f"{platform}:{who}",
                             "name": _clean(comp.name)})
        elif isinstance(comp, Reply):
            meta["reply_to"] = {"message_id": _clean(comp.id),
                                "actor": SELF if _clean(comp.sender_id) == self_id
                                else f"{platform}:{_clean(comp.sender_id)}"}
    if mentions:
        meta["mentions"] = mentions
    text = str(getattr(event, "message_str", "") or "").strip() or " ".join(p.strip() for p in plain).strip()
    return Parsed(text, tuple(images), meta)


STICKER_SUMMARIES = ("[动画表情]", "[表情]", "[sticker]")


def sticker_files(event: Any) -> set[str]:
    """The files of the images in a OneBot (QQ) message that are stickers, not photos.

    AstrBot's Image keeps only the file and url of a OneBot image segment; the raw event it keeps
    beside the message says more: ``sub_type`` (NapCat; ``subType`` in go-cqhttp and Lagrange) is 1
    for a custom sticker, and the summary reads "[动画表情]". Market faces (``mface``) are dropped by
    AstrBot already.
    """
    raw = getattr(getattr(event, "message_obj", None), "raw_message", None)
    segments = raw.get("message") if isinstance(raw, dict) else None
    out = set()
    for seg in segments if isinstance(segments, list) else []:
        data = seg.get("data") if isinstance(seg, dict) and seg.get("type") == "image" else None
        if not isinstance(data, dict):
            continue
        sub = str(data.get("sub_type", data.get("subType", ""))).strip()
        if sub == "1" or str(data.get("summary", "")).strip() in STICKER_SUMMARIES:
            out |= {_clean(data.get("file")), _clean(data.get("url"))} - {""}
    return out


def _is_sticker(comp: Any, stickers: set[str]) -> bool:
    return bool(stickers) and bool({_clean(comp.file), _clean(comp.url)} & stickers)


def _safe(event: Any, method: str) -> Any:
    try:
        return getattr(event, method)()
    except Exception:
        return ""


def place_title_of(event: Any) -> str:
    """The group's name as the platform gives it with the message ("" for a private chat or none)."""
    name = getattr(getattr(getattr(event, "message_obj", None), "group", None), "group_name", None)
    return " ".join(name.split()) if isinstance(name, str) else ""


def incoming_episodes(event: Any, parsed: Parsed, captions: dict[str, str] | None = None) -> list[Episode]:
    """The episodes of an incoming message: its text, then one per image (none for stickers or blanks)."""
    meta = dict(parsed.meta)
    message_id = _clean(getattr(getattr(event, "message_obj", None), "message_id", ""))
    if message_id:
        meta["message_id"] = message_id
    base = Episode(place=place_of(event), content="", actor=actor_of(event), time=event_time(event),
                   actor_name=_clean(_safe(event, "get_sender_name")), source=f"astrbot:{platform_of(event)}",
                   place_title=place_title_of(event))
    out = [replace(base, content=parsed.text, kind="message_in", meta=meta)] if parsed.text else []
    for ref in parsed.images:
        caption = (captions or {}).get(ref)
        out.append(replace(base, content=f"{IMAGE_TEXT}: {caption}" if caption else IMAGE_TEXT, kind="image",
                           meta={**meta, "image": ref, "captioned": bool(caption)}))
    return out


def reply_episode(event: Any, text: str, meta: dict[str, Any] | None = None) -> Episode | None:
    """The bot's own reply in the event's place, attributed to the bot: now, but no later than a day
    after the message it answers (this server's clock set far ahead of the platform's would date it
    years on), and the message's time when this server's clock is too early to be right."""
    if not text or not text.strip():
        return None
    now, asked = now_utc(), event_time(event)
    return Episode(place=place_of(event), content=text.strip(), actor=SELF, kind="message_out",
                   time=min(now, asked + AHEAD) if plausible(now) else asked,
                   source=f"astrbot:{platform_of(event)}", meta=dict(meta or {}))


def audience_of(event: Any, settings: Settings, platforms: Sequence[str] = ()) -> Audience:
    """Who will read the reply: this place, the people present, whether it is the owner's DM
    (``platforms``: the bot's platforms, see ``Settings.is_owner``)."""
    place = place_of(event)
    people = [actor_of(event)]
    people += [m["id"] for m in parse_message(event).meta.get("mentions", []) if m["id"] not in ("all", SELF)]
    owner = _group(event) is None and (settings.is_owner(platform_of(event), sender_of(event), platforms)
                                       or settings.is_owner_private_place(place))
    return Audience(place=place, people=tuple(dict.fromkeys(people)), owner_private=owner)


def place_audience(place: str, settings: Settings, platforms: Sequence[str] = ()) -> Audience:
    """Who reads a place's memories: the owner's private chat may also see ``owner`` memories
    (``platforms``: the bot's chat platforms; a bare owner id counts only on the one, see
    ``Settings.is_owner``)."""
    platform, _, rest = place.partition(":")
    kind, _, who = rest.partition(":")
    owner = kind == "private" and (settings.is_owner(platform, who, platforms)
                                   or settings.is_owner_private_place(place))
    return Audience(place=place, owner_private=owner)
