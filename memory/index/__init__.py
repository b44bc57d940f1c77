"""In-memory indexes over what the store returns, kept current by one after-commit listener.

``Indexes`` holds four: the keyword statistics (``keywords.Keywords``), the episodes' columns
(``episode_columns.EpisodeColumns``), the vectors of the current embedder (``vectors.VectorIndex``,
None without one) and the items' second vectors, each embedded as a query
(``second_vectors.SecondVectors``, None unless the embedder's two kinds differ). They are loaded at
open; after each commit the store hands ``after_commit`` what changed, so recall sees a write
exactly when it is durable.
"""

from __future__ import annotations

import asyncio

from ..store import (
    Change,
    EpisodesAdded,
    EpisodesDeleted,
    MemoriesArchived,
    MemoriesDeleted,
    MemoryAdded,
    MemoryChanged,
    PlacesDeleted,
    Store,
    VectorsSaved,
)
from .episode_columns import EpisodeColumns
from .keywords import Keywords
from .second_vectors import SecondVectors
from .vectors import VectorIndex


class Indexes:
    """The keyword statistics, episode columns, vectors and second vectors of one store."""

    def __init__(self, vectors: VectorIndex | None = None):
        self.keywords = Keywords()
        self.episodes = EpisodeColumns()
        self.vectors = vectors
        # items' second vectors (embedded as queries: ``embedders.as_query_model``), or None
        self.second: SecondVectors | None = None

    async def load(self, store: Store) -> None:
        """Fill the keyword statistics and the episode columns from the store (vectors: ``indexing``),
        side by side: the keyword pages are read on the store's reader thread while the columns are
        read and filed on this one."""
        await asyncio.gather(self.keywords.load(store), self.episodes.load(store))

    def after_commit(self, change: Change) -> None:
        """Follow one committed change of the store."""
        if isinstance(change, EpisodesAdded):
            self._episodes_added(change)
        elif isinstance(change, EpisodesDeleted):
            self.keywords.episodes.drop(change.ids)
            self.episodes.forget(change.ids)
            if self.vectors is not None:
                for i in change.ids:
                    self.vectors.erase("e", i)
            if self.second is not None:
                self.second.erase("e", change.ids)
        elif isinstance(change, MemoryAdded):
            kw = self.keywords
            if change.supersedes is not None:
                kw.memories.drop([change.supersedes])
            kw.memories.put([change.id], [kw.memory_group(change.scope, change.status)], [change.length])
            if change.supersedes is not None and self.vectors is not None:
                self.vectors.set_status("m", change.supersedes, "superseded")
        elif isinstance(change, MemoryChanged):
            kw = self.keywords
            if change.status == "superseded":  # merged into another: found as that one from now on
                kw.memories.drop([change.id])
            elif change.fields & {"scope", "status"}:  # who may find it by keyword changed
                kw.memories.regroup(change.id, kw.memory_group(change.scope, change.status))
            if "status" in change.fields and self.vectors is not None:
                self.vectors.set_status("m", change.id, change.status)
            if "scope" in change.fields and self.vectors is not None:
                self.vectors.move(change.id, change.scope)
        elif isinstance(change, MemoriesDeleted):
            self.keywords.memories.drop(change.ids)
            if self.vectors is not None:
                for i in change.ids:
                    self.vectors.erase("m", i)
            if self.second is not None:
                self.second.erase("m", change.ids)
        elif isinstance(change, MemoriesArchived):
            kw = self.keywords
            kw.memories.regroup_many(change.ids, [kw.memory_group(s, "archived") for s in change.scopes])
            if self.vectors is not None:
                for i in change.ids:
                    self.vectors.set_status("m", i, "archived")
        elif isinstance(change, PlacesDeleted):
            for place in change.names:
                self.keywords.forget_place(place)
        elif isinstance(change, VectorsSaved):
            self._vectors_saved(change)

    def _vectors_saved(self, change: VectorsSaved) -> None:
        """Vectors of the current model join the searched index; second vectors, their own."""
        rows = change.rows
        if self.vectors is not None and change.model == self.vectors.model and rows:
            groups, ids, statuses = [r.group for r in rows], [r.id for r in rows], [r.status for r in rows]
            if self.vectors.factor is None and change.factor is not None:
                self.vectors.use_factor(change.factor)
            if change.codes is not None and change.factor == self.vectors.factor:  # the codes as stored
                self.vectors.add_codes(change.kind, groups, ids, change.codes, statuses)
            else:  # none stored, or another factor (a reindex by another process): made here
                self.vectors.add_many(change.kind, groups, ids, change.vectors, statuses)
        elif self.second is not None and change.model == self.second.model:
            self.second.add(change.kind, [r.id for r in rows], change.vectors)

    def _episodes_added(self, change: EpisodesAdded) -> None:
        episodes = self.episodes
        for key, place in {(key, r.place) for key, r in zip(change.place_keys, change.rows)}:
            episodes.name_place(key, place)
        episodes.add(change.rows)
        self.keywords.episodes.put([r.id for r in change.rows], change.place_keys, change.lengths)
