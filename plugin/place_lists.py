"""The config's place lists and owner ids read in AstrBot's words too.

AstrBot names a chat by its UMO, ``<platform id>:<message type>:<session>`` — ``/sid`` shows
``qq:GroupMessage:g5``, and AstrBot's own whitelists take that form — where Engram names the same
group ``aiocqhttp:group:g5`` (the adapter's *type*, ``group``/``private``). An entry pasted from
``/sid`` matched nothing, silently: a blacklisted group kept getting memories injected (issue 28).
So each entry is read in either form, once the bot's platforms are known (their ids and types,
``Providers.platform_types``), and an entry that names no platform the bot has, or is in no form
Engram knows, is named in the log and in ``/mem stats``: a privacy setting never fails silently.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from .config import Settings

PLACE_LISTS = ("blacklist_spaces", "public_spaces", "owner_private_spaces")
# AstrBot's message types (``MessageType``'s values) and the kind of place Engram calls each
ASTRBOT_KINDS = {"GroupMessage": "group", "FriendMessage": "private"}
ENGRAM_KINDS = ("group", "private")


def place_forms(entry: str, types: Mapping[str, str]) -> list[str] | None:
    """The place ids ``entry`` names in Engram's words (itself when it is in them already; a bare
    id, a group's, stays as it is), or None when it names no platform of ``types`` (platform id ->
    type) or is in no form Engram knows. With no platform known yet, every form Engram knows passes."""
    parts = entry.split(":", 2)
    if len(parts) == 1:
        return [entry]  # a group's bare id (``config.place_listed``)
    if len(parts) != 3 or not parts[2]:
        return None
    platform, kind, session = parts
    if kind in ASTRBOT_KINDS:  # /sid's form: the platform's id
        if platform in types:
            return [entry, f"{types[platform]}:{ASTRBOT_KINDS[kind]}:{session}"]
        return [entry] if not types else None
    if kind not in ENGRAM_KINDS:
        return None
    if not types or platform in types.values():
        return [entry]
    if platform in types:  # Engram's form with the platform's id instead of its type
        return [entry, f"{types[platform]}:{kind}:{session}"]
    return None


def owner_forms(entry: str, types: Mapping[str, str]) -> list[str] | None:
    """The owner ids ``entry`` names (``<platform type>:<user id>``, or a bare user id): also read
    from the platform's id (``qq:42``) and from /sid's private chat (``qq:FriendMessage:42``)."""
    parts = entry.split(":", 2)
    if len(parts) == 1:
        return [entry]
    if len(parts) == 3:
        platform, kind, user = parts
        if ASTRBOT_KINDS.get(kind) != "private" and kind != "private" or not user:
            return None
        if platform in types:
            return [entry, f"{types[platform]}:{user}"]
        if not types or platform in types.values():
            return [entry, f"{platform}:{user}"]
        return None
    platform, user = parts
    if not user:
        return None
    if not types or platform in types.values():
        return [entry]
    if platform in types:
        return [entry, f"{types[platform]}:{user}"]
    return None


def read_in_both(settings: Settings, types: Mapping[str, str]) -> tuple[Settings, list[str]]:
    """``settings`` with each place list and the owner ids holding also what their entries mean in
    Engram's words, and the entries that match nothing (``key: entry``), in the config's order."""
    unmatched: list[str] = []
    changes: dict[str, Any] = {}
    for key in (*PLACE_LISTS, "owner_ids"):
        read = owner_forms if key == "owner_ids" else place_forms
        out: list[str] = []
        for entry in getattr(settings, key):
            forms = read(entry, types)
            if forms is None:
                unmatched.append(f"{key}: {entry}")
                forms = [entry]  # kept as written: it may match once its platform is loaded
            out += [f for f in forms if f not in out]
        changes[key] = tuple(out)
    return replace(settings, **changes), unmatched
