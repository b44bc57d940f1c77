"""The plugin's settings: AstrBot's config dict parsed once into a typed, bounded object.

A value of the wrong type or out of bounds is reported with its key and the default is kept, so a
typo in the config never stops the bot.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from ..memory.errors import InvalidInputError
from ..memory.scopes import DEFAULT_PUBLIC_PLACES, place_listed
from ..memory.self.selfhood import BUDGET_RANGE, MOOD_LIMIT, RECALL_K_RANGE
from ..memory.text.redaction import MAX_PATTERNS, Redactor, redactor
from ..memory.validate import setting_value

log = logging.getLogger("engram.plugin")

INJECT_MODES = ("user", "system")
REPLY_LANGUAGES = ("auto", "zh", "en")  # plugin/replies/language.py says what auto chooses


@dataclass(frozen=True)
class Settings:
    """Every key of ``_conf_schema.json``, typed; the defaults here are the schema's defaults."""

    owner_ids: tuple[str, ...] = ()
    owner_private_spaces: tuple[str, ...] = ()
    public_spaces: tuple[str, ...] = DEFAULT_PUBLIC_PLACES  # AstrBot's own chat page
    inject_budget_tokens: int = 800
    inject_mode: str = "user"
    recall_k: int = 8
    embedding_provider_id: str = ""
    chat_provider_id: str = ""
    blacklist_spaces: tuple[str, ...] = ()
    dashboard_enabled: bool = True
    dashboard_port: int = 8765
    consolidate_every_minutes: int = 30
    consolidate_after_episodes: int = 30
    strength_half_life_days: int = 30
    timezone: str = ""
    reply_language: str = "auto"  # /mem replies: auto, zh or en (plugin/reply_lang.py)
    identity_enabled: bool = True
    time_enabled: bool = True
    diary_enabled: bool = True
    diary_boundary_hour: int = 4
    self_image_enabled: bool = True
    inner_state_enabled: bool = True
    baseline_mood: str = "calm"
    abilities_enabled: bool = True
    proposals_enabled: bool = True
    redact_secrets: bool = True
    redact_patterns: tuple[str, ...] = ()
    backup_keep: int = 7  # daily backups kept (0: no daily backup)
    ranking_learn: bool = True  # the ranking learns from what replies used (docs/recall.md)
    database_url: str = ""  # a postgresql:// database several instances share (docs/postgres.md); "": SQLite

    def is_owner(self, platform: str, user_id: str, platforms: Sequence[str] = ()) -> bool:
        """Whether the sender is the owner. An entry ``<platform>:<user_id>`` names one person; a bare
        ``<user_id>`` counts only on the bot's one chat platform (``sole_platform``), as the same
        number on another platform is another person."""
        if not user_id:
            return False
        return f"{platform}:{user_id}" in self.owner_ids or (
            user_id in self.owner_ids and platform == sole_platform(platforms))

    def bare_owner_ids(self) -> tuple[str, ...]:
        return tuple(o for o in self.owner_ids if ":" not in o)

    def is_blacklisted(self, place: str) -> bool:
        """Whether nothing may be recorded, injected or used by the tools in ``space``."""
        return place_listed(place, self.blacklist_spaces)

    def is_owner_private_place(self, place: str) -> bool:
        return place in self.owner_private_spaces  # a full place id only: it grants the owner's rights

    def is_public_place(self, place: str) -> bool:
        return place_listed(place, self.public_spaces)

    def redactor(self) -> Redactor:
        """The secrets taken out of what is recorded (``parse_settings`` kept only patterns that compile)."""
        return redactor(self.redact_patterns, enabled=self.redact_secrets)


WEBCHAT = "webchat"  # AstrBot's own chat page: always loaded, reached only by its dashboard's users


def sole_platform(platforms: Sequence[str]) -> str | None:
    """The bot's one chat platform (AstrBot's webchat not counted), or None when there are several."""
    chats = {p for p in platforms if p and p != WEBCHAT}
    return next(iter(chats)) if len(chats) == 1 else None


# key -> (low, high) for numbers, or the allowed values for strings
BOUNDS: dict[str, tuple[int, int]] = {"inject_budget_tokens": BUDGET_RANGE, "recall_k": RECALL_K_RANGE,
                                      "dashboard_port": (1024, 65535),
                                      "consolidate_every_minutes": (0, 1440),
                                      "consolidate_after_episodes": (0, 10000),
                                      "strength_half_life_days": (1, 3650),
                                      "diary_boundary_hour": (0, 23), "backup_keep": (0, 365)}
CHOICES: dict[str, tuple[str, ...]] = {"inject_mode": INJECT_MODES, "reply_language": REPLY_LANGUAGES}
TEXT_LIMITS: dict[str, int] = {"baseline_mood": MOOD_LIMIT}
# Lists that keep places out: written wrongly, they keep what can be read of them (a string is one
# place, a bad item is dropped) instead of falling back to the default, which would let those places in.
OPT_OUT_LISTS = ("blacklist_spaces",)


def parse_settings(raw: Mapping[str, Any] | None) -> tuple[Settings, list[str]]:
    """Settings from AstrBot's config dict, and one message per bad key (its default kept)."""
    raw = raw or {}
    default = Settings()
    values: dict[str, Any] = {}
    errors: list[str] = []
    for f in fields(Settings):
        if f.name not in raw:
            continue
        if f.name in OPT_OUT_LISTS:
            values[f.name], problem = _opt_out_list(raw[f.name])
            if problem:
                errors.append(f"config key {f.name!r}: {problem}")
            continue
        try:
            values[f.name] = _convert(f.name, raw[f.name], getattr(default, f.name))
        except ValueError as e:
            errors.append(f"config key {f.name!r}: {e}; using the default {getattr(default, f.name)!r}")
    if values.get("redact_patterns"):
        values["redact_patterns"], bad = _patterns(values["redact_patterns"])
        errors += [f"config key 'redact_patterns': {b}; that pattern is ignored" for b in bad]
    for msg in errors:
        log.error("Engram %s", msg)
    settings = Settings(**values)
    if not settings.consolidate_every_minutes and not settings.consolidate_after_episodes:
        log.warning("Engram: consolidate_every_minutes and consolidate_after_episodes are both 0, so "
                    "consolidation runs only when the owner sends /mem consolidate")
    return settings, errors


def _convert(key: str, value: Any, default: Any) -> Any:
    if isinstance(default, tuple):
        places = _string_list(value)
        bare = [p for p in places if ":" not in p]
        if key == "owner_private_spaces" and bare:  # it grants the owner's rights: never a bare id
            raise ValueError(f"{bare[0]!r} is not a full place id like qq:private:{bare[0]} "
                             "(a bare id could be someone else's on another platform)")
        return places
    if key in CHOICES or key == "database_url":  # text with rules of its own
        value = setting_value(value, default)
        if key in CHOICES and value not in CHOICES[key]:
            raise ValueError(f"expected one of {', '.join(CHOICES[key])}, got {value!r}")
        if key == "database_url" and value and not value.startswith(("postgresql://", "postgres://")):
            raise ValueError("expected a postgresql://user@host/database URL, or nothing for the SQLite file")
        return value
    return setting_value(value, default, BOUNDS.get(key), TEXT_LIMITS.get(key))


def _opt_out_list(value: Any) -> tuple[tuple[str, ...], str]:
    """The places of an opt-out list however it is written, and what was wrong with it ("" if nothing)."""
    if isinstance(value, str):
        one: tuple[str, ...] = (value.strip(),) if value.strip() else ()
        return one, (f"expected a list of place ids, got the text {value!r}; "
                     f"read as {'the one place ' + repr(one[0]) if one else 'no place'}")
    if not isinstance(value, list | tuple):
        return (), f"expected a list of place ids, got {type(value).__name__} {value!r}; no place is left out"
    ok = [isinstance(v, str | int) and not isinstance(v, bool) for v in value]
    places = tuple(str(v).strip() for v, fine in zip(value, ok) if fine and str(v).strip())
    bad = [v for v, fine in zip(value, ok) if not fine]
    return places, (f"items {bad!r} are not place ids and are ignored; still left out: "
                    f"{', '.join(places) or 'no place'}" if bad else "")


def _patterns(patterns: tuple[str, ...]) -> tuple[tuple[str, ...], list[str]]:
    """The redaction patterns that compile (the defaults stay on whatever the others are), and why
    each other one was left out."""
    good, bad = [], []
    for p in patterns[:MAX_PATTERNS]:
        try:
            redactor([p])
            good.append(p)
        except InvalidInputError as e:
            bad.append(str(e))
    return tuple(good), bad + ([f"more than {MAX_PATTERNS} patterns"] if len(patterns) > MAX_PATTERNS else [])


def _string_list(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list | tuple):
        raise ValueError(f"expected a list of ids, got {type(value).__name__} {value!r}")
    bad = [v for v in value if not isinstance(v, str | int) or isinstance(v, bool)]
    if bad:
        raise ValueError(f"expected a list of ids, got item {bad[0]!r}")
    return tuple(str(v).strip() for v in value if str(v).strip())
