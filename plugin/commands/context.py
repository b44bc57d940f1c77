"""What a ``/mem`` subcommand works with: the service, the event, who would read the answer, and what
it may reach from this chat (``memory.scopes.visibility``: the owner's private chat reaches anything;
elsewhere a memory or line this chat may not see does not exist)."""

from __future__ import annotations

import logging
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from astrbot.api.event import MessageChain
from astrbot.api.message_components import Plain

from ...memory import Audience, Episode, Memory, UnknownIdError, visibility
from ...memory.model import now_utc
from ...memory.wording import EN, when
from ..events import platform_of
from ..replies.catalogue import say
from ..service import EngramService
from .args import Refused

if TYPE_CHECKING:
    from .dispatch import Registry

log = logging.getLogger("engram.plugin")


@dataclass
class CommandContext:
    """What a subcommand works with: the service, the event, and who would read the answer."""

    service: EngramService
    event: Any
    audience: Audience
    lang: str = EN  # the reply's language (replies.language)
    commands: Registry | None = None  # the registry that dispatched it (``/mem help`` lists it)

    def say(self, key: str, /, **values: object) -> str:
        """The catalogue's text of ``key`` in this reply's language."""
        return say(self.lang, key, **values)

    def when(self, then: Any) -> str:
        return when(then, now_utc(), self.service.tz, self.lang)

    async def say_now(self, text: str) -> None:
        """Send ``text`` to this chat at once, before the command's answer (a failure is logged)."""
        try:
            await self.event.send(MessageChain([Plain(text)]))
        except Exception:
            log.exception("Engram: sending a line before the answer failed")

    def sees_episode(self, place: str) -> bool:
        """Whether a line of ``place`` may be shown here (the owner's private chat: any)."""
        return visibility(self.audience, by_command=True).sees_episode(place)

    def sees_memory(self, scope: str) -> bool:
        """Whether a memory of ``scope`` may be shown here (the owner's private chat: any)."""
        return visibility(self.audience, by_command=True).sees_memory(scope)

    async def reachable_episode(self, episode_id: int) -> Episode:
        """The episode, if it was said in this chat or this is the owner's private chat; else 'no episode'."""
        mem = await self.service.memory()
        try:
            ep = await mem.get_episode(episode_id)
        except UnknownIdError:
            ep = None
        if ep is None or not self.sees_episode(ep.place):
            raise Refused("no_episode_here", id=episode_id)
        return ep

    async def reachable(self, memory_id: int) -> Memory:
        """The memory, if this chat may see it or this is the owner's private chat; else 'no memory'.

        A memory's scope covers all its versions: an old version is reachable exactly when every version
        of it is (moving a memory moves its history), so no version tells a chat about a newer one.
        """
        mem = await self.service.memory()
        try:
            m = await mem.get(memory_id)
            versions = await mem.history(memory_id)
        except UnknownIdError:
            m, versions = None, []
        if m is None or not all(self.sees_memory(v.scope) for v in versions):
            raise Refused("no_memory_here", id=memory_id)
        return m

    def owner_hint(self) -> str:
        """For a refusal of the owner's commands in a private chat that is not the owner's: how to make
        it the owner's ("" elsewhere: a group is never the owner's private chat)."""
        place = self.audience.place.split(":")
        if self.audience.owner_private or len(place) < 3 or place[1] != "private":
            return ""
        settings, me = self.service.settings, f"{platform_of(self.event)}:{place[2]}"
        if not settings.owner_ids and not settings.owner_private_spaces:
            return self.say("hint_no_owner", me=me)
        return self.say("hint_bare_id", bare=place[2], me=me) if place[2] in settings.owner_ids else ""

    def forget_turn(self) -> AbstractAsyncContextManager[None]:
        """A forget's turn with the diary and self-image jobs; told at once when it must wait (what
        holds the turn, said in this reply's language)."""
        lock = self.service.days_lock
        return lock.forget_turn(lambda _line: self.say_now(
            self.say("forget_waits", what=self.say(f"holder_{lock.held_by or 'diary'}"))))
