"""The kernel: what the capabilities share — the store, the in-memory indexes over it (kept current by
the store's after-commit listener), the ``Recorder`` (group commit), the ``Indexer`` (the embedder),
the clock, the people and the ``Toucher`` — and the memory writes and reads they need.

Capabilities (consolidation, metabolism, self) take a ``Kernel``; the facade, ``Engram``, is a kernel
that adds the verbs its users call and composes the capabilities. So nothing below the facade imports
it back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any

import numpy as np

from .clock import watched_clock
from .embedders import Embedder
from .errors import ErasedMeanwhile, InvalidInputError, MovedMeanwhile, UnknownIdError
from .index import Indexes
from .index.indexer import Indexer
from .index.vectors import VectorIndex
from .model import Audience, Episode, Hit, Memory, next_version, possible_ids
from .people import People
from .recall import RecallSettings, recall
from .recall.candidates import forget_cached_shapes
from .recall.ranker import Ranker
from .recording.recorder import Recorder
from .scopes import parse_scope, visibility
from .store import Store
from .strength import MetabolismSettings, Toucher
from .text.redaction import DEFAULT as DEFAULT_REDACTOR
from .text.redaction import Redactor
from .text.words import MAX_TEXT, forget_cached_words
from .validate import audience_arg, checked_memory, clean, id_arg, ids_arg, person_arg, place_arg

MAX_K = 200


class Kernel:
    """One store and what runs over it: indexes, recorder, indexer, clock, people, touches."""

    def __init__(self, store: Store, embedder: Embedder, ranker: Ranker, settings: RecallSettings,
                 query_timeout: float, metabolism: MetabolismSettings | None = None,
                 clock: Callable[[], datetime] | None = None, redactor: Redactor | None = None):
        self.store = store
        self.metabolism = metabolism or MetabolismSettings()
        # the time as this memory reads it (new versions, merges, fading, recall's recency, touches)
        self.clock: Callable[[], datetime] = clock or watched_clock()  # logs a jump when it reads one
        self.toucher = Toucher(self, lambda: self.clock().timestamp())
        self.people = People(store)
        self.ranker = ranker
        self.settings = settings
        self.indexes = Indexes()
        store.listen(self.indexes.after_commit)
        self.indexer = Indexer(store, self.indexes, embedder, query_timeout)
        self.recorder = Recorder(store, self.indexer.kick, redactor or DEFAULT_REDACTOR)

    async def close(self) -> None:
        """Write what is queued, stop the indexer, close the store."""
        await self.recorder.flush()
        await self.toucher.close()
        await self.indexer.stop()
        await self.store.close()

    @property
    def embedder(self) -> Embedder:
        return self.indexer.embedder

    @property
    def index(self) -> VectorIndex | None:
        """The vectors of the current embedder (None without one)."""
        return self.indexes.vectors

    # ---- memories ------------------------------------------------------------------------
    async def add_memory(self, memory: Memory) -> int:
        """Store a memory; returns its id."""
        async with self.store.transaction() as tx:
            mid = await tx.add_memory(checked_memory(memory))
        self.indexer.kick()
        return mid

    async def update(self, memory_id: int, text: str | None = None, **changes: Any) -> int:
        """Write a new version of a memory (the old one is kept, marked superseded); returns its id."""
        old = await self.get(id_arg(memory_id, "a memory id"))
        if old.status == "superseded":
            raise InvalidInputError(f"memory {memory_id} was superseded; update its newest version",
                                    code="memory_superseded", id=memory_id)
        now = self.clock()
        # valid_from: when the new fact became true (given, else now); the old one's valid_to is set
        # to it by the store (when we learned otherwise)
        changes.setdefault("valid_from", now)
        changes.setdefault("valid_to", None)
        scope = clean(parse_scope(changes.pop("scope"))) if "scope" in changes else None
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
        scope = clean(parse_scope(scope))
        await self.get(id_arg(memory_id, "a memory id"))
        async with self.store.transaction() as tx:  # all of them or none; listed under the write lock,
            for version in await tx.all_versions([memory_id]):  # so a version committed meanwhile too
                await tx.set_memory_fields(version, scope=scope)

    def drop_erased(self, memories: Sequence[int]) -> None:
        """After an erase (the indexes followed the commit): no pending touch or cached word of what
        went is kept in memory."""
        for i in memories:
            self.toucher.forget(i)
        forget_cached_words()
        forget_cached_shapes()

    def touch(self, keys: Iterable[str | int]) -> None:
        """Strengthen memories that were injected, returned or shown (``m12`` keys or ids; episodes'
        ``e`` keys are ignored); written a moment later, together, off the reply's path."""
        ids = [k if isinstance(k, int) else int(k[1:]) for k in keys
               if (isinstance(k, int) and not isinstance(k, bool) and possible_ids([k]))
               or (isinstance(k, str) and k[:1] == "m" and k[1:].isdigit() and k[1:].isascii())]
        if ids:
            self.toucher.touch(ids)

    async def merge(self, merged: Memory, originals: Sequence[int]) -> int | None:
        """``merged`` in place of ``originals`` (kept as its superseded versions); None when one of
        them is no longer active, or was moved out of ``merged``'s scope (nothing changed)."""
        async with self.store.transaction() as tx:
            mid = await tx.merge_memories(checked_memory(merged), list(originals))
        self.indexer.kick()
        return mid

    # ---- reading -------------------------------------------------------------------------
    async def get(self, memory_id: int) -> Memory:
        id_arg(memory_id, "a memory id")
        found = await self.store.get_memories(possible_ids([memory_id]))
        if memory_id not in found:
            raise UnknownIdError(f"no memory with id {memory_id}", code="no_memory", id=memory_id)
        return found[memory_id]

    async def memories(self, ids: Sequence[int]) -> dict[int, Memory]:
        """The memories among ``ids`` that exist, by id, in one read."""
        return await self.store.get_memories(possible_ids(ids_arg(ids, "memory ids")))

    async def episodes(self, ids: Sequence[int]) -> dict[int, Episode]:
        """The episodes among ``ids`` that exist, by id, in one read."""
        return await self.store.get_episodes(possible_ids(ids_arg(ids, "episode ids")))

    async def get_episode(self, episode_id: int) -> Episode:
        id_arg(episode_id, "an episode id")
        found = await self.store.get_episodes(possible_ids([episode_id]))
        if episode_id not in found:
            raise UnknownIdError(f"no episode with id {episode_id}", code="no_episode", id=episode_id)
        return found[episode_id]

    async def history(self, memory_id: int) -> list[Memory]:
        """Every version of a memory, oldest first."""
        id_arg(memory_id, "a memory id")
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
        return await self.store.has_place(place_arg(place))

    async def last_episode_time(self, place: str, before: datetime | None = None) -> datetime | None:
        """When the last episode in ``space`` (before ``before``, if given) happened; None if none."""
        return await self.store.last_episode_time(place_arg(place), before)

    async def last_time_with(self, actor: str, before: datetime | None = None,
                             place: str | None = None) -> datetime | None:
        """When ``actor`` last said something (in ``space``, or anywhere), before ``before``."""
        return await self.store.last_time_with(person_arg(actor), before,
                                               None if place is None else place_arg(place))

    async def recall(self, query: str, audience: Audience, k: int = 10, *,
                     include_archived: bool = False, now: datetime | None = None) -> list[Hit]:
        """The ``k`` memories and episodes ``audience`` may see that best answer ``query``."""
        if not isinstance(query, str):
            raise InvalidInputError("query must be a string")
        audience = audience_arg(audience)
        query = clean(query)  # a model's "\ud83d": searched for as stored, never a crash
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
