"""The model's tools: ``memory_recall`` and ``memory_remember``, bound to the current audience, and
``identity_propose`` (a change to its core identity, for the owner to decide: ``/mem approve``).

Arguments come from a model and may be of any type: each is checked, and a wrong one gets a
readable sentence back (the model can try again), never an exception.
"""

from __future__ import annotations

import logging
from typing import Any

from ..memory.errors import InvalidInputError
from ..memory.model import now_utc
from ..memory.self.proposals import ProposalFlood
from ..memory.tools.calls import (
    MAX_LIMIT,
    MAX_QUERY,
    MAX_TEXT,
    NOTE_CHARS,
    OPTED_OUT,
    TOOL_TOKENS,
    ToolArgError,
    about_arg,
    flag_arg,
    limit_arg,
    recall_answer,
    remember,
    text_arg,
)
from .events import actor_of, audience_of, parse_message
from .service import EngramService

log = logging.getLogger("engram.plugin")

# the checks, the scope rules and the answers are the core's (memory/tools/calls.py, shared with the
# MCP server); these names stay importable from here
__all__ = ["MAX_LIMIT", "MAX_QUERY", "MAX_TEXT", "NOTE_CHARS", "TOOL_TOKENS", "ToolArgError", "flag_arg",
           "identity_propose", "limit_arg", "memory_recall", "memory_remember", "text_arg"]


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
        hits = await service.recall(audience, q, k, include_archived=old)
        service.touch(hits)
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
