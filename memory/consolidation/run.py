"""Consolidation: each place's new episodes, batch by batch, become memories the model proposes.

The model sees one batch of one place and the memories that place may already recall; it answers
with JSON actions (``actions.py``); code decides every scope (``scopes.learned_scope``) and refuses
what breaks the contract. A batch's memories and its place's cursor are committed together, so a
crash, a failed call or a malformed answer never loses a line or applies half a batch: the place
simply starts from the same cursor next time. A place waits (exponential backoff) after a failure;
a batch the model keeps failing on is skipped after ``max_failures`` tries, logged and counted; an
endpoint that is down (connection, HTTP 429/5xx) only delays, it never makes a batch be skipped.
"""

from __future__ import annotations

import logging
import traceback
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone, tzinfo
from pathlib import Path
from typing import Any

from ..chat import ChatModel
from ..errors import ChatError, ChatTimeout, ErasedMeanwhile, MovedMeanwhile
from ..kernel import Kernel
from ..model import SELF, Audience, Episode, Memory, aware, next_version
from ..prompts.templates import messages, shared_key, shared_names
from ..scopes import (
    DEFAULT_PUBLIC_PLACES,
    OWNER,
    PUBLIC,
    learned_scope,
    may_write,
    place_listed,
    place_scope,
    visibility,
)
from ..scopes import SELF as SELF_SCOPE
from .actions import (
    INVENTED_ID,
    UNFORESEEN,
    UNSEEN_MEMORY,
    WIDER_SCOPE,
    Add,
    MalformedReply,
    Refused,
    Update,
    check_action,
    parse_reply,
)

log = logging.getLogger("engram.consolidate")

CURSOR, FAILURES, RETRY_AT = "consolidate:", "consolidate.failures:", "consolidate.retry:"
QUERY_CHARS = 2000  # of the batch's text used to recall related memories


@dataclass(frozen=True)
class ConsolidationSettings:
    """How consolidation batches, waits and retries. Defaults suit a busy group chat."""

    batch_episodes: int = 60  # lines per model call at most
    batch_chars: int = 12_000  # ... and characters of them
    min_new: int = 20  # a place is due when it has this many new lines,
    idle_seconds: float = 1800.0  # or its conversation paused (its last line is this old)
    max_wait_seconds: float = 24 * 3600.0  # and its oldest new line is this old (raw lines are
    # recalled at once anyway: waiting gathers a quiet chat's lines into fewer, fuller calls)
    related: int = 10  # known memories shown with a batch
    batches_per_place: int = 3  # per run: a busy place cannot starve the others
    max_failures: int = 5  # tries before a batch the model keeps failing on is skipped
    backoff_seconds: float = 60.0  # first wait after a failure; doubles each time
    max_backoff: float = 3600.0
    timeout: float = 90.0
    public_spaces: tuple[str, ...] = DEFAULT_PUBLIC_PLACES
    owner_known: bool = True  # False: no chat is the owner's, so an ``owner`` memory would show nowhere

    def is_public(self, place: str) -> bool:
        """``space`` is listed in full (``qq:group:123``), or a group by its bare id (``123``): never a
        private chat by its user's number (``scopes.place_listed``)."""
        return place_listed(place, self.public_spaces)


@dataclass
class Report:
    """What one run did: calls and tokens, memories added and updated, refusals and failures."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    episodes: int = 0
    added: int = 0
    updated: int = 0
    skipped_batches: int = 0
    refused: Counter[str] = field(default_factory=Counter)
    failed: Counter[str] = field(default_factory=Counter)
    places: dict[str, Counter[str]] = field(default_factory=dict)
    new_ids: list[int] = field(default_factory=list)
    error: str = ""  # why the last failed model call failed ("no chat provider is configured ...")

    def stats(self) -> dict[str, int]:
        """Flat counters (``refused.invented_id``, ``failed.timeout``, ...) for the job record."""
        out = {k: getattr(self, k) for k in ("calls", "prompt_tokens", "completion_tokens", "episodes",
                                             "added", "updated", "skipped_batches")}
        out.update({f"refused.{k}": v for k, v in self.refused.items()})
        out.update({f"failed.{k}": v for k, v in self.failed.items()})
        return out

    def summary(self) -> str:
        """``2 added, 1 updated, from 40 lines, 1 model calls; refused ...; failed ...``."""
        parts = [f"{self.added} added, {self.updated} updated, from {self.episodes} lines, "
                 f"{self.calls} model calls"]
        if self.refused:
            parts.append("refused " + ", ".join(f"{k} {v}" for k, v in sorted(self.refused.items())))
        if self.failed:
            parts.append("failed " + ", ".join(f"{k} {v}" for k, v in sorted(self.failed.items()))
                         + (f" ({self.error})" if self.error else ""))
        if self.skipped_batches:
            parts.append(f"{self.skipped_batches} batches skipped")
        return "; ".join(parts)


@dataclass
class _Place:
    place: str
    cursor: int
    failures: int
    retry_at: float


class _Unavailable(Exception):
    """The endpoint is down: stop this run, nothing else is tried."""


class Consolidator:
    """Runs consolidation over a memory (its kernel) with a ChatModel (``run()``; tests call it directly)."""

    def __init__(self, engram: Kernel, chat: ChatModel, settings: ConsolidationSettings | None = None, *,
                 audience_for: Callable[[str], Audience] | None = None, tz: tzinfo | None = None,
                 clock: Callable[[], float] | None = None):
        self.engram = engram
        self.chat = chat
        self.settings = settings or ConsolidationSettings()
        self.audience_for = audience_for or (lambda place: Audience(place))
        self.tz = tz
        self.clock = clock or (lambda: engram.clock().timestamp())  # the memory's one clock

    async def run(self, places: Sequence[str] | None = None, *, force: bool = False) -> Report:
        """Consolidate the due places (or ``places``); ``force``: now, ignoring backoff and minimums."""
        report = Report()
        due = await self._due(places, force)
        try:
            for _ in range(self.settings.batches_per_place):
                due = [p for p in due if await self._one_batch(p, report)]
                if not due:
                    break
        except _Unavailable:
            pass
        return report

    async def _due(self, places: Sequence[str] | None, force: bool) -> list[_Place]:
        state = await self.engram.store.cursors("consolidate")
        now, s = self.clock(), self.settings
        out = []
        for place, n, _, first_time, last_time in await self.engram.store.episode_backlog(
                {k[len(CURSOR):]: v for k, v in state.items() if k.startswith(CURSOR)}):
            if places is not None and place not in places:
                continue
            p = _Place(place, state.get(CURSOR + place, 0), state.get(FAILURES + place, 0),
                       state.get(RETRY_AT + place, 0))
            quiet = now - last_time >= s.idle_seconds and now - first_time >= s.max_wait_seconds
            # a retry time further off than the longest backoff: the clock was set back since; due
            waited = p.retry_at <= now or p.retry_at > now + s.max_backoff
            if force or (waited and (n >= s.min_new or quiet)):
                out.append(p)
        return sorted(out, key=lambda p: p.cursor)

    async def _one_batch(self, place: _Place, report: Report) -> bool:
        """Consolidate the next batch of ``place``; True when it may go on this run. One batch of a
        place at a time across every instance on one store (``Store.turn``: PostgreSQL's advisory
        locks): another instance's batch under way, this one leaves the place for the next run."""
        store = self.engram.store
        async with store.turn(CURSOR + place.place) as mine:
            if not mine:
                log.info("consolidating %s: another instance is consolidating it now", place.place)
                return False
            place.cursor = max(place.cursor, await store.cursor(CURSOR + place.place))  # it may have moved
            return await self._batch(place, report)

    async def _batch(self, place: _Place, report: Report) -> bool:
        batch = self._cut(await self.engram.store.episodes_after(place.place, place.cursor,
                                                                self.settings.batch_episodes))
        if not batch:
            return False
        audience = self.audience_for(place.place)
        related = await self._related(batch, audience)
        names = await self._names(place.place, related)
        now = datetime.fromtimestamp(self.clock(), timezone.utc)
        try:
            report.calls += 1
            result = await self.chat.complete(messages(place.place, batch, related, names, now, self.tz),
                                              json=True, timeout=self.settings.timeout)
            report.prompt_tokens += result.prompt_tokens or 0
            report.completion_tokens += result.completion_tokens or 0
            raw = parse_reply(result.text)
        except ChatError as e:
            kind = "unavailable" if e.transient else "timeout" if isinstance(e, ChatTimeout) else "error"
            await self._failed(place, batch, report, kind, str(e), e.transient)
            return False
        except MalformedReply as e:
            await self._failed(place, batch, report, "malformed", str(e), False)
            return False
        plan = await self._resolve(self._plan(raw, place.place, batch, audience, now, report), audience,
                                   place.place, now, report)
        last = batch[-1].id
        assert last is not None
        try:
            ids = await self.engram.commit_memories(
                plan, {CURSOR + place.place: last, FAILURES + place.place: 0, RETRY_AT + place.place: 0},
                read=[e.id for e in batch if e.id is not None], expect={CURSOR + place.place: place.cursor})
        except ErasedMeanwhile:  # a line of the batch was forgotten while the model read it
            log.info("consolidating %s: lines were forgotten meanwhile; read again", place.place)
            return False
        except MovedMeanwhile:  # another process (the command line, the bot) applied this batch
            log.info("consolidating %s: another writer consolidated these lines meanwhile", place.place)
            return False
        place.cursor, place.failures, place.retry_at = last, 0, 0
        report.episodes += len(batch)
        report.new_ids += ids
        counts = report.places.setdefault(place.place, Counter())
        for _, old in plan:
            key = "updated" if old is not None else "added"
            setattr(report, key, getattr(report, key) + 1)
            counts[key] += 1
        return True

    def _cut(self, batch: list[Episode]) -> list[Episode]:
        """The batch within ``batch_chars`` (at least one line)."""
        total = 0
        for i, ep in enumerate(batch):
            total += len(ep.content) + 40
            if i and total > self.settings.batch_chars:
                return batch[:i]
        return batch

    async def _related(self, batch: Sequence[Episode], audience: Audience) -> list[Memory]:
        """The memories this place may already recall that are nearest to the batch."""
        query = "\n".join(e.content for e in batch)[-QUERY_CHARS:]
        k = self.settings.related
        hits = await self.engram.recall(query, audience, k=min(200, 4 * k)) if k else []
        return [h.item for h in hits if isinstance(h.item, Memory)][:k]

    async def _names(self, place: str, related: Sequence[Memory]) -> dict[str, str]:
        """The names the related memories' people went by in ``space`` (a name heard only in another
        chat stays out of this place's prompt; such a person shows as their id)."""
        people = sorted({s for m in related for s in m.subjects if s != SELF})
        return await self.engram.people.names_in_place(place, people)

    async def _failed(self, due: _Place, batch: Sequence[Episode], report: Report, kind: str,
                      why: str, transient: bool) -> None:
        """Nothing of the batch is applied; the place waits, or its batch is skipped after N tries."""
        report.failed[kind] += 1
        report.error = why
        due.failures += 1
        s, place = self.settings, due.place
        first, last = batch[0].id, batch[-1].id
        if not transient and due.failures >= s.max_failures:
            assert last is not None
            log.error("consolidation skipped e%s-e%s in %s after %d failed tries (last: %s)",
                      first, last, place, due.failures, why)
            try:
                await self.engram.commit_memories(
                    [], {CURSOR + place: last, FAILURES + place: 0, RETRY_AT + place: 0},
                    expect={CURSOR + place: due.cursor})
            except MovedMeanwhile:  # another writer got past this batch meanwhile: not skipped here
                return
            report.skipped_batches += 1
            return
        wait = min(s.max_backoff, s.backoff_seconds * 2 ** (due.failures - 1))
        log.warning("consolidation of %s (e%s-e%s) failed, try %d, retried in %.0fs: %s",
                    place, first, last, due.failures, wait, why)
        await self.engram.commit_memories([], {FAILURES + place: due.failures,
                                               RETRY_AT + place: int(self.clock() + wait)})
        if transient:
            raise _Unavailable(why)

    def _plan(self, raw: list[Any], place: str, batch: Sequence[Episode], audience: Audience,
              now: datetime, report: Report) -> list[Memory | tuple[Update, tuple[str, ...] | None]]:
        """Each valid action: a new memory, or an update with its people; refusals are counted."""
        ids = frozenset(e.id for e in batch if e.id is not None)
        by_id = {e.id: e for e in batch}
        # a name two speakers go by maps to neither (the prompt shows their ids: the model can say which)
        names = {e.actor_name.strip().lower(): e.actor for e in batch if e.actor_name and e.actor != SELF}
        for key in shared_names(batch):
            names = {n: a for n, a in names.items() if shared_key(n) != key}
        plan: list[Memory | tuple[Update, tuple[str, ...] | None]] = []
        for item in raw:
            try:
                action = check_action(item, ids, self.tz)
                if isinstance(action, Add):
                    plan.append(self._added(action, place, by_id, names, audience, now, report))
                elif isinstance(action, Update):
                    plan.append((action, None if action.about is None else _people(action.about, names)))
            except Refused as r:  # the log says which kind of refusal and which lines, never the
                report.refused[r.reason] += 1  # model's text (it may repeat what users said)
                log.info("consolidation of %s refused an action (%s) on e%s-e%s", place, r.reason,
                         min(ids, default="?"), max(ids, default="?"))
            except Exception as e:  # no check foresaw it: refused alone (not the batch, not the run)
                report.refused[UNFORESEEN] += 1
                log.error("consolidation of %s refused an action no check foresaw on e%s-e%s: %s at %s",
                          place, min(ids, default="?"), max(ids, default="?"), type(e).__name__, _where(e))
        return plan

    def _added(self, a: Add, place: str, by_id: dict[int | None, Episode], names: dict[str, str],
               audience: Audience, now: datetime, report: Report) -> Memory:
        about = _people(a.about, names)
        sources = [by_id[i] for i in a.sources]
        own = all(e.actor == SELF and e.kind != "message_out" for e in sources)
        decision = learned_scope(a.scope_hint, place, about_people=any(p != SELF for p in about),
                                 owner_private=audience.owner_private,
                                 public_place=self.settings.is_public(place), own_thoughts=own)
        scope = decision.scope
        if decision.widened:
            report.refused[WIDER_SCOPE] += 1
            log.info("consolidation of %s: a wider scope refused, kept %s", place, scope)
        if scope == OWNER and not self.settings.owner_known:  # the narrowest scope its lines allow
            scope = place_scope(place)
            log.info("consolidation of %s: no owner is configured, so a memory scoped owner (%s) would show "
                     "nowhere; kept in %s, where its lines were said", place,
                     "the bot's own thoughts" if own else "asked for owner", scope)
        when = aware(a.when) if a.when else min(aware(e.time) for e in sources)
        return Memory(text=a.text, scope=scope, kind=a.kind, subjects=about, sources=a.sources,
                      importance=a.importance, created_at=now, valid_from=when)

    async def _resolve(self, plan: list[Memory | tuple[Update, tuple[str, ...] | None]], audience: Audience,
                       place: str, now: datetime, report: Report) -> list[tuple[Memory, int | None]]:
        """New memories as they are; updates only of active memories this place may see and write
        (one per memory), as a new version keeping the old one's scope and sources."""
        wanted = [item[0].memory_id for item in plan if isinstance(item, tuple)]
        found = await self.engram.store.get_memories(wanted) if wanted else {}
        vis, done = visibility(audience), set()
        out: list[tuple[Memory, int | None]] = []
        for item in plan:
            if isinstance(item, Memory):
                if item.scope in (PUBLIC, SELF_SCOPE):  # "about no one" in a public place: checked
                    named = await self.engram.people.mentioned_in(place, item.text)
                    if named:
                        report.refused[WIDER_SCOPE] += 1
                        log.info("consolidation of %s: a memory naming someone seen there kept in it", place)
                        item = replace(item, scope=place_scope(place), subjects=(*item.subjects, *named))
                out.append((item, None))
                continue
            update, about = item
            old = found.get(update.memory_id)
            if old is None or old.status != "active" or update.memory_id in done:
                report.refused[INVENTED_ID] += 1
                continue
            subjects = old.subjects if about is None else about
            if not vis.sees_memory(old.scope) or not may_write(
                    old.scope, place, about_people=any(p != SELF for p in subjects),
                    owner_private=audience.owner_private, public_place=self.settings.is_public(place)):
                report.refused[UNSEEN_MEMORY] += 1
                continue
            # "about no one" is checked, not trusted, for an update too: a public (or self) memory
            # naming someone seen here would carry them into every chat; it stays as it was
            shared = old.scope in (PUBLIC, SELF_SCOPE)
            if shared and await self.engram.people.mentioned_in(place, update.text):
                report.refused[WIDER_SCOPE] += 1
                log.info("consolidation of %s: an update naming someone seen there refused for %s m%s",
                         place, old.scope, update.memory_id)
                continue
            done.add(update.memory_id)
            out.append((next_version(old, now, text=update.text, subjects=subjects,
                                     sources=tuple(dict.fromkeys((*old.sources, *update.sources)))),
                        update.memory_id))
        return out


def _people(about: Sequence[str], names: dict[str, str]) -> tuple[str, ...]:
    """Person ids: a name the batch's speakers go by becomes their id (a speaker named "You" too: a
    memory about a person never passes for one about the bot); ``self``, ``bot``, ``you``: the bot."""
    out = []
    for a in about:
        low = a.strip().lower()
        out.append(names.get(low) or (SELF if low in ("self", "bot", "you") else a.strip()))
    return tuple(dict.fromkeys(out))


async def consolidate(engram: Kernel, chat: ChatModel, settings: ConsolidationSettings | None = None,
                      places: Sequence[str] | None = None, *, force: bool = False, **kw: Any) -> Report:
    """Run consolidation once (see ``Consolidator``)."""
    return await Consolidator(engram, chat, settings, **kw).run(places, force=force)


def _where(e: BaseException) -> str:
    """Where ``e`` was raised (file and line), for a defect's log line without the exception's message,
    which may hold the model's text."""
    frames = traceback.extract_tb(e.__traceback__)
    return f"{Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else "?"
