"""What a forget is said to erase, as the chat that asked may count it: outside the owner's private chat
only the lines, memories and identity proposals that chat may see, and always (so the answer tells
nothing) that what other chats hold is not counted there. The forget itself reaches what it says."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ..memory import Forgetting
from .command_text import erased

if TYPE_CHECKING:
    from .commands import CommandContext


async def seen_part(ctx: CommandContext, plan: Forgetting) -> Forgetting | None:
    """The part of a forget's ``plan`` ``ctx``'s chat may count (None in the owner's private chat,
    which counts all). Read before the forget runs: after it, the erased lines tell no place."""
    if ctx.audience.owner_private:
        return None
    mem = await ctx.service.memory()
    lines, kept = await mem.episodes(plan.episodes), await mem.memories(plan.memories)
    places = {p.id: p.place for p in ctx.service.selfhood.proposals.all()}
    return replace(plan,
                   episodes=[i for i in plan.episodes if i in lines and ctx.sees_episode(lines[i].place)],
                   memories=[i for i in plan.memories if i in kept and ctx.sees_memory(kept[i].scope)],
                   proposals=[i for i in plan.proposals if i in places and ctx.sees_episode(places[i])])


def erased_here(ctx: CommandContext, seen: Forgetting | None, done: Forgetting) -> str:
    """What a forget erased (``command_text.erased``), counted as ``seen_part`` found."""
    if seen is None:
        return erased(ctx.lang, done)
    left = ctx.say("files_left") if done.files_left else ""
    return erased(ctx.lang, replace(seen, files_left=False)) + ctx.say("not_counted_elsewhere") + left
