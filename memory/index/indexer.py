"""Embedding in the background: what has no vector yet is embedded in batches, never blocking a write.

The ``Indexer`` owns the current embedder and its ``VectorIndex`` (loaded at open from the stored
vectors of that model); switching embedders keeps each model's vectors, and ``reindex`` rebuilds
them. Vectors saved reach the index through the store's after-commit listener (``index.Indexes``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from contextlib import aclosing
from functools import partial

import numpy as np

from ..embedders import Embedder, Kind, NoEmbedder, as_query_model
from ..errors import EmbeddingError
from ..outage import Outage
from ..store import Store, pages_ahead
from . import Indexes, second_vectors
from .second_vectors import SecondVectors
from .vectors import VectorIndex

log = logging.getLogger("engram")

EMBED_BATCH = 32
LOAD_PAGE = 65_536  # vectors read per query at open (a page spans most places: fewer, larger adds)


def cursor_name(model: str, kind: str) -> str:
    """The cursor that says how far ``model`` has embedded items of ``kind`` ('e' or 'm')."""
    return f"vectors:{model}:{kind}"


class Indexer:
    """The embedder, the vectors of its model in ``indexes.vectors``, and the background task."""

    def __init__(self, store: Store, indexes: Indexes, embedder: Embedder, query_timeout: float):
        self.store = store
        self.indexes = indexes
        self.embedder = embedder
        self.query_timeout = query_timeout
        indexes.vectors, indexes.second = _index_for(embedder), _second_for(embedder)
        self._kick = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._background = False
        self._embed_outage = Outage(log, "embedding failed (will retry; recall uses keywords meanwhile): %s",
                                    "embedding works again; the backlog is indexed")
        self._query_outage = Outage(log, "query embedding failed, recall uses keywords only: %s",
                                    "query embedding works again")

    @property
    def index(self) -> VectorIndex | None:
        return self.indexes.vectors

    async def start(self, background: bool) -> None:
        """Load the stored vectors of the embedder; ``background``: then embed new items as they come."""
        await self._load_index()
        self._background = background
        if background and self.index is not None:
            self._start_task()

    async def stop(self) -> None:
        """Cancel the background task and let go of it: the cancelled task's traceback holds the
        read it was awaiting (a cursor of the store's connection), and the task, its traceback and
        this indexer form a cycle only the garbage collector would free; held, the closed store's
        files stay open until then (a closed store whose folder cannot be remounted read-only)."""
        task, self._task = self._task, None
        if task:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    def kick(self) -> None:
        """Something new was written: the background task looks for items to embed."""
        self._kick.set()

    def _start_task(self) -> None:
        self._task = asyncio.create_task(self._loop(), name="engram-indexer")
        self._kick.set()

    async def embed_query(self, query: str) -> np.ndarray | None:
        """The query's vector, or None (recall then runs on keywords) when the embedder fails."""
        index = self.index
        if index is None:
            return None
        try:
            vec = await asyncio.wait_for(self.embedder.embed([query], "query"), self.query_timeout)
            vec = np.asarray(vec, np.float32).reshape(-1)
            if index.dim and vec.shape[0] != index.dim:  # a silently changed model
                raise EmbeddingError(f"query vector has dimension {vec.shape[0]}, the index {index.dim}")
        except (EmbeddingError, asyncio.TimeoutError, OSError) as e:
            self._query_outage.failed(e)
            return None
        self._query_outage.recovered()
        return vec

    async def _load_index(self) -> None:
        """The stored vectors into the index; damaged ones leave recall on keywords, the store usable."""
        try:
            await self._read_index()
        except ValueError as e:  # a blob of the wrong size: at open, or when the plugin switches models
            log.error("the stored vectors of %s cannot be read (%s); recall uses keywords only until "
                      "they are rebuilt (engram reindex)", self.embedder.name, e)
            self.indexes.vectors = self.indexes.second = None

    async def _read_index(self) -> None:
        index = self.index
        if index is None:
            return
        # Blocks sized first and filled page by page with the codes as stored (nothing to convert):
        # peak memory stays near the index's own size
        model = self.embedder.name
        factor = await self.store.vector_scale(model)
        sizes = await self.store.vector_counts(model) if factor is not None else []
        if factor is not None:
            index.use_factor(factor)
        for kind in ("e", "m") if factor is not None else ():
            read = partial(self.store.vector_codes_page, model, kind, limit=LOAD_PAGE)
            async with aclosing(pages_ahead(read)) as pages:
                async for page in pages:  # the next page is read while this one is filed
                    if index.dim is None:
                        index.dim = page.codes.shape[1]
                        for k, group, n in sizes:
                            index.reserve(k, group, n)
                    index.add_page(kind, page)
        # a place past ``vectors.APPROX_FROM`` gets its inverted file from its first search on (made
        # on a thread, the place scanned whole meanwhile), not here: a store of many big places
        # opens without waiting for any of them
        second = self.indexes.second
        if second is not None:  # a big store's stay on file (``second_vectors.HELD``)
            second.on_file = sum(n for _, _, n in sizes) > second_vectors.HELD
        if second is not None and not second.on_file:  # page by page (never searched: no blocks to size)
            for kind in ("e", "m"):  # room for as many as the first vectors: no regrowth on the way
                second.reserve(kind, sum(n for k, _, n in sizes if k == kind))
                after = 0
                while True:
                    ids, vecs = await self.store.query_vectors_page(second.model, kind, after, LOAD_PAGE)
                    if not ids:
                        break
                    second.add(kind, ids, vecs)
                    after = ids[-1]
            second.trim()

    async def embed_pending(self, progress: Callable[[int], None] | None = None) -> int:
        """Embed every item that has no vector yet; returns how many items got their (passage) vector.

        Passage vectors first (the ones recall searches); then, for an embedder whose two kinds
        differ, each item embedded as a query too (``as_query_model``: a ranking feature only).
        ``progress`` hears the vectors made so far, of both passes.
        """
        if self.index is None:
            return 0
        passes: list[tuple[str, Kind]] = [(self.embedder.name, "passage")]
        if self.indexes.second is not None:
            passes.append((self.indexes.second.model, "query"))
        made = items = 0
        for model, text_kind in passes:
            for kind in ("e", "m"):
                n = await self._embed_kind(model, kind, text_kind, progress, made)
                made += n
                items += n if text_kind == "passage" else 0
        return items

    async def _embed_kind(self, model: str, kind: str, text_kind: Kind,
                          progress: Callable[[int], None] | None, before: int) -> int:
        """Embed the items of ``kind`` past ``model``'s cursor as ``text_kind``, batch by batch, each
        batch's vectors and the cursor in one transaction. Each batch under the cursor's turn
        (``Store.turn``): several instances on one PostgreSQL store embed each item once, the others
        hearing of its vectors as of any change (SQLite: always this process's turn)."""
        index, store, done = self.index, self.store, 0
        assert index is not None
        name = cursor_name(model, kind)
        while True:
            async with store.turn(name) as mine:
                if not mine:  # another instance is embedding these now
                    break
                rows = await store.items_to_embed(kind, await store.cursor(name), EMBED_BATCH)
                if not rows:
                    break
                live = [r for r in rows if r.status != "superseded"]
                vecs = await self.embedder.embed([r.text for r in live], text_kind) if live else None
                if vecs is not None and (vecs.ndim != 2 or len(vecs) != len(live) or
                                         (index.dim and vecs.shape[1] != index.dim)):
                    raise EmbeddingError(f"embedder {self.embedder.name} answered shape {vecs.shape}"
                                         f", expected ({len(live)}, {index.dim})")
                async with store.transaction() as tx:  # the index hears of them after the commit
                    if text_kind == "passage":
                        await tx.save_vectors(model, kind, live,
                                              vecs if vecs is not None else np.zeros((0, 0)))
                    elif vecs is not None:
                        await tx.save_query_vectors(model, kind, live, vecs)
                    await tx.set_cursor(name, rows[-1].id)
            done += len(live)
            if progress:
                progress(before + done)
        return done

    async def _loop(self) -> None:
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
                if getattr(e, "final", False):  # a store found damaged: it said so; no write will pass
                    log.info("indexing stopped: %s", e)
                    return
                self._embed_outage.failed(e)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 300.0)
                self._kick.set()

    async def use_embedder(self, embedder: Embedder) -> None:
        """Switch to ``embedder``, keeping each model's vectors; only its missing ones get embedded."""
        if embedder.name == self.embedder.name:
            self.embedder = embedder
            return
        await self.stop()
        self.embedder = embedder
        self.indexes.vectors, self.indexes.second = _index_for(embedder), _second_for(embedder)
        self._embed_outage.active = self._query_outage.active = False
        await self._load_index()
        if self._background and self.index is not None:
            self._start_task()

    async def reindex(self, embedder: Embedder, progress: Callable[[int], None] | None = None) -> int:
        """Switch to ``embedder`` and rebuild every vector for it; returns how many were embedded."""
        running = self._task is not None
        await self.stop()
        second = _second_for(embedder)
        async with self.store.transaction() as tx:
            for model in (embedder.name, *((second.model,) if second is not None else ())):
                await tx.drop_vectors(model)
                for kind in ("e", "m"):
                    await tx.set_cursor(cursor_name(model, kind), 0)
        self.embedder = embedder
        self.indexes.vectors, self.indexes.second = _index_for(embedder), second
        n = await self.embed_pending(progress)
        if self.index is not None and running:
            self._task = asyncio.create_task(self._loop(), name="engram-indexer")
        return n


def _index_for(embedder: Embedder) -> VectorIndex | None:
    return None if isinstance(embedder, NoEmbedder) else VectorIndex(embedder.name)


def _second_for(embedder: Embedder) -> SecondVectors | None:
    model = as_query_model(embedder)
    return None if model is None else SecondVectors(model)
