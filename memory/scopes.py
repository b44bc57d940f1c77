"""Privacy by scope: the one place that decides what an audience may see.

Scopes: ``public`` (anywhere), ``self`` (the bot's own feelings; anywhere), ``owner`` (only in a
private chat with the owner), ``space:<space>`` (only in that place). Episodes are visible only in
their own space. Every read path asks :func:`visibility` and filters *before* ranking.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import InvalidScopeError
from .model import PLACE_CHARS, Audience

PUBLIC, SELF, OWNER = "public", "self", "owner"
SPACE_PREFIX = "space:"


def parse_scope(scope: object) -> str:
    """Return ``scope`` normalised, or raise InvalidScopeError naming what is allowed."""
    if not isinstance(scope, str):
        raise InvalidScopeError(f"scope must be a string, not {type(scope).__name__}")
    s = scope.strip()
    if s in (PUBLIC, SELF, OWNER):
        return s
    if s.startswith(SPACE_PREFIX) and s[len(SPACE_PREFIX):].strip():
        place = s[len(SPACE_PREFIX):].strip()
        if len(place) > PLACE_CHARS:
            raise InvalidScopeError(f"a place id is at most {PLACE_CHARS} characters", code="place_too_long",
                                    limit=PLACE_CHARS)
        return SPACE_PREFIX + place
    raise InvalidScopeError(
        f"invalid scope {scope!r}: use public, self, owner or space:<space>", code="scope_invalid",
        scope=repr(scope))


def place_scope(place: str) -> str:
    """The scope of things learned in ``space`` and meant to stay there."""
    return parse_scope(SPACE_PREFIX + place)


@dataclass(frozen=True)
class Visibility:
    """What one audience may see. ``None`` means no restriction (the owner's console)."""

    memory_scopes: frozenset[str] | None
    episode_places: frozenset[str] | None

    def sees_memory(self, scope: str) -> bool:
        return self.memory_scopes is None or scope in self.memory_scopes

    def sees_episode(self, place: str) -> bool:
        return self.episode_places is None or place in self.episode_places


def visibility(audience: Audience, *, by_command: bool = False) -> Visibility:
    """The one function that decides what ``audience`` may see.

    ``by_command``: what an owner's command (``/mem show``, ``scope``, ``forget``) may reach from this
    chat: the owner's private chat reaches everything (to show, move or forget what other chats
    hold); any other chat, what it may see.
    """
    if audience.everything or (by_command and audience.owner_private):
        return Visibility(None, None)
    place = audience.place.strip()  # spaces are compared as episodes store them: stripped
    scopes = {PUBLIC, SELF, place_scope(place)} if place else {PUBLIC, SELF}
    if audience.owner_private:
        scopes.add(OWNER)
    places = frozenset({place}) if place else frozenset()
    return Visibility(frozenset(scopes), places)


def narrow_scope(proposed: str, learned_in: str, subjects: tuple[str, ...] = ()) -> str:
    """The scope code allows for a model's proposal: it can only narrow, never widen.

    Memories about people stay in the space they were learned in (or ``owner``, if learned
    there); only memories about no person may become ``public`` or ``self``.
    """
    home = place_scope(learned_in)
    try:
        wanted = parse_scope(proposed)
    except InvalidScopeError:
        return home
    if wanted == home:
        return home
    if wanted == OWNER:
        return OWNER
    if wanted in (PUBLIC, SELF) and not subjects:
        return wanted
    return home


@dataclass(frozen=True)
class ScopeDecision:
    """The scope code gave a model's proposal, and whether the proposal asked for more than allowed."""

    scope: str
    widened: bool  # the hint was wider than the rule allows (refused, narrowed to ``scope``)


# The places whose facts about no one may become public unless the owner lists others: AstrBot's own
# chat page (its dashboard's users; ``webchat:private:astrbot`` is how Engram names it). One constant
# for the plugin's setting and the command line's ``consolidate``, so both decide alike.
DEFAULT_PUBLIC_PLACES: tuple[str, ...] = ("webchat:private:astrbot",)


def place_listed(place: str, entries: tuple[str, ...] | frozenset[str]) -> bool:
    """``space`` is in a list of places: listed in full (``aiocqhttp:group:123``), or a group listed by
    its bare id (``123``). A bare id never matches a private chat (``*:private:123`` is a person, not
    group 123), so a place list cannot make a private chat public by accident."""
    if place in entries:
        return True
    _, kind, rest = (place.split(":", 2) + ["", ""])[:3]
    return kind == "group" and rest in entries and ":" not in rest


def private_place_of(person: str) -> str | None:
    """The private chat with ``person``: ``<platform>:private:<uid>`` for the person ``<platform>:<uid>``
    (the plugin's ``events.place_of``); None for a name or an id of another form."""
    platform, sep, uid = person.partition(":")
    return f"{platform}:private:{uid}" if sep and platform and uid and ":" not in uid else None


def learned_scope(hint: object, place: str, *, about_people: bool, owner_private: bool = False,
                  public_place: bool = False, own_thoughts: bool = False) -> ScopeDecision:
    """The scope of a memory a model derived from what was said in ``place``: code decides, only narrows.

    Memories about people stay where they were learned (``space:<place>``, or ``owner`` in the
    owner's private chat); only a memory about no person, learned in a public place, may become
    ``public`` (or ``self``); what the bot drew from its own thoughts stays with the owner. ``owner``
    is always allowed: the owner may see everything the bot knows.
    """
    home = OWNER if owner_private or own_thoughts else place_scope(place)
    allowed = {home, OWNER}
    if public_place and not about_people and not own_thoughts:
        allowed |= {PUBLIC, SELF}
    if hint is None or (isinstance(hint, str) and not hint.strip()):
        return ScopeDecision(home, False)
    try:
        wanted = parse_scope(hint)
    except InvalidScopeError:
        return ScopeDecision(home, True)
    if wanted in allowed:
        return ScopeDecision(wanted, False)
    return ScopeDecision(home, True)


def may_write(scope: str, place: str, *, about_people: bool, owner_private: bool = False,
              public_place: bool = False) -> bool:
    """Whether a model working on ``place`` may change a memory of ``scope`` (an update keeps the scope)."""
    return learned_scope(scope, place, about_people=about_people, owner_private=owner_private,
                         public_place=public_place).scope == scope
