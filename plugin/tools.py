"""The model's tools: ``memory_recall``, ``memory_remember`` and ``memory_forget`` (what the person
asking said of themselves in this place: ``memory.metabolism.own_forget``), bound to the current
audience, and ``identity_propose`` (a change to its core identity, for the owner to decide:
``/mem approve``).

Arguments come from a model and may be of any type: each is checked, and a wrong one gets a
readable sentence back (the model can try again), never an exception.
"""

from __future__ import annotations

import logging
from typing import Any

from ..memory import Episode, Memory
from ..memory.errors import InvalidInputError
from ..memory.metabolism.own_forget import REBUILT, OwnForget
from ..memory.model import now_utc
from ..memory.self.proposals import ProposalFlood
from ..memory.text.display import cut
from ..memory.text.words import blank
from ..memory.tools.calls import (
    MAX_LIMIT,
    MAX_QUERY,
    MAX_TEXT,
    NOTE_CHARS,
    OPTED_OUT,
    TOOL_TOKENS,
    ToolArgError,
    about_arg,
    count_arg,
    flag_arg,
    limit_arg,
    recall_answer,
    remember,
    text_arg,
)
from .events import actor_of, audience_of, parse_message
from .service import EngramService

log = logging.getLogger("engram.plugin")

MAX_RECENT = 10  # of memory_forget's "recent": the person's latest lines here
FORGET_POOL = 60  # hits memory_forget looks through for the person's own lines among everyone's
SAID_CHARS = 160  # of each line or memory memory_forget says it removed

# the checks, the scope rules and the answers are the core's (memory/tools/calls.py, shared with the
# MCP server); these names stay importable from here
__all__ = ["MAX_LIMIT", "MAX_QUERY", "MAX_TEXT", "NOTE_CHARS", "TOOL_TOKENS", "ToolArgError", "flag_arg",
           "count_arg",
           "identity_propose", "limit_arg", "memory_forget", "memory_recall", "memory_remember", "text_arg"]


async def memory_recall(service: EngramService, event: Any, query: Any, limit: Any,
                        archived: Any = False) -> str:
    """What the current chat may see that matches ``query``, as dated lines (``archived``: faded
    memories too, which come back to life)."""
    try:
        q, k = text_arg("query", query, MAX_QUERY), limit_arg(limit)
        old = flag_arg("archived", archived)
    except ToolArgError as e:
        return str(e)
    audience = service.audience(event)
    if service.settings.is_blacklisted(audience.place):
        return OPTED_OUT
    try:
        # the message that asked, and the turn the model reads, are not what it is trying to recall
        hits, held = await service.recall_held(audience, q, k, service.current_turn(event),
                                               include_archived=old)
        service.touch(hits)
        # a result the reply then cites counts as used (the learned ranking, off the reply's path)
        service.recorded(event, audience.place, hits, held, injection=False)
        names = await service.names(audience.place, hits)
    except Exception:  # the model gets a sentence, the log the traceback
        log.exception("Engram: memory_recall failed")
        return "error: memory is unavailable right now"
    if hits:
        service.handed(event, [h.text for h in hits])
    return recall_answer(q, hits, names, now_utc(), service.tz)


async def memory_remember(service: EngramService, event: Any, text: Any, about: Any) -> str:
    """Store a memory in the current place; code decides the scope and never widens it."""
    try:
        t, who = text_arg("text", text, MAX_TEXT), about_arg(about)
    except ToolArgError as e:
        return str(e)
    audience = service.audience(event)
    if service.settings.is_blacklisted(audience.place):
        return "Not remembered: " + OPTED_OUT
    sender = str(getattr(event, "get_sender_name", lambda: "")() or "")
    try:
        return await remember(await service.memory(), audience.place, t, who,
                              public=service.settings.is_public_place(audience.place), asker=actor_of(event),
                              asker_name=sender, mentions=parse_message(event).meta.get("mentions", []))
    except Exception:
        log.exception("Engram: memory_remember failed")
        return "error: memory is unavailable right now; nothing was stored"


async def identity_propose(service: EngramService, event: Any, change: Any, reason: Any) -> str:
    """The model proposes a change to its core identity; only the owner can approve it."""
    if not service.settings.proposals_enabled:
        return "Identity proposals are switched off by the owner."
    try:
        c = text_arg("change", change, 1000)
        r = text_arg("reason", reason, 500, required=False)
    except ToolArgError as e:
        return str(e)
    place = audience_of(event, service.settings).place
    if service.settings.is_blacklisted(place):  # an opted-out place: nothing of what is said there is kept
        return "Not proposed: " + OPTED_OUT
    try:
        p = service.selfhood.proposals.propose(c, r, place, person=actor_of(event))
    except ProposalFlood as e:
        return f"Not proposed: {e}."
    except InvalidInputError as e:
        return f"error: {e}"
    except OSError:
        log.exception("Engram: saving an identity proposal failed")
        return "error: the proposal could not be saved right now"
    return (f"Proposed (#{p.id}). Your identity changes only if the owner approves it; "
            "until then, nothing about you changes.")


async def memory_forget(service: EngramService, event: Any, what: Any, recent: Any = 0) -> str:
    """Erase what the person asking said of themselves in this place: their lines sharing a word with
    ``what`` and the memories here about them that match it, and/or their ``recent`` latest lines
    (not this message), with the bot's answers to those lines; at once, for every later recall.
    Another person's words, another place and the owner's notes are out of its reach."""
    try:
        w = text_arg("what", what, MAX_QUERY, required=False)
        n = count_arg("recent", recent, MAX_RECENT)
    except ToolArgError as e:
        return str(e)
    if blank(w) and not n:
        return ("error: give what (the thing to forget, in a few words) or recent (how many of their "
                "latest lines)")
    audience = service.audience(event)
    if service.settings.is_blacklisted(audience.place):
        return OPTED_OUT
    person, asking = actor_of(event), parse_message(event).text.strip()
    try:
        await service.flush()  # the lines said before this one are in the store: the forget reaches them
        mem = await service.memory()
        lines: list[int] = []
        memories: list[int] = []
        if not blank(w):  # their lines and memories sharing a word with what they named
            for h in await mem.recall(w, audience, k=FORGET_POOL):
                if h.features.get("kw", 0) > 0:
                    (lines if h.kind == "episode" else memories).append(h.id)
        latest = await mem.latest_lines(person, audience.place, n + 1) if n else []
        found = await mem.episodes([*lines, *latest])
        asked = {i for i, e in found.items() if e.content.strip() == asking}  # this message: not a fact
        lines = [i for i in lines if i not in asked] + [i for i in latest if i not in asked][:n]
        async with service.days_lock.forget_turn(_quiet):  # after a diary job writing now, as /mem forget
            plan = (await mem.forget_own(person, audience.place, lines, memories, dry_run=True)).plan
            texts = await mem.episodes(plan.episodes), await mem.memories(plan.memories)  # before they go
            own = await mem.forget_own(person, audience.place, lines, memories)
    except InvalidInputError as e:
        return f"error: {e}"
    except Exception:
        log.exception("Engram: memory_forget failed")
        return "error: memory is unavailable right now; nothing was forgotten"
    return _forgot(own, *texts)


async def _quiet(_line: str) -> None:
    """memory_forget waits for a diary job without a word (the model's answer comes after)."""


def _forgot(own: OwnForget, lines: dict[int, Episode], memories: dict[int, Memory]) -> str:
    """What memory_forget removed, for the model to tell the person: each line and memory, quoted."""
    plan = own.plan
    said = [f'- {"your reply" if lines[i].kind == "message_out" else "their line"}: '
            f'"{cut(lines[i].content, SAID_CHARS)}"' for i in plan.episodes if i in lines]
    said += [f'- memory: "{cut(memories[i].text, SAID_CHARS)}"' for i in plan.memories
             if i in memories and memories[i].kind not in REBUILT]
    left = (f"\n{len(own.left)} more of their lines matched but stay: a memory drawn from them also holds "
            "someone else's words; only the bot's owner can erase it (/mem forget).") if own.left else ""
    if not said:
        return ("Nothing of theirs here matched; nothing was forgotten. Try other words from what they said, "
                "or recent=N for their N latest lines." + left)
    diary = " A diary of those days is written again without it." if plan.diary_days else ""
    return ("Forgotten for good (it no longer comes up in any later reply):\n" + "\n".join(said)
            + diary + left)
