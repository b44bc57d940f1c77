"""Engram: the core's one entry point — record, remember, recall, update, forget.

``await Engram.open(path)`` gives a running memory: a ``Kernel`` (``kernel.py``: the store, the
indexes over it, the recorder, the indexer, the clock, the people, and the memory writes they share)
with the verbs its users (the plugin, the dashboard, the scheduler, the CLI) call. Recording never
waits for an embedding; recall uses what is embedded so far. What goes beyond the kernel is a
capability that takes the kernel (``metabolism/``, ``self/``, ``consolidation/``); this facade
composes them (forgetting, fading, merging) and is imported by none of them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from .backups import backups_behind, erase_in_backups
from .chat import ChatModel
from .embedders import Embedder, LocalE5
from .errors import InvalidInputError
from .heap import release_free_heap
from .kernel import Kernel
from .metabolism.fading import FadeReport, fade
from .metabolism.forgetting import (
    Forgetting,
    episodes_plan,
    execute,
    finish_pending,
    memories_plan,
    person_plan,
    place_plan,
)
from .metabolism.merging import MergeReport, MergeSettings, merge_duplicates
from .metabolism.own_forget import OwnForget, own_plan
from .model import (
    MAX_ID,
    MEMORY_KINDS,
    PERSON_CHARS,
    PLACE_CHARS,
    STORED_NAME_CHARS,
    Audience,
    Episode,
    Memory,
)
from .recall import RecallSettings
from .recall.ranker import LinearRanker, Ranker
from .recording.journal import KeptJournal, record_kept
from .recording.recorder import REDACTED
from .scopes import Visibility, parse_scope, visibility
from .self.self_image_file import finish_self_image
from .store import JobRuns, Store
from .store.opening import is_database_url, open_store
from .strength import MetabolismSettings
from .text.redaction import Redactor
from .text.words import MAX_TEXT
from .validate import audience_arg, clean, ids_arg, place_arg, text_arg

log = logging.getLogger("engram")


class Engram(Kernel):
    """A bot's memory: one store, one embedder, one ranker."""

    def __init__(self, store: Store, embedder: Embedder, ranker: Ranker, settings: RecallSettings,
                 query_timeout: float, metabolism: MetabolismSettings | None = None,
                 clock: Callable[[], datetime] | None = None, redactor: Redactor | None = None):
        super().__init__(store, embedder, ranker, settings, query_timeout, metabolism, clock, redactor)
        # called after each hard forget (rewrite a day's diary, regenerate the self-image, drop caches)
        self.after_forget: list[Callable[[Forgetting], Awaitable[None]]] = []
        self._path: str | Path | None = None
        self._folder: str | Path | None = None
        self._browser: Store | None = None

    @classmethod
    async def open(cls, path: str | Path, embedder: Embedder | None = None, *,
                   ranker: Ranker | None = None, settings: RecallSettings | None = None,
                   background: bool = True, durable: bool = False, read_only: bool = False,
                   query_timeout: float = 10.0, metabolism: MetabolismSettings | None = None,
                   clock: Callable[[], datetime] | None = None, redactor: Redactor | None = None,
                   folder: str | Path | None = None) -> Engram:
        """Open the memory at ``path`` (created if missing): a SQLite file, or a PostgreSQL database
        by its ``postgresql://`` URL (``folder``: the data folder beside it, docs/postgres.md).
            ``background=False``: embed on demand.
        ``clock``: the current time (aware), the real one unless given. ``redactor``: the secrets taken
        out of what is recorded (``text/redaction.py``; the default patterns unless given).

        ``read_only``: an existing store that nothing can be written to (no background embedding;
        recall uses the vectors already stored).
        """
        store = await open_store(path, folder=folder, durable=durable, read_only=read_only)
        try:
            self = cls(store, embedder if embedder is not None else LocalE5(),
                       ranker or LinearRanker(), settings or RecallSettings(), query_timeout, metabolism,
                       clock, redactor)
            self._path = path if is_database_url(path) else Path(path)
            self._folder = folder
            # the keyword and vector pages are read on the store's reader thread, a page in one SQLite
            # step without the GIL, while the episode columns are read and filed on this one: the
            # loads overlap (``Indexes.load``)
            await asyncio.gather(self.indexes.load(store), self.indexer.start(background and not read_only))
            if not read_only:
                await finish_pending(self)  # a forget killed between its erase and its files
                if not is_database_url(path) and backups_behind(Path(path)):  # or before its backups
                    log.warning("Engram: a forget was stopped before it reached every backup; the erase "
                                "list is applied to them now")
                    await erase_in_backups(Path(path), (), ())
                await finish_self_image(self)  # a self-image killed between its memory and its file
        except BaseException:
            await store.close()
            raise
        release_free_heap()  # what loading the indexes freed (``heap``)
        return self

    async def close(self) -> None:
        """Write what is queued, stop the indexer, close the store (and the browsing one)."""
        if self._browser is not None and self._browser is not self.store:
            await self._browser.close()
        await super().close()

    # ---- recording -----------------------------------------------------------------------
    async def record(self, episode: Episode) -> int:
        """Append an episode; returns its id once it is durably committed."""
        return await self.recorder.record(episode)

    async def record_many(self, episodes: Iterable[Episode]) -> list[int]:
        """Append many episodes in one transaction; returns their ids in order."""
        return await self.recorder.record_many(episodes)

    async def flush(self) -> None:
        """Wait until every queued episode is committed."""
        await self.recorder.flush()

    async def record_kept(self, journal: KeptJournal) -> int:
        """Write the messages kept in ``journal`` while the store could not take them (``journal``),
        in order and once, then clear it; returns how many were written."""
        return await record_kept(self.recorder, journal)

    # ---- forgetting ----------------------------------------------------------------------
    async def forget(self, ids: Sequence[int], *, with_sources: bool = False, dry_run: bool = False
                     ) -> Forgetting:
        """Hard-forget memories with every version; ``with_sources``: also the episodes they came from
        and every memory derived from those. Unknown ids: ``UnknownIdError``, nothing touched."""
        plan = await memories_plan(self, ids_arg(ids, "memory ids"), with_sources)
        return plan if dry_run else await execute(self, plan, self.after_forget)

    async def forget_person(self, person: str, *, dry_run: bool = False) -> Forgetting:
        """Hard-forget everything said by or about ``person`` (a person id), in every place, and their
        private chat whole (``metabolism/forgetting.person_plan`` says what "about" takes)."""
        plan = await person_plan(self, text_arg(person, "the person to forget", PERSON_CHARS, empty=True))
        return plan if dry_run else await execute(self, plan, self.after_forget)

    async def forget_place(self, place: str, *, dry_run: bool = False) -> Forgetting:
        """Hard-forget every line of ``space`` and every memory kept for it."""
        plan = await place_plan(self, text_arg(place, "the place to forget", PLACE_CHARS, empty=True))
        return plan if dry_run else await execute(self, plan, self.after_forget)

    async def forget_episodes(self, ids: Sequence[int], *, dry_run: bool = False) -> Forgetting:
        """Hard-forget episodes (lines) and every memory derived from them (a diary of their day is
        rewritten by ``after_forget``). Unknown ids: ``UnknownIdError``, nothing touched."""
        plan = await episodes_plan(self, ids_arg(ids, "episode ids"))
        return plan if dry_run else await execute(self, plan, self.after_forget)

    async def latest_lines(self, person: str, place: str, n: int) -> list[int]:
        """The ids of the last ``n`` lines ``person`` said in ``place`` (not the bot's), newest first."""
        return await self.store.lines_of(person, place, n)

    async def forget_own(self, person: str, place: str, lines: Sequence[int], memories: Sequence[int], *,
                         dry_run: bool = False) -> OwnForget:
        """Hard-forget what ``person`` may erase of themselves in ``place`` among ``lines`` and
        ``memories`` (``own_forget``: their own lines there, the bot's answers to them, the memories
        of the place about them); the rest is left, as if not named."""
        own = await own_plan(self, person, place, lines, memories)
        if not dry_run and (own.plan.episodes or own.plan.memories):
            own.plan = await execute(self, own.plan, self.after_forget)
        return own

    # ---- metabolism ----------------------------------------------------------------------
    # ---- metabolism ----------------------------------------------------------------------
    async def merge_duplicates(self, chat: ChatModel, settings: MergeSettings | None = None) -> MergeReport:
        """Merge the memories of one scope the model says record the same thing (the weekly job)."""
        return await merge_duplicates(self, chat, settings)

    async def fade(self, now: datetime | None = None) -> FadeReport:
        """Archive the memories that faded below the threshold (the daily job)."""
        await self.toucher.flush()
        return await fade(self, now or self.clock())

    # ---- reading -------------------------------------------------------------------------
    async def list_memories(self, vis: Visibility | None = None, *, scope: str | None = None,
                            kind: str | None = None, people: Sequence[str] = (), named: str = "",
                            limit: int = 10, offset: int = 0) -> tuple[list[Memory], int]:
        """Active memories ``vis`` may see (of ``scope``, ``kind``, about any of ``people`` or, about no
        known person, naming ``named`` in their text), newest first: one page of them and how many
        there are in all."""
        if kind is not None and kind not in MEMORY_KINDS:
            raise InvalidInputError(f"unknown memory kind {kind!r}: use one of {', '.join(MEMORY_KINDS)}",
                                    code="arg_kind", kind=repr(kind), kinds=", ".join(MEMORY_KINDS))
        for n, what in ((limit, "limit"), (offset, "offset")):
            if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n <= MAX_ID:
                raise InvalidInputError(f"{what} must be a whole number, 0 or more", code="arg_count",
                                        what=what)
        if isinstance(people, str) or not isinstance(people, (list, tuple, set, frozenset)):
            raise InvalidInputError("people must be a list of person ids", code="arg_people")
        return await self.store.list_memories(
            vis, scope=None if scope is None else clean(parse_scope(scope)), kind=kind,
            people=[text_arg(p, "a person id", PERSON_CHARS) for p in people],
            named=text_arg(named, "a name", STORED_NAME_CHARS, empty=True), limit=limit, offset=offset)

    async def browser(self) -> Store:
        """The store opened once more, read-only, for browsing (the dashboard): its own connections,
        which cannot write, so a slow page never queues in front of the reads a reply needs."""
        if self._browser is None:
            if self.store.read_only or self._path is None:
                self._browser = self.store
            else:
                self._browser = await open_store(self._path, folder=self._folder, read_only=True)
        return self._browser

    def job_records(self) -> JobRuns:
        """Where the background jobs' runs are kept (the scheduler's ``JobRecords``): the store, seen
        as no more than its job-run records."""
        return self.store

    def ranking_store(self) -> Store:
        """Where the learned ranking keeps its state and recent recalls (``recall.ranking``: its reads
        and its writes through the one write door)."""
        return self.store

    async def stats(self) -> dict[str, Any]:
        counts: dict[str, Any] = dict(await self.store.counts())
        counts["embedder"] = self.embedder.name
        counts["indexed"] = self.index.findable() if self.index else 0  # not superseded versions
        counts["secrets_redacted"] = await self.store.cursor(REDACTED)
        return counts

    async def place_stats(self, audience: Audience) -> dict[str, Any]:
        """What one chat may count: the lines of its own place and the memories it may see."""
        audience = audience_arg(audience)
        _, seen = await self.store.list_memories(visibility(audience), limit=1)
        return {"episodes": await self.store.count_place_episodes(audience.place), "memories": seen,
                "embedder": self.embedder.name}

    async def counts(self) -> dict[str, int]:
        """How many episodes, memories (active, archived, superseded), spaces, people and vectors."""
        return await self.store.counts()

    # ---- people ----------------------------------------------------------------------------
    async def aliases(self, person: str) -> list[str]:
        """The display names a person was seen under, most recent first."""
        return await self.people.aliases(text_arg(person, "a person id", PERSON_CHARS))

    async def people_named(self, name: str) -> list[str]:
        """The people who have gone by ``name`` (case ignored)."""
        name = text_arg(name, "a name", STORED_NAME_CHARS, empty=True)
        return await self.people.named(name) if name else []

    async def people_named_in(self, place: str, name: str) -> list[str]:
        """Who went by ``name`` (case ignored) in ``place``, the latest first."""
        return await self.people.named_in(place_arg(place), text_arg(name, "a name", STORED_NAME_CHARS))

    async def people_mentioned_in(self, place: str, text: str) -> list[str]:
        """The people seen in ``place`` whose name there ``text`` holds."""
        return await self.people.mentioned_in(place_arg(place),
                                              text_arg(text, "the text", MAX_TEXT, empty=True))

    async def names_in_place(self, place: str, people: Sequence[str]) -> dict[str, str]:
        """The name each of ``people`` last went by in ``place`` (those who spoke there only)."""
        return await self.people.names_in_place(place_arg(place), _people(people))

    async def names(self, people: Iterable[str]) -> dict[str, str]:
        """The latest display name of each person that has one."""
        return await self.people.names(_people(people))

    # ---- vectors -------------------------------------------------------------------------
    async def embed_pending(self, progress: Callable[[int], None] | None = None) -> int:
        """Embed every item that has no vector yet; returns how many were embedded."""
        return await self.indexer.embed_pending(progress)

    async def use_embedder(self, embedder: Embedder) -> None:
        """Switch to ``embedder``, keeping each model's vectors; only its missing ones get embedded."""
        await self.indexer.use_embedder(embedder)

    async def reindex(self, embedder: Embedder, progress: Callable[[int], None] | None = None) -> int:
        """Switch to ``embedder`` and rebuild every vector for it; returns how many were embedded."""
        return await self.indexer.reindex(embedder, progress)


def _people(people: object) -> list[str]:
    """A list of person ids as a public function takes it (``validate.person_arg`` each)."""
    if isinstance(people, (str, bytes)) or not isinstance(people, Iterable):
        raise InvalidInputError("people must be a list of person ids", code="arg_people")
    return [text_arg(p, "a person id", PERSON_CHARS) for p in people]
