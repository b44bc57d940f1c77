"""The plugin's one service: the memory file, what is recorded, injection, and what commands share.

Recording never delays a message: the hooks decide what is worth keeping and hand it to the
recording queue (``hooks/record_queue.py``), which writes it in order off the reply's path. ``close()``
drains the queue, waits for every write and closes the file, so a reload loses and duplicates nothing.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from datetime import datetime, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..memory import Audience, Embedder, Engram, EngramError, Episode, Forgetting, Hit, RecallSettings
from ..memory.compose import Composer, recall_query
from ..memory.errors import UnknownIdError
from ..memory.model import now_utc
from ..memory.outage import Outage
from ..memory.recall.ranking import LearnedRanking
from ..memory.recording.journal import kept_path
from ..memory.render import hit_names
from ..memory.self.selfhood import Selfhood
from ..memory.store.opening import shown
from .abilities import asks_abilities
from .commands.confirmations import Confirmations
from .config import WEBCHAT, Settings, sole_platform
from .events import (
    actor_of,
    audience_of,
    event_time,
    incoming_episodes,
    is_command,
    parse_message,
    place_audience,
    place_of,
    reply_episode,
)
from .hooks.echo import own_words
from .hooks.inject import Injection, apply
from .hooks.query import people_turns, said
from .hooks.record_queue import RecordingQueue
from .jobs.days_lock import DaysLock
from .place_lists import read_in_both
from .providers import Providers

if TYPE_CHECKING:
    from .jobs.background import Jobs
    from .jobs.self_jobs import SelfJobs

log = logging.getLogger("engram.plugin")

DB_NAME = "engram.db"
INJECTED_EXTRA = "engram_injected"  # event extra: the keys of the memories injected for this reply
SEEN_EXTRA = "engram_seen"  # event extra: the people's words the model reads in this request
GIVEN_EXTRA = "engram_given"  # event extra: the texts of the notes the model was handed (block, tools)
RECALLS_EXTRA = "engram_recalls"  # event extra: [recall id, {key: text}] of each recall the model was handed
INJECT_TIMEOUT = 8.0  # seconds the whole recall may take before the reply goes on without memories
QUERY_TIMEOUT = 4.0  # seconds for the query embedding; recall then runs on keywords
FLUSH_TIMEOUT = 30.0  # seconds flush() and close() wait for the writes before they give up (and log)


class EngramService:
    """Everything the hooks, commands and tools of the plugin share."""

    def __init__(self, settings: Settings, data_dir: Path, providers: Providers, *,
                 embedder: Embedder | None = None, tz: tzinfo | None = None, abilities: Any = None):
        self.settings = settings
        self.data_dir = Path(data_dir)
        self.providers = providers
        self.tz = tz
        self.engram: Engram | None = None
        self.last_injection: dict[str, Injection] = {}
        self.last_forget: datetime | None = None  # a forget drops every remembered injection (/mem why)
        self._fixed_embedder = embedder  # tests pin one; otherwise resolved from AstrBot's providers
        self._lock = asyncio.Lock()
        self._closing = False
        self._inject_outage = Outage(log, "Engram: no memories for this reply, it goes on without them: %s",
                                     "Engram: memories are injected again")
        self._warned_platforms: set[tuple[str, ...]] = set()
        self.unmatched_places: list[str] = []  # config entries that name no place (``place_lists``)
        self._places_read: tuple[Settings, dict[str, str]] | None = None
        self.selfhood = Selfhood(self.data_dir, settings, abilities, tz=self.tz)
        self.composer = Composer(self.selfhood, tz=self.tz)  # the block: one path with recall explained
        self._opening: asyncio.Task[Engram] | None = None
        self._abilities_shown: dict[str, str] = {}  # place -> the abilities line last injected there
        self.dashboard: Any = None  # the running dashboard server, if any (plugin/dashboard.py)
        self.jobs: Jobs | None = None  # the background jobs, once attached (attach_jobs)
        self.self_jobs: SelfJobs | None = None  # diary, self-image: when switched on (attach_self_jobs)
        self.episode_listeners: list[Callable[[str], object]] = []  # told each recorded place
        self.redactor = settings.redactor()  # secrets out before the journal and the store see a line
        self.recording = RecordingQueue(self.memory, self.episode_listeners, kept_path(self.path),
                                        redact=self.redactor.episode)
        self.confirmations = Confirmations()  # codes of wide forgets waiting for /mem confirm
        self.rewrite: Callable[[Forgetting], Awaitable[None]] | None = None  # diary / self-image rebuild
        self.days_lock = DaysLock()  # the diary and self-image jobs and forgets take turns
        self.ranking: LearnedRanking | None = None  # the ranking that learns (``ranking_learn``), once open

    @property
    def path(self) -> Path:
        return self.data_dir / DB_NAME

    @property
    def location(self) -> str | Path:
        """Where the memory is: the ``database_url`` setting's PostgreSQL database, else the file."""
        return self.settings.database_url or self.path

    def read_places(self) -> list[str]:
        """The place lists and owner ids read in AstrBot's words too, once the bot's platforms are
        known and again when they change (``place_lists``); the entries that match nothing are logged
        (an error: a privacy setting that does nothing) and returned."""
        types = self.providers.platform_types()
        if self._places_read is not None and self._places_read == (self.settings, types):
            return self.unmatched_places
        self.settings, self.unmatched_places = read_in_both(self.settings, types)
        self._places_read = (self.settings, types)
        if self.unmatched_places:
            log.error("Engram config: %s match no place of this bot (its platforms: %s); write a place as "
                      "/sid shows it (qq:GroupMessage:123) or as Engram names it (aiocqhttp:group:123)",
                      "; ".join(map(repr, self.unmatched_places)),
                      ", ".join(f"{i} ({t})" for i, t in types.items()) or "none loaded yet")
        return self.unmatched_places

    def audience(self, event: Any) -> Audience:
        """Who will read a reply to ``event`` (the one place commands, tools and injection ask)."""
        self.read_places()
        platforms = self.providers.platforms()
        bare = self.settings.bare_owner_ids()
        if bare and sole_platform(platforms) is None and platforms not in self._warned_platforms:
            self._warned_platforms.add(platforms)
            log.error("Engram config key 'owner_ids': %s ignored: an id without its platform counts only "
                      "while the bot has one chat platform, and it has %s; write <platform>:<id>, e.g. %s",
                      ", ".join(map(repr, bare)), ", ".join(platforms) or "none loaded",
                      f"{next((p for p in platforms if p != WEBCHAT), 'aiocqhttp')}:{bare[0]}")
        return audience_of(event, self.settings, platforms)

    # ---- the background jobs (the one place the service learns of them) ------------------------
    def attach_jobs(self, jobs: Jobs) -> None:
        """The jobs that run for this service: each recorded place counts toward consolidation, and
        ``/mem consolidate`` and ``/mem stats`` reach them."""
        self.jobs = jobs
        self.episode_listeners.append(jobs.trigger.saw)

    def attach_self_jobs(self, self_jobs: SelfJobs, *, diary: bool) -> None:
        """The diary and self-image jobs: a hard forget has them rewrite what drew on what went (always,
        so diaries written before stay true to forgets); ``/mem diary`` reaches them when ``diary`` is on."""
        self.rewrite = self_jobs.rewrite_after_forget
        if diary:
            self.self_jobs = self_jobs

    # ---- the memory ----------------------------------------------------------------------
    async def memory(self) -> Engram:
        """The open memory (opened on first use, when AstrBot's providers exist)."""
        async with self._lock:
            if self._closing and not self.recording.running:
                raise EngramError("Engram is shut down", code="shut_down")
            embedder = self._fixed_embedder or self.providers.embedder()
            if self.engram is None:
                self.data_dir.mkdir(parents=True, exist_ok=True)
                if self._opening is None:
                    recall = RecallSettings(time_windows=self.settings.time_enabled, tz=self.tz,
                                            boundary_hour=self.settings.diary_boundary_hour,
                                            strength_days=float(self.settings.strength_half_life_days))
                    self._opening = asyncio.create_task(Engram.open(self.location, embedder, settings=recall,
                                                                    query_timeout=QUERY_TIMEOUT,
                                                                    redactor=self.redactor,
                                                                    folder=self.data_dir))
                # shielded: a caller cancelled mid-open (a reply's time limit) leaves the open to finish
                # and be kept, never a half-open file whose connection thread outlives the plugin
                try:
                    self.engram = await asyncio.shield(self._opening)
                except asyncio.CancelledError:
                    raise  # the open goes on; the next caller (or close()) takes it
                except BaseException:
                    self._opening = None  # a failed open is tried again next time
                    raise
                self._opening = None
                assert self.engram is not None
                self.engram.after_forget.append(self._after_forget)
                await self._load_ranking(self.engram)
                self.recording.opened()  # messages kept while the store could not take them
                log.debug("Engram: memory at %s opened, embeddings from %s", shown(self.location),
                          embedder.name)
            elif embedder.name != self.engram.embedder.name:
                log.info("Engram: embeddings now from %s (was %s)", embedder.name, self.engram.embedder.name)
                await self.engram.use_embedder(embedder)
            return self.engram

    async def _load_ranking(self, mem: Engram) -> None:
        """The ranking this bot learned, served from the start when it was being served (a kept state
        that cannot be read is logged and learning starts again from the shipped weights)."""
        if not self.settings.ranking_learn:
            return
        ranking = LearnedRanking()
        try:
            await ranking.load(mem.ranking_store())
        except EngramError as e:
            log.error("Engram: the learned ranking could not be read (%s); learning starts again from the "
                      "shipped weights", e)
            ranking = LearnedRanking()
        self.ranking = ranking
        self.serve_ranking(mem)

    def serve_ranking(self, mem: Engram) -> None:
        """Recall ranks with the learned weights while they are served, else with the shipped ones."""
        if self.ranking is not None:
            mem.ranker = self.ranking.ranker()

    async def announce(self) -> str:
        """Log (and return) the start-up line: where the store is, what it holds, which models serve it."""
        try:
            return await self._announce()
        except Exception:  # the line is a courtesy; never let it stop the plugin
            log.exception("Engram: could not describe the store at %s", self.path)
            return ""

    async def _announce(self) -> str:
        self.read_places()  # the entries that match nothing, named at start-up
        if self.settings.database_url or self.path.exists():
            mem = await self.memory()
            s = await mem.stats()
            held = f"{s.get('episodes', 0)} episodes, {s.get('memories', 0)} memories"
            embedder = mem.embedder.name
        else:
            held = "not created yet (it is created at the first message)"
            embedder = (self._fixed_embedder or self.providers.embedder()).name
        chat = await self.providers.resolve_chat() or (
            f"{self.providers.chat_provider_id!r} not found" if self.providers.chat_provider_id
            else "none configured")
        line = f"Engram: store {shown(self.location)}: {held}; embeddings: {embedder}; chat model: {chat}"
        log.info("%s", line)
        return line

    async def recall(self, audience: Audience, query: str, k: int, seen: Sequence[str] = (), *,
                     include_archived: bool = False) -> list[Hit]:
        """The ``k`` best hits ``audience`` may see that are worth a note (``hooks.worth``), leaving out
        lines the model is already shown (``include_archived``: a deliberate search, which brings faded
        memories back)."""
        return (await self.recall_held(audience, query, k, seen, include_archived=include_archived))[0]

    async def recall_held(self, audience: Audience, query: str, k: int, seen: Sequence[str] = (), *,
                          include_archived: bool = False) -> tuple[list[Hit], list[Hit]]:
        """``recall``'s hits, and up to ``k`` more worth a note that came next (held back: what the
        learned ranking compares the injected ones with; no extra work, they were recalled anyway)."""
        return await self.composer.recall_worth(await self.memory(), audience, query, k, seen,
                                                include_archived=include_archived)

    def touch(self, hits: Sequence[Hit | str]) -> None:
        """Strengthen the memories among ``hits`` (injected, returned or shown); written later, together."""
        if self.engram is not None:
            self.engram.touch(h if isinstance(h, str) else h.key for h in hits)

    async def _after_forget(self, plan: Forgetting) -> None:
        """After a hard forget: no cached injection may still hold what went; a day's diary and the
        self-image that drew on it are rebuilt from what is left (``rewrite``)."""
        self.last_injection.clear()
        self.last_forget = now_utc()
        if self.ranking is not None:
            self.ranking.forget_replies()  # a reply waiting for the detector may quote what went
        if self.rewrite is not None:
            await self.rewrite(plan)

    async def names(self, place: str, hits: Sequence[Hit]) -> dict[str, str]:
        """The name each person the hits are about (or said by) went by in ``space``; a person this
        place never saw has no name here (notes then show the id's plain form)."""
        return await hit_names(await self.memory(), place, hits)

    def identity(self) -> str:
        """The bot's core identity (``identity/self.md`` in the data folder), or ""."""
        return self.selfhood.identity()

    # ---- recording -----------------------------------------------------------------------
    def record_message(self, event: Any) -> None:
        """Queue an incoming message for recording; returns at once."""
        self.read_places()
        if self._closing or is_command(event) or self.settings.is_blacklisted(place_of(event)):
            return
        parsed = parse_message(event)
        if not parsed.text and not parsed.images:
            return  # stickers, empty lines: nothing worth keeping
        if parsed.images:
            umo = str(getattr(event, "unified_msg_origin", "") or "") or None
            self.recording.put(asyncio.create_task(self._captioned(event, parsed, umo)))
        else:
            self.recording.put(self._in_zone(incoming_episodes(event, parsed)))

    def record_reply(self, event: Any, text: str) -> None:
        """Queue what the bot said in the event's place (not the notes it was handed or only read
        back: see ``echo``), with the keys of the memories injected for it."""
        if self._closing or self.settings.is_blacklisted(place_of(event)):
            return
        self.replied(event, text)
        own = own_words(text, event.get_extra(GIVEN_EXTRA) or [])
        if own != (text or "").strip():
            log.debug("Engram: a reply's copied notes were left out of its record (%d -> %d characters)",
                      len(text or ""), len(own))
        ep = reply_episode(event, own, {"injected": list(event.get_extra(INJECTED_EXTRA) or [])})
        if ep is not None:
            self.recording.put(self._in_zone([ep]))

    async def _captioned(self, event: Any, parsed: Any, umo: str | None) -> list[Episode]:
        captions = {}
        for ref in parsed.images:
            caption = await self.providers.caption(ref, umo)
            if caption:
                captions[ref] = caption
        return self._in_zone(incoming_episodes(event, parsed, captions))

    def _in_zone(self, episodes: list[Episode]) -> list[Episode]:
        """The episodes' times in the bot's zone (the same instants): their month and year, which a
        question naming a month is matched against, are the bot's, not UTC's."""
        return [replace(e, time=e.time.astimezone(self.tz)) if self.tz and e.time else e for e in episodes]

    async def flush(self, timeout: float = FLUSH_TIMEOUT) -> None:
        """Wait until everything queued so far is committed, for at most ``timeout`` seconds."""
        deadline = asyncio.get_running_loop().time() + timeout
        if await self.recording.flush(timeout, deadline) and self.engram is not None:
            await self._bounded(self.engram.flush(), deadline, "flush")

    async def close(self, timeout: float = FLUSH_TIMEOUT) -> None:
        """Record everything queued, wait for every write, close the file; at most ``timeout`` seconds
        (then the log says what was not written)."""
        self._closing = True
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        await self.recording.stop(timeout, deadline)
        if self.engram is None and self._opening is not None:  # an open whose caller was cancelled
            left_s = max(0.1, deadline - loop.time())
            done, _ = await asyncio.wait({self._opening}, timeout=left_s)
            opening, self._opening = self._opening, None
            if not done:
                opening.cancel()
                log.error("Engram: closing while the memory file is still opening after %.0f s", timeout)
            elif not opening.cancelled() and opening.exception() is None:
                self.engram = opening.result()
        if self.engram is not None:
            engram, self.engram = self.engram, None
            await self._bounded(engram.close(), deadline + 5, "close")

    async def _bounded(self, work: Any, deadline: float, what: str) -> None:
        left = max(0.1, deadline - asyncio.get_running_loop().time())
        try:
            await asyncio.wait_for(work, left)
        except asyncio.TimeoutError:
            log.error("Engram: the memory file did not %s in time; episodes still queued in it may be lost",
                      what)

    # ---- injection -----------------------------------------------------------------------
    async def inject(self, event: Any, req: Any) -> Injection | None:
        """Add the memory block to ``req``; on any failure the reply goes on without it."""
        try:
            inj = await asyncio.wait_for(self._inject(event, req), INJECT_TIMEOUT)
        except Exception as e:  # a hook must never break the reply
            self._inject_outage.failed(e)
            return None
        self._inject_outage.recovered()
        return inj

    async def _inject(self, event: Any, req: Any) -> Injection | None:
        audience = self.audience(event)
        if self.settings.is_blacklisted(audience.place):
            return None  # an opted-out place gets nothing of the memory, not even the time line
        contexts = getattr(req, "contexts", None) or []
        prompt = said({"role": "user", "content": getattr(req, "prompt", "") or ""})
        query = recall_query(prompt, people_turns(contexts))
        # what the model already reads (this message, the history) is not injected again, nor
        # returned by its memory_recall in this turn (``SEEN_EXTRA``)
        seen = [prompt, *people_turns(contexts, len(contexts), all_turns=True)]
        self.set_extra(event, SEEN_EXTRA, seen)
        person = (actor_of(event), str(event.get_sender_name() or ""))
        inj = await self.compose(audience, query, seen, person=person, before=event_time(event))
        apply(req, inj.text, self.settings.inject_mode)
        self.last_injection[audience.place] = inj
        event.set_extra(INJECTED_EXTRA, inj.keys)
        self.handed(event, [h.text for h in inj.injected])
        self.touch(inj.keys)
        went = {h.key for h in inj.injected}
        self.recorded(event, audience.place, inj.injected,
                      [*(h for h in inj.hits if h.key not in went), *inj.held][: self.settings.recall_k],
                      injection=True)
        return inj

    async def compose(self, audience: Audience, query: str, seen: Sequence[str], *,
                      person: tuple[str, str] = ("", ""), before: datetime | None = None,
                      injecting: bool = True) -> Injection:
        """The block for ``query`` in the audience's place: recall, the notes worth it, the block within
        the budget, through the ``Composer`` recall explained uses too (``injecting`` False: nothing is
        remembered of it, and the learned ranking does not explore)."""
        now = now_utc()
        k = self.settings.recall_k
        hits, held = await self.recall_held(audience, query, k, seen=seen)
        if (injecting and self.ranking is not None and held and len(hits) == k
                and self.ranking.explore(audience.place)):
            # now and then the last note is the first held back: one never injected never earns credit
            hits, held = [*hits[:-1], held[0]], [hits[-1], *held[1:]]
        text, taken = await self.render(audience.place, hits, now, before=before, audience=audience,
                                        person=person, query=query, injecting=injecting)
        return Injection(audience.place, query, now, hits, [hits[i] for i in taken], text, held)

    async def explain(self, place: str, query: str, owner: bool | None = None, person: str = "") -> Injection:
        """What the next message saying ``query`` in ``place`` would have injected (by ``person``, an
        id, when given; a message that starts a conversation: no earlier turns): for recall explained,
        through the same ``Composer`` as the injection. ``owner`` None: whether the place is the
        owner's private chat, as the plugin decides it."""
        audience = place_audience(place, self.settings, self.providers.platforms())
        if self.settings.is_blacklisted(place):  # an opted-out place is given nothing: shown as nothing
            return Injection(place, query, now_utc())
        if owner is not None:
            audience = replace(audience, owner_private=owner)
        if person:
            audience = replace(audience, people=(person,))
        shown = await self.composer.explain(await self.memory(), audience, query,
                                            abilities=self._abilities_due(place, query, remember=False))
        return Injection(place, query, now_utc(), shown.hits, shown.injected, shown.text, shown.held)

    def recorded(self, event: Any, place: str, shown: Sequence[Hit], held: Sequence[Hit], *,
                 injection: bool) -> None:
        """Record what the model was handed (a block, or a memory_recall answer) for the learned
        ranking: features only, the rest waits for the reply and the job (``memory.recall.ranking``)."""
        if self.ranking is None or not shown:
            return
        rid = self.ranking.record(place, shown, held, injection=injection)
        handed = {h.key: h.text for h in shown}
        self.set_extra(event, RECALLS_EXTRA, [*(event.get_extra(RECALLS_EXTRA) or []), [rid, handed]])

    def replied(self, event: Any, text: str) -> None:
        """The reply to what was handed: kept for the job's detector (which notes it used)."""
        if self.ranking is None or not text:
            return
        try:
            recalls = list(event.get_extra(RECALLS_EXTRA) or [])
        except Exception:
            return
        for rid, handed in recalls:
            try:
                self.ranking.replied(rid, text, handed)
            except UnknownIdError:
                pass  # pushed out of its place's log (a busy place, a long tool loop)

    def forget_injections(self, key: str) -> None:
        """Drop the remembered injections (``/mem why``) that hold ``key``: it was erased."""
        for place, inj in list(self.last_injection.items()):
            if key in {h.key for h in inj.hits}:
                del self.last_injection[place]

    @staticmethod
    def handed(event: Any, texts: Sequence[str]) -> None:
        """Note on the event the texts of notes the model was handed (so its reply is not taken for them)."""
        try:
            EngramService.set_extra(event, GIVEN_EXTRA, [*(event.get_extra(GIVEN_EXTRA) or []), *texts])
        except Exception:  # an event without get_extra: the reply is recorded as it comes
            log.debug("Engram: this event keeps no extras")

    @staticmethod
    def set_extra(event: Any, key: str, value: Any) -> None:
        try:
            event.set_extra(key, value)
        except Exception:  # an event without extras: what it would carry is not needed to reply
            log.debug("Engram: this event keeps no extras")

    @staticmethod
    def current_turn(event: Any) -> list[str]:
        """What the model reads in the request being answered: the message and its conversation
        (noted at injection), or at least the message itself."""
        try:
            seen = list(event.get_extra(SEEN_EXTRA) or [])
        except Exception:
            seen = []
        text = str(getattr(event, "message_str", "") or "")
        return [*seen, text] if text else seen

    async def render(self, place: str, hits: Sequence[Hit], now: datetime, before: datetime | None = None,
                     audience: Audience | None = None,
                     person: tuple[str, str] = ("", ""), query: str | None = None,
                     injecting: bool = True) -> tuple[str, list[int]]:
        """The memory block for ``hits`` in ``space`` and the indexes of the hits that fit
        (``memory.compose``).

        ``person``: (id, name) of who wrote the message being answered, for the sense of time;
        ``query``: what the people said (the abilities line goes in when it is asked about), None
        when the block is only shown (``/mem why``), not injected; ``injecting`` False: a block shown
        (recall explained), which leaves no trace (the abilities line is not marked as given).
        """
        return await self.composer.render(await self.memory(), place, hits, now, before=before,
                                          audience=audience, person=person,
                                          abilities=self._abilities_due(place, query, injecting))

    def _abilities_due(self, place: str, query: str | None, remember: bool = True) -> bool:
        """Whether the abilities line goes into this block: the first time in a place, when what the
        bot can do changed since it last went in there, or when the message asks about it. Every
        other time it is the same ~100 tokens the notes need (issue 27: it pushed evidence out);
        the model has seen it in this conversation, and the tools themselves are in the request."""
        text = self.selfhood.abilities_text()
        if not text:
            return False
        if query is None:
            return True
        if self._abilities_shown.get(place) != text or asks_abilities(query, text):
            if remember:
                self._abilities_shown[place] = text
            return True
        return False

