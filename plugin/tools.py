"""The model's tools: ``memory_recall``, ``memory_remember`` and ``memory_forget`` (what the person
asking said of themselves in this place: ``memory.metabolism.own_forget``), bound to the current
audience, and ``identity_propose`` (a change to its core identity, for the owner to decide:
``/mem approve``).

Arguments come from a model and may be of any type: each is checked, and a wrong one gets a
readable sentence back (the model can try again), never an exception.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from ..memory import SELF, Episode, Memory, narrow_scope, place_scope
from ..memory.errors import InvalidInputError
from ..memory.metabolism.dedup import remember
from ..memory.metabolism.own_forget import REBUILT, OwnForget
from ..memory.model import now_utc
from ..memory.render import notes
from ..memory.scopes import PUBLIC as PUBLIC_SCOPE
from ..memory.self.proposals import ProposalFlood
from ..memory.text.display import cut
from ..memory.text.words import blank, budget_tokens
from .events import actor_of, audience_of, parse_message
from .hooks.echo import TOOL_HEAD
from .service import EngramService

log = logging.getLogger("engram.plugin")

MAX_QUERY = 1000
MAX_TEXT = 2000
MAX_LIMIT = 20
MAX_RECENT = 10  # of memory_forget's "recent": the person's latest lines here
FORGET_POOL = 60  # hits memory_forget looks through for the person's own lines among everyone's
SAID_CHARS = 160  # of each line or memory memory_forget says it removed
TOOL_TOKENS = 4000  # of one memory_recall answer (text.budget_tokens): long pasted texts cannot flood it
NOTE_CHARS = 1500  # of one note in it; a longer one is cut and marked
NOBODY = ("", "none", "nobody", "no one", "noone", "nothing", "null")
OPTED_OUT = "this place has opted out of being remembered; memory is not available here."
THE_USER = ("me", "user", "the user", "i", "myself", "them", "sender")


class ToolArgError(ValueError):
    """A tool argument of the wrong type or out of range; its message goes back to the model."""


def text_arg(name: str, value: Any, limit: int, required: bool = True) -> str:
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise ToolArgError(f"error: {name} must be a string, not {type(value).__name__}")
    value = value.strip()
    if required and blank(value):
        raise ToolArgError(f"error: {name} must not be empty")
    if len(value) > limit:
        raise ToolArgError(f"error: {name} is too long ({len(value)} characters, at most {limit})")
    return value


def limit_arg(value: Any, default: int = 5) -> int:
    if value is None or value == "":
        return default
    if isinstance(value, str) and re.fullmatch(r"\s*[0-9]{1,9}\s*", value):
        value = int(value.strip())
    if (isinstance(value, bool) or not isinstance(value, int | float)
            or (isinstance(value, float) and not value.is_integer())):  # NaN and infinity too
        raise ToolArgError(f"error: limit must be a whole number from 1 to {MAX_LIMIT}, not {value!r}")
    if not 1 <= int(value) <= MAX_LIMIT:
        raise ToolArgError(f"error: limit must be from 1 to {MAX_LIMIT}, not {value}")
    return int(value)


def flag_arg(name: str, value: Any) -> bool:
    if value is None or value == "" or isinstance(value, bool):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "yes", "no", "1", "0"):
        return value.strip().lower() in ("true", "yes", "1")
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise ToolArgError(f"error: {name} must be true or false, not {value!r}")


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
        hits = await service.recall(audience, q, k, service.current_turn(event), include_archived=old)
        service.touch(hits)
        names = await service.names(audience.place, hits)
    except Exception:  # the model gets a sentence, the log the traceback
        log.exception("Engram: memory_recall failed")
        return "error: memory is unavailable right now"
    if not hits:
        return f"No memories found for {q!r}."
    service.handed(event, [h.text for h in hits])
    now = now_utc()
    return TOOL_HEAD + "\n" + "\n".join(bounded(notes(hits, names, now, service.tz)))


def bounded(notes: list[str]) -> list[str]:
    """The notes within ``TOOL_TOKENS``, best first, each cut at ``NOTE_CHARS`` (its quote closed and
    marked), and how many more there were."""
    out: list[str] = []
    used = budget_tokens(TOOL_HEAD)
    for i, line in enumerate(notes):
        if len(line) > NOTE_CHARS:  # a note ends with its quoted text
            line = cut(line, NOTE_CHARS - 7) + '" (cut)'
        cost = budget_tokens(line) + 1
        if used + cost > TOOL_TOKENS - 20:  # room for the line saying so
            return [*out, f"({len(notes) - i} more not shown here; ask with other words to find them)"]
        out.append(line)
        used += cost
    return out


async def subjects_for(service: EngramService, event: Any, place: str, about: str) -> tuple[str, ...] | None:
    """Person ids for ``about``: none, the user, the bot, someone mentioned or seen here under that
    name; None when ``about`` names someone this place has not seen (no id is made up for a name)."""
    low = about.lower()
    if low in NOBODY:
        return ()
    sender_name = str(getattr(event, "get_sender_name", lambda: "")() or "").strip().lower()
    if low in THE_USER or (sender_name and low == sender_name):
        return (actor_of(event),)
    if low in ("you", "yourself", "the bot", "bot"):
        return (SELF,)
    for m in parse_message(event).meta.get("mentions", []):
        if m.get("name", "").lower() == low.lstrip("@") and m["id"] not in ("all", SELF):
            return (m["id"],)
    seen = await (await service.memory()).people_named_in(place, about.lstrip("@"))
    return (seen[0],) if seen else None


async def memory_remember(service: EngramService, event: Any, text: Any, about: Any) -> str:
    """Store a memory in the current place; code decides the scope and never widens it."""
    try:
        t = text_arg("text", text, MAX_TEXT)
        who = text_arg("about", about, 200, required=False)
    except ToolArgError as e:
        return str(e)
    if not who.lstrip("@").strip():  # "@" alone names no one
        who = ""
    audience = service.audience(event)
    if service.settings.is_blacklisted(audience.place):
        return "Not remembered: " + OPTED_OUT
    try:
        found = await subjects_for(service, event, audience.place, who)
    except Exception:
        log.exception("Engram: memory_remember failed")
        return "error: memory is unavailable right now; nothing was stored"
    subjects = found or ()
    if found is None and who.lower() not in t.lower():
        t = f"{t} (about {who})"  # a name kept as text: it still says whom the note is about
    people = tuple(s for s in subjects if s != SELF) or ((who,) if found is None else ())
    public = service.settings.is_public_place(audience.place)
    if public and not people:  # the model's "about no one" is not trusted where that makes a fact public
        try:
            named = await (await service.memory()).people_mentioned_in(audience.place, t)
        except Exception:
            log.exception("Engram: memory_remember failed")
            return "error: memory is unavailable right now; nothing was stored"
        subjects = people = tuple(named)
    proposed = PUBLIC_SCOPE if public else place_scope(audience.place)
    scope = narrow_scope(proposed, audience.place, people)  # about someone: it stays where it was learned
    try:
        mid, how = await remember(await service.memory(), Memory(text=t, scope=scope, kind="fact",
                                                                 subjects=subjects))
    except Exception:
        log.exception("Engram: memory_remember failed")
        return "error: memory is unavailable right now; nothing was stored"
    where = "anywhere" if scope == PUBLIC_SCOPE else "in this chat"
    if how == "kept":
        return f"Already remembered (m{mid}); nothing new was stored."
    update = ", an update of an earlier memory" if how == "updated" else ""
    return f"Remembered (m{mid}{update}); it will come up {where}."


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


def count_arg(name: str, value: Any, most: int) -> int:
    """A whole number from 0 to ``most`` (None or "" is 0)."""
    if value is None or value == "":
        return 0
    if isinstance(value, str) and re.fullmatch(r"\s*[0-9]{1,9}\s*", value):
        value = int(value.strip())
    if (isinstance(value, bool) or not isinstance(value, int | float)
            or (isinstance(value, float) and not value.is_integer()) or not 0 <= value <= most):
        raise ToolArgError(f"error: {name} must be a whole number from 0 to {most}, not {value!r}")
    return int(value)


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
