"""The core's data: episodes, memories, audiences and recall hits."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any, Literal

EPISODE_KINDS = ("message_in", "message_out", "observation", "image", "note")
MEMORY_KINDS = ("fact", "preference", "event", "relation", "plan", "diary", "reflection", "note")
MEMORY_STATUSES = ("active", "superseded", "archived")
SELF = "self"  # the actor id of the bot itself
MAX_ID = 2**63 - 1  # SQLite's largest integer: no id is larger (a larger one cannot even be looked up)
# Caps on what names a place or a person (docs/privacy.md, "Limits"): a platform's ids are far
# shorter (a UMO such as "aiocqhttp:GroupMessage:123456789" is about 40 characters); an id longer
# than its cap is refused, never cut (two cut ids could become one), a display name is cut.
PLACE_CHARS = 512  # a place id (and the place in a ``space:`` scope)
PERSON_CHARS = 256  # a person id (an episode's actor, a memory's subject)
STORED_NAME_CHARS = 256  # a display name as stored (shown cut shorter: ``text.display.NAME_CHARS``)


def possible_ids(ids: Sequence[int]) -> list[int]:
    """The ids among ``ids`` a row could have (1 to ``MAX_ID``); the others name nothing."""
    return [i for i in ids if 0 < i <= MAX_ID]


def now_utc() -> datetime:
    """The current time, timezone-aware."""
    return datetime.now(timezone.utc)


def aware(t: datetime | None) -> datetime:
    """``t`` as a timezone-aware datetime (naive times are taken as UTC); None means now."""
    if t is None:
        return now_utc()
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


def timestamp(t: datetime | None) -> float | None:
    """Seconds since 1970 (naive times taken as UTC); None stays None."""
    return None if t is None else aware(t).timestamp()


def zone_minutes(t: datetime) -> int:
    """The time's zone as minutes east of UTC (0 for a naive time)."""
    off = aware(t).utcoffset()
    return int(off.total_seconds() // 60) if off else 0


@dataclass(frozen=True)
class Episode:
    """One thing the bot lived through: a message in or out, an image, an observation."""

    place: str
    content: str
    actor: str = ""
    actor_name: str = ""
    kind: str = "message_in"
    time: datetime | None = None
    source: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    id: int | None = None
    seq: int | None = None
    section: int | None = None
    # the place's title as its platform shows it (a group's name): kept per place (the latest one),
    # not with the line, so an episode read back has none
    place_title: str = ""


@dataclass(frozen=True)
class Memory:
    """A readable memory derived from episodes (or told directly), with a scope."""

    text: str
    scope: str
    kind: str = "fact"
    subjects: tuple[str, ...] = ()
    sources: tuple[int, ...] = ()
    importance: float = 0.5
    strength: float = 1.0
    last_recalled: datetime | None = None
    created_at: datetime | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    status: str = "active"
    supersedes: int | None = None
    id: int | None = None


@dataclass(frozen=True)
class Audience:
    """Who will read the reply: the space, the people present, and whether it is the owner's DM.

    ``everything`` is for the owner's own tools (dashboard, CLI): it sees every space.
    """

    place: str
    people: tuple[str, ...] = ()
    owner_private: bool = False
    everything: bool = False

    @classmethod
    def owner_console(cls) -> Audience:
        """The owner's dashboard / CLI view, which may see every space."""
        return cls(place="", everything=True)


@dataclass(frozen=True)
class Hit:
    """A recalled item with its score and the features that produced it."""

    kind: Literal["episode", "memory"]
    id: int
    text: str
    score: float
    features: dict[str, float]
    item: Episode | Memory

    @property
    def key(self) -> str:
        """A printable key: ``e12`` for episode 12, ``m7`` for memory 7."""
        return ("e" if self.kind == "episode" else "m") + str(self.id)

    @property
    def time(self) -> datetime | None:
        """When the recalled thing happened (episode time, or the memory's creation)."""
        if isinstance(self.item, Episode):
            return self.item.time
        return self.item.valid_from or self.item.created_at


def next_version(old: Memory, now: datetime, **changes: Any) -> Memory:
    """A new version of ``old`` with ``changes``: active, superseding it, made ``now`` (not yet stored)."""
    return replace(old, id=None, supersedes=old.id, created_at=now, status="active", **changes)
