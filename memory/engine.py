"""Engram: the core's one entry point — record, remember, recall, update, forget.

``await Engram.open(path)`` gives a running memory: the SQLite store, the vector index of the
current embedder (loaded at open, kept in sync) and a background task that embeds new items in
batches. Recording never waits for an embedding; recall uses what is embedded so far.

Durability: ``record()`` returns an episode id only after the transaction holding it has committed
to the write-ahead log, so an acknowledged episode survives the process being killed. Concurrent
``record()`` calls share one transaction (group commit); each episode's index words are worked out
when it is queued, so they overlap the previous batch's commit instead of holding the writer.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from .chat import ChatModel
from .checks import checked_episode, checked_memory
from .embedders import Embedder, LocalE5, NoEmbedder
from .errors import EmbeddingError, InvalidInputError, UnknownIdError
from .features import featurize, hits, top
from .forgetting import Forgetting, execute, memories_plan, person_plan, place_plan
from .merging import MergeReport, MergeSettings, merge_duplicates
from .metabolism import FadeReport, MetabolismSettings, Toucher, fade
from .model import Audience, Episode, Hit, Memory, now_utc
from .outage import Outage
from .ranker import LinearRanker, Ranker
from .recall import RecallSettings, _memory_shape, fill, gather
from .rows import prepare
from .scopes import parse_scope, visibility
from .sqlite_store import SQLiteStore
from .text import MAX_TEXT, _stem, word_set
from .vectors import VectorIndex

log = logging.getLogger("engram")

MAX_BATCH = 1000  # episodes per group commit
EMBED_BATCH = 32
LOAD_PAGE = 4096  # vectors read per query when the index is loaded at open
MAX_K = 200


class Engram:
    """A bot's memory: one store, one embedder, one ranker."""

    def __init__(self, store: SQLiteStore, embedder: Embedder, ranker: Ranker,
                 settings: RecallSettings, query_timeout: float,
                 metabolism: MetabolismSettings | None = None):
        self.store = store
        self.metabolism = metabolism or MetabolismSettings()
        self.toucher = Toucher(self)
        # called after each hard forget (rewrite a day's diary, regenerate the self-image, drop caches)
        self.after_forget: list[Callable[[Forgetting], Awaitable[None]]] = []
        self.embedder = embedder
        self.ranker = ranker
        self.settings = settings
        self.query_timeout = query_timeout
        self.index = None if isinstance(embedder, NoEmbedder) else VectorIndex(embedder.name)
        self._queue: list[tuple[Episode, tuple[str, int], asyncio.Future[int]]] = []
        self._flusher: asyncio.Task[None] | None = None
        self._kick = asyncio.Event()
        self._indexer: asyncio.Task[None] | None = None
        self._embed_outage = Outage(log, "embedding failed (will retry; recall uses keywords meanwhile): %s",
                                    "embedding works again; the backlog is indexed")
        self._query_outage = Outage(log, "query embedding failed, recall uses keywords only: %s",
                                    "query embedding works again")
        self._background = False

    @classmethod
    async def open(cls, path: str | Path, embedder: Embedder | None = None, *,
                   ranker: Ranker | None = None, settings: RecallSettings | None = None,
                   background: bool = True, durable: bool = False,
                   query_timeout: float = 10.0, metabolism: MetabolismSettings | None = None) -> Engram:
        """Open the memory at ``path`` (created if missing). ``background=False``: embed on demand."""
        store = await SQLiteStore.open(path, durable=durable)
        self = cls(store, embedder if embedder is not None else LocalE5(),
                   ranker or LinearRanker(), settings or RecallSettings(), query_timeout, metabolism)
        await self._load_index()
        self._background = background
        if background and self.index is not None:
            self._indexer = asyncio.create_task(self._index_loop(), name="engram-indexer")
            self._kick.set()
        return self

    async def close(self) -> None:
        """Write what is queued, stop the indexer, close the store."""
        await self.flush()
        await self.toucher.close()
        if self._indexer:
            self._indexer.cancel()
            await asyncio.gather(self._indexer, return_exceptions=True)
        await self.store.close()

    # ---- recording -----------------------------------------------------------------------
    async def record(self, episode: Episode) -> int:
        """Append an episode; returns its id once it is durably committed."""
        ep = checked_episode(episode)
        fut: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        # No shield: a cancelled caller's future is done, so the flusher skips it; its episode is
        # written all the same and no other caller is touched.
        self._queue.append((ep, prepare(ep), fut))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush_queue())
        return await fut

    async def record_many(self, episodes: Iterable[Episode]) -> list[int]:
        """Append many episodes in one transaction; returns their ids in order."""
        eps = [checked_episode(e) for e in episodes]
        ids = await self.store.add_episodes(eps, [prepare(e) for e in eps])
        self._kick.set()
        return ids

    async def flush(self) -> None:
        """Wait until every queued episode is committed."""
        while self._flusher is not None and not self._flusher.done():
            await asyncio.shield(self._flusher)

    async def _flush_queue(self) -> None:
        while self._queue:
            batch, self._queue = self._queue[:MAX_BATCH], self._queue[MAX_BATCH:]
            try:
                ids = await self.store.add_episodes([e for e, _, _ in batch], [w for _, w, _ in batch])
            except Exception as e:
                log.exception("recording %d episodes failed", len(batch))
                for _, _, fut in batch:
                    if not fut.done():
                        fut.set_exception(e)
                continue
            for (_, _, fut), i in zip(batch, ids):
                if not fut.done():
                    fut.set_result(i)
            self._kick.set()

    # ---- memories ------------------------------------------------------------------------
    async def add_memory(self, memory: Memory) -> int:
        """Store a memory; returns its id."""
        mid = await self.store.add_memory(checked_memory(memory))
        self._kick.set()
        return mid

    async def update(self, memory_id: int, text: str | None = None, **changes: Any) -> int:
        """Write a new version of a memory (the old one is kept, marked superseded); returns its id."""
        old = await self.get(memory_id)
        if old.status == "superseded":
            raise InvalidInputError(f"memory {memory_id} was superseded; update its newest version")
        now = now_utc()
        # valid_from: when the new fact became true (given, else now); the old one's valid_to is set
        # to it by the store (when we learned otherwise)
        changes.setdefault("valid_from", now)
        changes.setdefault("valid_to", None)
        new = replace(old, text=old.text if text is None else text, id=None, supersedes=memory_id,
                      created_at=now, status="active", **changes)
        mid = await self.store.add_memory(checked_memory(new), supersedes=memory_id)
        if self.index:
            self.index.set_status("m", memory_id, "superseded")
        self._kick.set()
        return mid

    async def commit_memories(self, memories: Sequence[tuple[Memory, int | None]],
                              cursors: dict[str, int], read: Sequence[int] = ()) -> list[int]:
        """New memories and new versions (``(memory, superseded id or None)``) and cursors, committed
        together or not at all (consolidation: a place's cursor moves with what its batch produced).
        ``read``: the episodes they were drawn from; if one was forgotten meanwhile, nothing is
        written (``ErasedMeanwhile``): the text must not come back."""
        ids = await self.store.write_memories([(checked_memory(m), old) for m, old in memories], cursors,
                                              read)
        if self.index:
            for _, old in memories:
                if old is not None:
                    self.index.set_status("m", old, "superseded")
        self._kick.set()
        return ids

    async def set_scope(self, memory_id: int, scope: str) -> None:
        """Change a memory's scope in place (owner commands; models only narrow via scopes.narrow_scope)."""
        scope = parse_scope(scope)
        await self.get(memory_id)
        await self.store.set_memory_fields(memory_id, scope=scope)
        if self.index:
            self.index.move(memory_id, scope)

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

    async def forget_place(self, space: str, *, dry_run: bool = False) -> Forgetting:
        """Hard-forget every line of ``space`` and every memory kept for it."""
        plan = await place_plan(self, space)
        return plan if dry_run else await execute(self, plan)

    async def forget_episodes(self, ids: Sequence[int]) -> int:
        """Hard-delete episodes (only them: what was derived stays); returns how many went."""
        known = await self.store.get_episodes(list(ids))
        missing = [i for i in ids if i not in known]
        if missing:
            raise UnknownIdError(f"no episode with id {', '.join(map(str, missing))}")
        done = await execute(self, Forgetting(episodes=sorted(known)))
        return len(done.episodes)

    def drop_erased(self, episodes: Sequence[int], memories: Sequence[int]) -> None:
        """After an erase: no vector, pending touch or cached word of what went is kept in memory."""
        if self.index:
            for i in episodes:
                self.index.erase("e", i)
            for i in memories:
                self.index.erase("m", i)
        for i in memories:
            self.toucher._pending.pop(i, None)
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
        them is no longer active (nothing changed)."""
        mid = await self.store.merge_memories(checked_memory(merged), list(originals))
        if mid is not None and self.index:
            for i in originals:
                self.index.set_status("m", i, "superseded")
        self._kick.set()
        return mid

    async def merge_duplicates(self, chat: ChatModel, settings: MergeSettings | None = None) -> MergeReport:
        """Merge the memories of one scope the model says record the same thing (the weekly job)."""
        return await merge_duplicates(self, chat, settings)

    async def fade(self, now: datetime | None = None) -> FadeReport:
        """Archive the memories that faded below the threshold (the daily job)."""
        await self.toucher.flush()
        return await fade(self, now)

    # ---- reading -------------------------------------------------------------------------
    async def get(self, memory_id: int) -> Memory:
        found = await self.store.get_memories([memory_id])
        if memory_id not in found:
            raise UnknownIdError(f"no memory with id {memory_id}")
        return found[memory_id]

    async def get_episode(self, episode_id: int) -> Episode:
        found = await self.store.get_episodes([episode_id])
        if episode_id not in found:
            raise UnknownIdError(f"no episode with id {episode_id}")
        return found[episode_id]

    async def history(self, memory_id: int) -> list[Memory]:
        """Every version of a memory, oldest first."""
        ids = await self.store.versions(memory_id)
        if not ids:
            raise UnknownIdError(f"no memory with id {memory_id}")
        found = await self.store.get_memories(ids)
        return [found[i] for i in ids]

    async def sources(self, memory_id: int) -> list[Episode]:
        """The episodes a memory was derived from."""
        m = await self.get(memory_id)
        eps = await self.store.get_episodes(list(m.sources))
        return [eps[i] for i in m.sources if i in eps]

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
        vis = visibility(audience)
        pool = await gather(self.store, self.index, query, qvec, vis, self.settings, include_archived)
        feats = featurize(pool, query, now or now_utc(), self.settings)
        best = top(feats, self.ranker, k)
        shown = set(await fill(self.store, pool, [j for j, _ in best], vis))  # read from the file
        found = hits(feats, [b for b in best if b[0] in shown])
        if include_archived:  # a deliberate search: what it finds in the archive is active again
            back = [h.id for h in found if isinstance(h.item, Memory) and h.item.status == "archived"]
            if back:
                self.toucher.touch(back, reactivate=True)
                await self.toucher.flush()
        return found

    async def embed_query(self, query: str) -> np.ndarray | None:
        """The query's vector, or None (recall then runs on keywords) when the embedder fails."""
        if self.index is None:
            return None
        try:
            vec = await asyncio.wait_for(self.embedder.embed([query], "query"), self.query_timeout)
            vec = np.asarray(vec, np.float32).reshape(-1)
            if self.index.dim and vec.shape[0] != self.index.dim:  # a silently changed model
                raise EmbeddingError(f"query vector has dimension {vec.shape[0]}, the index {self.index.dim}")
        except (EmbeddingError, asyncio.TimeoutError, OSError) as e:
            self._query_outage.failed(e)
            return None
        self._query_outage.recovered()
        return vec

    async def stats(self) -> dict[str, Any]:
        counts: dict[str, Any] = dict(await self.store.counts())
        counts["embedder"] = self.embedder.name
        counts["indexed"] = len(self.index) if self.index else 0
        return counts

    # ---- vectors -------------------------------------------------------------------------
    async def _load_index(self) -> None:
        if self.index is None:
            return
        # Blocks sized first and filled page by page: peak memory stays near the index's own size.
        model, sizes = self.embedder.name, await self.store.vectors.vector_groups(self.embedder.name)
        for kind in ("e", "m"):
            after = 0
            while rows := await self.store.vectors.vectors_page(model, kind, after, LOAD_PAGE):
                if self.index.dim is None:
                    self.index.dim = len(rows[0][3]) // 4
                    for k, group, n in sizes:
                        self.index.reserve(k, group, n)
                vecs = np.frombuffer(b"".join(r[3] for r in rows), np.float32).reshape(len(rows), -1)
                self._index_rows(kind, rows, vecs)
                after = rows[-1][0]

    async def embed_pending(self, progress: Callable[[int], None] | None = None) -> int:
        """Embed every item that has no vector yet; returns how many were embedded."""
        if self.index is None:
            return 0
        done = 0
        for kind in ("e", "m"):
            name = f"vectors:{self.embedder.name}:{kind}"
            vec_rows = self.store.vectors
            while rows := await vec_rows.items_after(kind, await vec_rows.cursor(name), EMBED_BATCH):
                live = [r for r in rows if r[2] != "superseded"]
                vecs = await self.embedder.embed([r[3] for r in live], "passage") if live else None
                if vecs is not None and (vecs.ndim != 2 or len(vecs) != len(live) or
                                         (self.index.dim and vecs.shape[1] != self.index.dim)):
                    raise EmbeddingError(f"embedder {self.embedder.name} answered shape {vecs.shape}"
                                         f", expected ({len(live)}, {self.index.dim})")
                pairs = list(zip([r[0] for r in live], vecs)) if vecs is not None else []
                await self.store.vectors.save_vectors(self.embedder.name, kind, pairs, (name, rows[-1][0]))
                if vecs is not None:
                    self._index_rows(kind, live, vecs)
                done += len(live)
                if progress:
                    progress(done)
        return done

    def _index_rows(self, kind: str, rows: Sequence[tuple[Any, ...]], vecs: np.ndarray) -> None:
        """Add vectors of rows (id, group, status, ...) to the index."""
        assert self.index is not None
        self.index.add_many(kind, [r[1] for r in rows], [r[0] for r in rows], vecs, [r[2] for r in rows])

    async def _index_loop(self) -> None:
        delay = 1.0
        while True:
            await self._kick.wait()
            self._kick.clear()
            try:
                await self.embed_pending()
                self._embed_outage.recovered()
                delay = 1.0
            except asyncio.CancelledError:
                raise
            except Exception as e:  # the indexer must outlive any embedder failure
                task = asyncio.current_task()
                if task is not None and getattr(task, "cancelling", lambda: 0)():  # 3.11+
                    # a cancel that hit mid-transaction can surface as the store's rollback error
                    raise asyncio.CancelledError() from e
                self._embed_outage.failed(e)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 300.0)
                self._kick.set()

    async def use_embedder(self, embedder: Embedder) -> None:
        """Switch to ``embedder``, keeping each model's vectors; only its missing ones get embedded."""
        if embedder.name == self.embedder.name:
            self.embedder = embedder
            return
        if self._indexer:
            self._indexer.cancel()
            await asyncio.gather(self._indexer, return_exceptions=True)
            self._indexer = None
        self.embedder = embedder
        self.index = None if isinstance(embedder, NoEmbedder) else VectorIndex(embedder.name)
        self._embed_outage.active = self._query_outage.active = False
        await self._load_index()
        if self._background and self.index is not None:
            self._indexer = asyncio.create_task(self._index_loop(), name="engram-indexer")
            self._kick.set()

    async def reindex(self, embedder: Embedder, progress: Callable[[int], None] | None = None) -> int:
        """Switch to ``embedder`` and rebuild every vector for it; returns how many were embedded."""
        if self._indexer:
            self._indexer.cancel()
            await asyncio.gather(self._indexer, return_exceptions=True)
        await self.store.vectors.drop_vectors(embedder.name)
        self.embedder = embedder
        self.index = None if isinstance(embedder, NoEmbedder) else VectorIndex(embedder.name)
        n = await self.embed_pending(progress)
        if self.index is not None and self._indexer is not None:
            self._indexer = asyncio.create_task(self._index_loop(), name="engram-indexer")
        return n
