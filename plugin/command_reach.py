"""What a ``/mem`` command may reach from the chat it is given in, and how a recall hit is said."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..memory import Episode, Hit, Memory, UnknownIdError
from ..memory.render import quoted
from .command_args import Refused
from .command_text import short
from .reply_words import word

if TYPE_CHECKING:
    from .commands import CommandContext


async def reachable_episode(ctx: CommandContext, episode_id: int) -> Episode:
    """The episode, if it was said in this chat or this is the owner's private chat; else 'no episode'."""
    mem = await ctx.service.memory()
    try:
        ep = await mem.get_episode(episode_id)
    except UnknownIdError:
        ep = None
    if ep is None or not ctx.sees_episode(ep.place):
        raise Refused("no_episode_here", id=episode_id)
    return ep


async def reachable(ctx: CommandContext, memory_id: int) -> Memory:
    """The memory, if this chat may see it or this is the owner's private chat; else 'no memory'.

    A memory's scope covers all its versions: an old version is reachable exactly when every version
    of it is (moving a memory moves its history), so no version tells a chat about a newer one.
    """
    mem = await ctx.service.memory()
    try:
        m = await mem.get(memory_id)
        versions = await mem.history(memory_id)
    except UnknownIdError:
        m, versions = None, []
    if m is None or not all(ctx.sees_memory(v.scope) for v in versions):
        raise Refused("no_memory_here", id=memory_id)
    return m


def hit_line(h: Hit, ctx: CommandContext) -> str:
    top = sorted(((k, v) for k, v in h.features.items() if v), key=lambda kv: -abs(kv[1]))[:3]
    feats = ", ".join(f"{word(ctx.lang, 'feature', k)}={v:.2f}" for k, v in top)
    return ctx.say("hit", key=h.key, score=f"{h.score:.2f}", features=feats, when=ctx.when(h.time),
                   text=quoted(short(h.text)))
