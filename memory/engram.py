"""Engram: the core's one entry point — record, remember, recall, update, forget.

``await Engram.open(path)`` gives a running memory: the store, the in-memory indexes over it (kept
current by the store's after-commit listener), a ``Recorder`` (group commit: ids only after COMMIT)
and an ``Indexer`` (the embedder; new items embedded in batches in the background). Recording never
waits for an embedding; recall uses what is embedded so far. Capabilities beyond these are modules
that take an ``Engram``, not methods added here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from .chat import ChatModel
from .clock import watched_clock
from .embedders import Embedder, LocalE5
from .engram_names import NameLookups
from .errors import ErasedMeanwhile, InvalidInputError, MovedMeanwhile, UnknownIdError
from .forgetting import (
    Forgetting,
    episodes_plan,
    execute,
    finish_pending,
    memories_plan,
    person_plan,
    place_plan,
)
from .heap import release_free_heap
from .index import Indexes
from .index.vectors import VectorIndex
from .indexing import Indexer
from .kept import KeptJournal, record_kept
from .merging import MergeReport, MergeSettings, merge_duplicates
from .metabolism import FadeReport, MetabolismSettings, Toucher, fade
from .model import Audience, Episode, Hit, Memory, next_version, possible_ids
from .recall import RecallSettings, recall
from .recall.candidates import _memory_shape
from .recall.ranker import LinearRanker, Ranker
from .recording import Recorder
from .scopes import Visibility, parse_scope, visibility
from .self_image_file import finish_self_image
from .store import JobRuns, Store
from .store.sqlite import open_store
from .text import MAX_TEXT, _stem, word_set
from .validate import checked_memory

MAX_K = 200


class Engram(NameLookups):
    """A bot's memory: one store, one embedder, one ranker."""

    def __init__(self, store: Store, embedder: Embedder, ranker: Ranker, settings: RecallSettings,
                 query_timeout: float, metabolism: MetabolismSettings | None = None,
                 clock: Callable[[], datetime] | None = None):
        self.store = store
        self.metabolism = metabolism or MetabolismSettings()
        # the time as this memory reads it (new versions, merges, fading, recall's recency, touches)
        self.clock: Callable[[], datetime] = clock or watched_clock()  # logs a jump when it reads one
        self.toucher = Toucher(self, lambda: self.clock().timestamp())
        # called after each hard forget (rewrite a day's diary, regenerate the self-image, drop caches)
        self.after_forget: list[Callable[[Forgetting], Awaitable[None]]] = []
        self.ranker = ranker
        self.settings = settings
        self.indexes = Indexes()
        store.listen(self.indexes.after_commit)
        self.indexer = Indexer(store, self.indexes, embedder, query_timeout)
        self.recorder = Recorder(store, self.indexer.kick)
        self._path: Path | None = None
        self._browser: Store | None = None

    @classmethod
    async def open(cls, path: str | Path, embedder: Embedder | None = None, *,
                   ranker: Ranker | None = None, settings: RecallSettings | None = None,
                   background: bool = True, durable: bool = False, read_only: bool = False,
                   query_timeout: float = 10.0, metabolism: MetabolismSettings | None = None,
                   clock: Callable[[], datetime] | None = None) -> Engram:
        """Open the memory at ``path`` (created if missing). ``background=False``: embed on demand.
        ``clock``: the current time (aware), the real one unless given.

        ``read_only``: an existing store that nothing can be written to (no background embedding;
        recall uses the vectors already stored).
        """
        store = await open_store(path, durable=durable, read_only=read_only)
        try:
            self = cls(store, embedder if embedder is not None else LocalE5(),
                       ranker or LinearRanker(), settings or RecallSettings(), query_timeout, metabolism,
                       clock)
            self._path = Path(path)
            await self.indexes.load(store)
            await self.indexer.start(background and not read_only)
            if not read_only:
                await finish_pending(self)  # a forget killed between its erase and its files
                await finish_self_image(self)  # a self-image killed between its memory and its file
        except BaseException:
            await store.close()
            raise
        release_free_heap()  # what loading the indexes freed (``heap``)
        return self

    async def close(self) -> None:
        """Write what is queued, stop the indexer, close the store."""
        await self.flush()
        await self.toucher.close()
        await self.indexer.stop()
        if self._browser is not None and self._browser is not self.store:
            await self._browser.close()
        await self.store.close()

    @property
    def embedder(self) -> Embedder:
        return self.indexer.embedder

    @property
    def index(self) -> VectorIndex | None:
        """The vectors of the current embedder (None without one)."""
        return self.indexes.vectors

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
        """Write the messages kept in ``journal`` while the store could not take them (``kept.py``),
        in order and once, then clear it; returns how many were written."""
        return await record_kept(self.recorder, journal)

    # ---- memories ------------------------------------------------------------------------
    async def add_memory(self, memory: Memory) -> int:
        """Store a memory; returns its id."""
        async with self.store.transaction() as tx:
            mid = await tx.add_memory(checked_memory(memory))
        self.indexer.kick()
        return mid

    async def update(self, memory_id: int, text: str | None = None, **changes: Any) -> int:
        """Write a new version of a memory (the old one is kept, marked superseded); returns its id."""
        old = await self.get(memory_id)
        if old.status == "superseded":
            raise InvalidInputError(f"memory {memory_id} was superseded; update its newest version",
                                    code="memory_superseded", id=memory_id)
        now = self.clock()
        # valid_from: when the new fact became true (given, else now); the old one's valid_to is set
        # to it by the store (when we learned otherwise)
        changes.setdefault("valid_from", now)
        changes.setdefault("valid_to", None)
        scope = parse_scope(changes.pop("scope")) if "scope" in changes else None
        new = next_version(old, now, text=old.text if text is None else text, **changes)
        async with self.store.transaction() as tx:  # the new version keeps the scope as it is then
            mid = await tx.add_memory(checked_memory(new), supersedes=memory_id)
            if scope is not None:  # a scope covers the whole history (as ``set_scope``)
                for version in await tx.all_versions([mid]):
                    await tx.set_memory_fields(version, scope=scope)
        self.indexer.kick()
        return mid

    async def commit_memories(self, memories: Sequence[tuple[Memory, int | None]],
                              cursors: dict[str, int], read: Sequence[int] = (),
                              expect: dict[str, int] | None = None) -> list[int]:
        """New memories and new versions (``(memory, superseded id or None)``) and cursors, committed
        together or not at all (consolidation: a place's cursor moves with what its batch produced).
        ``read``: the episodes they were drawn from; if one was forgotten meanwhile, nothing is
        written (``ErasedMeanwhile``): the text must not come back. ``expect``: the cursors as they
        were read before the work; if another writer moved one meanwhile, nothing is written
        (``MovedMeanwhile``): that writer applied the same work."""
        checked = [(checked_memory(m), old) for m, old in memories]
        cited = sorted({*read, *(e for m, _ in checked for e in m.sources)})
        async with self.store.transaction() as tx:
            if len(await tx.existing("episodes", cited)) < len(cited):
                raise ErasedMeanwhile("some of the lines these memories came from were forgotten meanwhile",
                                      code="erased_meanwhile")
            for name, value in (expect or {}).items():
                if await tx.cursor(name) != value:
                    raise MovedMeanwhile(f"{name} moved meanwhile: another writer applied this work",
                                         code="moved_meanwhile")
            ids = [await tx.add_memory(m, supersedes=old) for m, old in checked]
            for name, value in cursors.items():
                await tx.set_cursor(name, value)
        if ids:
            self.indexer.kick()
        return ids

    async def set_scope(self, memory_id: int, scope: str) -> None:
        """Move a memory with all its versions to ``scope`` (owner commands; models only narrow via
        scopes.narrow_scope): a scope covers a memory's history, so no old version stays behind."""
        scope = parse_scope(scope)
        await self.get(memory_id)
        async with self.store.transaction() as tx:  # all of them or none; listed under the write lock,
            for version in await tx.all_versions([memory_id]):  # so a version committed meanwhile too
                await tx.set_memory_fields(version, scope=scope)

    async def forget(self, ids: Sequence[int], *, with_sources: bool = False, dry_run: bool = False
                     ) -> Forgetting:
        """Hard-forget memories with every version; ``with_sources``: also the episodes they came from
        and every memory derived from those. Unknown ids: ``UnknownIdError``, nothing touched."""
        plan = await memories_plan(self, list(ids), with_sources)
        return plan if dry_run else await execute(self, plan)

    async def forget_person(self, person: str, *, dry_run: bool = False) -> Forgetting:
        """Hard-forget everything said by or about ``person`` (a person id), in every place."""
        plan = await person_plan(self, person)
        return plan if dry_run else await execute(self, plan)

    async def forget_place(self, place: str, *, dry_run: bool = False) -> Forgetting:
        """Hard-forget every line of ``space`` and every memory kept for it."""
        plan = await place_plan(self, place)
        return plan if dry_run else await execute(self, plan)

    async def forget_episodes(self, ids: Sequence[int], *, dry_run: bool = False) -> Forgetting:
        """Hard-forget episodes (lines) and every memory derived from them (a diary of their day is
        rewritten by ``after_forget``). Unknown ids: ``UnknownIdError``, nothing touched."""
        plan = await episodes_plan(self, list(ids))
        return plan if dry_run else await execute(self, plan)

    def drop_erased(self, memories: Sequence[int]) -> None:
        """After an erase (the indexes followed the commit): no pending touch or cached word of what
        went is kept in memory."""
        for i in memories:
            self.toucher.forget(i)
        for cache in (word_set, _stem, _memory_shape):  # keyed by text that may be the erased one
            cache.cache_clear()

    # ---- metabolism ----------------------------------------------------------------------
    def touch(self, keys: Iterable[str | int]) -> None:
        """Strengthen memories that were injected, returned or shown (``m12`` keys or ids; episodes'
        ``e`` keys are ignored); written a moment later, together, off the reply's path."""
        ids = [k if isinstance(k, int) else int(k[1:]) for k in keys
               if isinstance(k, int) or (k[:1] == "m" and k[1:].isdigit())]
        if ids:
            self.toucher.touch(ids)

    async def merge(self, merged: Memory, originals: Sequence[int]) -> int | None:
        """``merged`` in place of ``originals`` (kept as its superseded versions); None when one of
        them is no longer active, or was moved out of ``merged``'s scope (nothing changed)."""
        async with self.store.transaction() as tx:
            mid = await tx.merge_memories(checked_memory(merged), list(originals))
        self.indexer.kick()
        return mid

    async def merge_duplicates(self, chat: ChatModel, settings: MergeSettings | None = None) -> MergeReport:
        """Merge the memories of one scope the model says record the same thing (the weekly job)."""
        return await merge_duplicates(self, chat, settings)

    async def fade(self, now: datetime | None = None) -> FadeReport:
        """Archive the memories that faded below the threshold (the daily job)."""
        await self.toucher.flush()
        return await fade(self, now or self.clock())

    # ---- reading -------------------------------------------------------------------------
    async def get(self, memory_id: int) -> Memory:
        found = await self.store.get_memories(possible_ids([memory_id]))
        if memory_id not in found:
            raise UnknownIdError(f"no memory with id {memory_id}", code="no_memory", id=memory_id)
        return found[memory_id]

    async def memories(self, ids: Sequence[int]) -> dict[int, Memory]:
        """The memories among ``ids`` that exist, by id, in one read."""
        return await self.store.get_memories(list(ids))

    async def episodes(self, ids: Sequence[int]) -> dict[int, Episode]:
        """The episodes among ``ids`` that exist, by id, in one read."""
        return await self.store.get_episodes(list(ids))

    async def get_episode(self, episode_id: int) -> Episode:
        found = await self.store.get_episodes(possible_ids([episode_id]))
        if episode_id not in found:
            raise UnknownIdError(f"no episode with id {episode_id}", code="no_episode", id=episode_id)
        return found[episode_id]

    async def history(self, memory_id: int) -> list[Memory]:
        """Every version of a memory, oldest first."""
        ids = await self.store.versions(memory_id) if possible_ids([memory_id]) else []
        if not ids:
            raise UnknownIdError(f"no memory with id {memory_id}", code="no_memory", id=memory_id)
        found = await self.store.get_memories(ids)
        return [found[i] for i in ids]

    async def sources(self, memory_id: int) -> list[Episode]:
        """The episodes a memory was derived from."""
        m = await self.get(memory_id)
        eps = await self.store.get_episodes(list(m.sources))
        return [eps[i] for i in m.sources if i in eps]

    async def has_place(self, place: str) -> bool:
        """Whether ``space`` has a line or a memory scoped to it (a place Engram knows)."""
        return await self.store.has_place(place)

    async def list_memories(self, vis: Visibility | None = None, *, scope: str | None = None,
                            kind: str | None = None, people: Sequence[str] = (), named: str = "",
                            limit: int = 10, offset: int = 0) -> tuple[list[Memory], int]:
        """Active memories ``vis`` may see (of ``scope``, ``kind``, about any of ``people`` or, about no
        known person, naming ``named`` in their text), newest first: one page of them and how many
        there are in all."""
        return await self.store.list_memories(vis, scope=scope, kind=kind, people=people, named=named,
                                              limit=limit, offset=offset)

    async def browser(self) -> Store:
        """The store opened once more, read-only, for browsing (the dashboard): its own connections,
        which cannot write, so a slow page never queues in front of the reads a reply needs."""
        if self._browser is None:
            if self.store.read_only or self._path is None:
                self._browser = self.store
            else:
                self._browser = await open_store(self._path, read_only=True)
        return self._browser

    def job_records(self) -> JobRuns:
        """Where the background jobs' runs are kept (the scheduler's ``JobRecords``): the store, seen
        as no more than its job-run records."""
        return self.store

    async def last_episode_time(self, place: str, before: datetime | None = None) -> datetime | None:
        """When the last episode in ``space`` (before ``before``, if given) happened; None if none."""
        return await self.store.last_episode_time(place, before)

    async def last_time_with(self, actor: str, before: datetime | None = None,
                             place: str | None = None) -> datetime | None:
        """When ``actor`` last said something (in ``space``, or anywhere), before ``before``."""
        return await self.store.last_time_with(actor, before, place)

    async def recall(self, query: str, audience: Audience, k: int = 10, *,
                     include_archived: bool = False, now: datetime | None = None) -> list[Hit]:
        """The ``k`` memories and episodes ``audience`` may see that best answer ``query``."""
        if not isinstance(query, str):
            raise InvalidInputError("query must be a string")
        if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= MAX_K:
            raise InvalidInputError(f"k must be a whole number from 1 to {MAX_K}")
        query = query[:MAX_TEXT]
        if not query.strip():
            return []
        qvec = await self.embed_query(query)
        found = await recall(self.store, self.indexes, self.ranker, self.settings, query, qvec,
                             visibility(audience), k, include_archived, now or self.clock())
        if include_archived:  # a deliberate search: what it finds in the archive is active again
            back = [h.id for h in found if isinstance(h.item, Memory) and h.item.status == "archived"]
            if back:
                self.toucher.touch(back, reactivate=True)
                await self.toucher.flush()
        return found

    async def embed_query(self, query: str) -> np.ndarray | None:
        """The query's vector, or None (recall then runs on keywords) when the embedder fails."""
        return await self.indexer.embed_query(query)

    async def stats(self) -> dict[str, Any]:
        counts: dict[str, Any] = dict(await self.store.counts())
        counts["embedder"] = self.embedder.name
        counts["indexed"] = len(self.index) if self.index else 0
        return counts

    async def place_stats(self, audience: Audience) -> dict[str, Any]:
        """What one chat may count: the lines of its own place and the memories it may see."""
        _, seen = await self.store.list_memories(visibility(audience), limit=1)
        return {"episodes": await self.store.count_place_episodes(audience.place), "memories": seen,
                "embedder": self.embedder.name}

    async def counts(self) -> dict[str, int]:
        """How many episodes, memories (active, archived, superseded), spaces, people and vectors."""
        return await self.store.counts()

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
