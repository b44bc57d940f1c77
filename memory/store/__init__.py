"""The Store protocol: everything the layers above may ask of storage, and the rows it answers with.

A backend (``store/sqlite/`` today) implements it; nothing above this package knows SQL, a
connection or a blob layout. ``tests/store/`` states the contract and runs on every backend.

The protocol is split by who needs what (``RecallReads``, ``ProgressReads``, ``PeopleReads``,
``DayReads``, ``MetabolismReads``, ``ForgettingReads``, ``BrowseReads``, ``BundleReads``, ``JobRuns``,
``RankingState``);
``Store`` is all of them, so a second backend can be written and tested one role at a time.

Writes have one door: ``async with store.transaction() as tx:`` (``Writes``), several writes committed
together; after each commit the store hands what changed to its listeners (``Store.listen``): the
in-memory indexes (``memory/index``) follow the file that way, and only after the commit.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple, Protocol, TypeVar

import numpy as np

from ..errors import StoreError
from ..model import Episode, Memory
from ..scopes import Visibility


class EpisodeColumnRow(NamedTuple):
    """What recall keeps in memory of an episode (``index.episode_columns``)."""

    id: int
    time: float  # seconds since 1970
    tz: int  # minutes east of UTC
    place: str
    seq: int
    section: int
    shape: int  # ``text.text_shape``
    actor_name: str
    image: bool
    own: bool  # the bot's own line (kind ``message_out``)


class MemoryRankRow(NamedTuple):
    """What recall needs of a candidate memory to check and rank it (the rest is read for hits only)."""

    id: int
    text: str
    scope: str
    status: str
    importance: float
    strength: float
    created_at: float | None
    valid_from: float | None
    last_recalled: float | None = None  # when it was last injected, returned or shown (None: never)


class KeywordPage(NamedTuple):
    """Episodes' keyword rows as columns (``episode_keyword_page``: a million are read at open)."""

    ids: np.ndarray  # int64, ascending
    groups: np.ndarray  # int64: each one's space key
    lengths: np.ndarray  # int64: its number of index words


class KeywordRow(NamedTuple):
    """An indexed row's keyword group (an episode's space key, a memory's scope and status) and its
    number of index words (BM25's document length)."""

    id: int
    group: Any  # int space key (episodes) or (scope, status) (memories)
    length: int


class EmbedRow(NamedTuple):
    """An item to embed or an embedded item: id, group (space or scope), status, text."""

    id: int
    group: str
    status: str
    text: str


DOCLIST_CAP = 2048
"""A word's postings are its newest rows, at most this many and one (issue 33): in a place of 200k
lines a chat's common words hold tens of thousands each, and reading and scoring every one cost
most of a recall. A list longer than this was cut: the keyword index estimates the word's count
from how densely it fills the rows it covers (``index.keywords``). Lists the store follows after
its own commits may grow past it (the newest rows join them)."""


class Postings(NamedTuple):
    """Each query word's rowids, ascending (the newest ``DOCLIST_CAP`` + 1 at most); ``exact``:
    only rows of the places asked for (else filter them)."""

    lists: list[np.ndarray]
    exact: bool


# ---- what a commit changed (handed to listeners after COMMIT) ---------------------------------
@dataclass(frozen=True)
class EpisodesAdded:
    rows: list[EpisodeColumnRow]
    place_keys: list[int]  # each row's space key
    lengths: list[int]  # each row's number of index words


@dataclass(frozen=True)
class EpisodesDeleted:
    ids: list[int]


@dataclass(frozen=True)
class MemoryAdded:
    id: int
    scope: str
    status: str
    length: int
    supersedes: int | None


@dataclass(frozen=True)
class MemoryChanged:
    id: int
    scope: str
    status: str
    fields: frozenset[str]  # which fields were set


@dataclass(frozen=True)
class MemoriesDeleted:
    ids: list[int]


@dataclass(frozen=True)
class MemoriesArchived:
    ids: list[int]
    scopes: list[str]  # each one's scope


@dataclass(frozen=True)
class PlacesDeleted:
    names: list[str]  # places hard-forgotten: a later line there gets a new key


def quantise(vecs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Second vectors (``save_query_vectors``) in their compact form, as stored and as held in memory:
    each row as int8 of its largest magnitude, and those magnitudes (a cosine off by ~0.005 at most)."""
    v = np.asarray(vecs, np.float32).reshape(len(vecs), -1)
    top = np.abs(v).max(axis=1) if len(v) else np.zeros(0, np.float32)
    top = np.where(top > 0, top, 1.0).astype(np.float32)
    return np.rint(v / top[:, None] * 127).astype(np.int8), top


def normalise(vecs: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (a zero row stays zero), float32."""
    vecs = np.asarray(vecs, np.float32)
    norms = np.linalg.norm(vecs, axis=-1, keepdims=True)
    return vecs / np.where(norms == 0, 1, norms)


def int8_factor(first: np.ndarray) -> float:
    """The one factor of a model's int8 codes (issue 33), fixed by the first unit vectors saved: codes =
    round(value * factor), clipped to ±127, so the inner product of codes is the cosine times the
    factor. It is 127 / (1.5 times their largest component, at least 4 / sqrt(dim)): unit vectors of a
    few hundred dimensions keep every component well under that (multilingual-e5: at most 0.19 of
    18,709 lines; the floor is 0.20 at 384 dimensions), and a rare larger one is clipped."""
    top = float(np.abs(first).max()) if first.size else 0.0
    return 127.0 / min(1.0, max(1.5 * top, 4.0 / math.sqrt(first.shape[-1])))


def int8_codes(unit: np.ndarray, factor: float) -> np.ndarray:
    """Unit vectors as their int8 codes under ``factor``: what the store keeps and the index searches."""
    return np.clip(np.rint(unit * factor), -127, 127).astype(np.int8)


def out_of_place_order(place: str, pairs: Sequence[tuple[int, int]], stored: tuple[int, int] | None
                       ) -> StoreError | None:
    """The error (``restore_out_of_order``) for restoring the (sequence number, id) ``pairs`` (sorted)
    in ``place`` when their ids do not rise with their numbers, among themselves or (``stored``: a
    pair whose neighbours in the place's stored lines say otherwise) beside the place's lines: in a
    place ids rise with sequence numbers (a line is appended with the next of both), which its reads
    past a cursor rely on. Only a merge of two copies of one store that went on apart can break it."""
    bad = next(((s, i) for (_, i0), (s, i) in zip(pairs, pairs[1:]) if i < i0), stored)
    if bad is None:
        return None
    return StoreError(f"the episode {bad[1]} would stand out of {place!r}'s order at the sequence number"
                      f" {bad[0]}: in a place ids rise with sequence numbers (a bundle from a copy of this"
                      " store that went on apart?)", code="restore_out_of_order", place=place, seq=bad[0])


class CodesPage(NamedTuple):
    """A page of stored int8 codes (``vector_codes_page``): ids ascending, a code row each, and each
    one's group (space or scope) and status as an index into the page's ``groups`` and ``statuses``
    (a million rows are read at open: arrays, not a tuple each)."""

    ids: np.ndarray  # int64
    codes: np.ndarray  # int8, (n, dim)
    groups: list[str]
    group_at: np.ndarray  # int64, into ``groups``
    statuses: list[str]
    status_at: np.ndarray  # int64, into ``statuses``


P = TypeVar("P", KeywordPage, CodesPage)


async def pages_ahead(read: Callable[[int], Awaitable[P]]) -> AsyncGenerator[P, None]:
    """The pages ``read(after)`` gives, from the first past 0 to the first empty one, each next page
    asked for before this one is handed out: the store reads it (on its reader's thread, a page in
    one step without the GIL) while the caller files this one. A caller that stops early, or fails,
    leaves no read behind (use it in ``contextlib.aclosing``)."""
    page = await read(0)
    while len(page.ids):
        following = asyncio.ensure_future(read(int(page.ids[-1])))
        try:
            await asyncio.sleep(0)  # its first step: the read handed to the store's thread, not just planned
            yield page
        except BaseException:  # the caller's error, or the generator closed early
            following.cancel()
            await asyncio.gather(following, return_exceptions=True)
            raise
        page = await following


@dataclass(frozen=True)
class VectorsSaved:
    model: str
    kind: str  # 'e' or 'm'
    rows: list[EmbedRow]
    vectors: np.ndarray
    # the rows' int8 codes as stored, and the model's factor (None: a store that keeps none, as for
    # second vectors: the index makes them itself)
    codes: np.ndarray | None = None
    factor: float | None = None


Change = (EpisodesAdded | EpisodesDeleted | MemoryAdded | MemoryChanged | MemoriesDeleted | MemoriesArchived
          | PlacesDeleted | VectorsSaved)
Listener = Callable[[Change], None]


class Writes(Protocol):
    """What one transaction offers (``Store.transaction()``): its writes commit together or not at all,
    and its reads (``cursor``, ``existing``, ``all_versions``) see what it wrote so far."""

    async def add_episodes(self, episodes: Sequence[Episode],
                           prepared: Sequence[tuple[str, int]] | None = None) -> list[int]: ...
    async def add_memory(self, memory: Memory, *, supersedes: int | None = None) -> int: ...
    async def set_memory_fields(self, memory_id: int, **fields: Any) -> None: ...
    async def drop_sources(self, memory_ids: Sequence[int]) -> None: ...
    async def delete_memories(self, ids: Sequence[int]) -> list[int]: ...
    async def delete_episodes(self, ids: Sequence[int]) -> list[int]: ...
    async def save_vectors(self, model: str, kind: str, rows: Sequence[EmbedRow],
                           vectors: np.ndarray) -> None: ...
    async def save_query_vectors(self, model: str, kind: str, rows: Sequence[EmbedRow],
                                 vectors: np.ndarray) -> None: ...
    async def drop_vectors(self, model: str) -> None: ...
    async def cursor(self, name: str) -> int: ...
    async def set_cursor(self, name: str, value: int) -> None: ...
    # hard forgetting and metabolism (issue 14)
    async def erase(self, episode_ids: Sequence[int], memory_ids: Sequence[int], *,
                    people: Sequence[str] = (), places: Sequence[str] = ()
                    ) -> tuple[list[int], list[int]]: ...
    async def existing(self, table: str, ids: Sequence[int]) -> list[int]: ...
    async def all_versions(self, ids: Sequence[int]) -> list[int]: ...
    async def set_strengths(self, rows: Sequence[tuple[int, float, float, str]]) -> None: ...
    async def archive(self, ids: Sequence[int]) -> list[tuple[int, str]]: ...
    async def keep_apart(self, ids: Sequence[int]) -> None: ...
    async def merge_memories(self, merged: Memory, originals: Sequence[int]) -> int | None: ...
    async def save_job_run(self, job: str, record: dict[str, Any]) -> None: ...
    # the learned ranking (issue 32): its state, the recent recalls' feedback rows added and dropped
    async def save_ranking(self, name: str, state: dict[str, Any] | None,
                           recalls: Sequence[tuple[int, str, dict[str, Any]]] = (),
                           dropped: Sequence[int] = ()) -> None: ...
    # the soul bundle's import (``memory/bundle``): rows as they were, ids, order and history kept
    async def restore_episodes(self, episodes: Sequence[Episode],
                               prepared: Sequence[tuple[str, int]] | None = None) -> None: ...
    async def restore_memories(self, memories: Sequence[tuple[Memory, int]]) -> None: ...
    async def restore_superseded(self, rows: Sequence[tuple[int, int, datetime | None]]) -> None: ...
    async def restore_names(self, aliases: Sequence[tuple[str, str, float, float]],
                            place_names: Sequence[tuple[str, str, str, float]],
                            titles: Sequence[tuple[str, str, float]]) -> None: ...
    # a whole store copied into another (``store/copying``): a model's int8 factor as the source fixed it
    async def keep_vector_scale(self, model: str, factor: float) -> None: ...


# ---- the reads, by who needs them (a read two roles need is named in both; a backend writes it once)
class RecallReads(Protocol):
    """What recall and the in-memory indexes it searches read (``recall/``, ``index/``)."""

    async def get_episodes(self, ids: Sequence[int]) -> dict[int, Episode]: ...
    async def get_memories(self, ids: Sequence[int]) -> dict[int, Memory]: ...
    async def episode_index_words(self, ids: Sequence[int]) -> dict[int, list[str]]: ...
    async def memory_rank_rows(self, ids: Sequence[int]) -> list[MemoryRankRow]: ...
    async def episode_columns(self, after: int, limit: int) -> list[EpisodeColumnRow]: ...
    async def last_episode_id(self) -> int: ...
    async def keyed_places(self) -> dict[int, str]: ...
    async def place_key(self, place: str) -> int | None: ...
    async def episode_postings(self, words: list[str], place_keys: list[int] | None) -> Postings: ...
    async def memory_postings(self, words: list[str]) -> list[np.ndarray]: ...
    async def episode_keyword_rows(self, after: int, limit: int, ids: Sequence[int] | None = None
                                   ) -> list[KeywordRow]: ...
    async def memory_keyword_rows(self, after: int, limit: int, ids: Sequence[int] | None = None
                                  ) -> list[KeywordRow]: ...
    async def episode_keyword_page(self, after: int, limit: int) -> KeywordPage: ...
    async def vector_counts(self, model: str) -> list[tuple[str, str, int]]: ...
    async def vector_scale(self, model: str) -> float | None: ...
    async def vector_codes_page(self, model: str, kind: str, after: int, limit: int) -> CodesPage: ...
    async def vectors_page(self, model: str, kind: str, after: int, limit: int
                           ) -> tuple[list[EmbedRow], np.ndarray]: ...
    async def query_vectors_page(self, model: str, kind: str, after: int, limit: int
                                 ) -> tuple[list[int], np.ndarray]: ...
    async def query_vectors(self, model: str, kind: str, ids: Sequence[int]
                            ) -> tuple[list[int], np.ndarray]: ...


class ProgressReads(Protocol):
    """Where background work stands: what the indexer and consolidation read back of their progress."""

    async def cursor(self, name: str) -> int: ...
    async def cursors(self, prefix: str) -> dict[str, int]: ...
    async def items_to_embed(self, kind: str, after: int, limit: int) -> list[EmbedRow]: ...
    async def episode_backlog(self, after: dict[str, int]) -> list[tuple[str, int, int, float, float]]: ...
    async def episodes_after(self, place: str, after: int, limit: int) -> list[Episode]: ...


class PeopleReads(Protocol):
    """People's names: every name a person went by, and the one each place knows them by."""

    async def aliases(self, person: str) -> list[str]: ...
    async def people_named(self, name: str) -> list[str]: ...
    async def people_named_in(self, place: str, name: str) -> list[str]: ...
    async def people_mentioned_in(self, place: str, text: str) -> list[str]: ...
    async def names_in_place(self, place: str, people: Sequence[str]) -> dict[str, str]: ...


class DayReads(Protocol):
    """The bot's days and its sense of time (issue 13): the diary, the self-image, when things were said."""

    async def episodes_between(self, start: datetime, end: datetime, limit: int) -> list[Episode]: ...
    async def memory_ids_of_kind(self, kind: str, status: str = "active", *, after: datetime | None = None,
                                 before: datetime | None = None, latest: int = 0) -> list[int]: ...
    async def last_time_with(self, actor: str, before: datetime | None = None,
                             place: str | None = None) -> datetime | None: ...
    async def last_episode_time(self, place: str, before: datetime | None = None) -> datetime | None: ...
    async def last_heard(self) -> datetime | None: ...


class MetabolismReads(Protocol):
    """What fading and merging read (issue 14): strengths, one scope's memories, pairs kept apart."""

    async def strength_rows(self, since: int = 0, limit: int = 100_000) -> list[tuple[Any, ...]]: ...
    async def strength_of(self, ids: Sequence[int]) -> dict[int, tuple[float, float, str]]: ...
    async def scope_memories(self, scope: str, kinds: Sequence[str]) -> list[tuple[int, str]]: ...
    async def memory_scopes(self) -> list[str]: ...
    async def memory_vectors(self, model: str, ids: Sequence[int]) -> dict[int, bytes]: ...
    async def kept_apart(self, ids: Sequence[int]) -> set[tuple[int, int]]: ...


class ForgettingReads(Protocol):
    """What a hard forget reaches (issue 14): along provenance, and by person or place."""

    async def all_versions(self, ids: Sequence[int]) -> list[int]: ...
    async def memories_citing(self, episode_ids: Sequence[int]) -> list[int]: ...
    async def source_ids(self, memory_ids: Sequence[int]) -> list[int]: ...
    async def episodes_where(self, *, actor: str | None = None, place: str | None = None,
                             mentions: Sequence[str] = ()) -> list[tuple[int, str]]: ...
    async def lines_of(self, actor: str, place: str, limit: int) -> list[int]: ...
    async def memories_mentioning(self, names: Sequence[str]) -> list[tuple[int, str]]: ...
    async def names_holding(self, name: str) -> list[tuple[str, str]]: ...
    async def memories_where(self, *, subject: str | None = None, scope: str | None = None) -> list[int]: ...


class BrowseReads(Protocol):
    """Pages and counts for browsing: all the dashboard reads (``Engram.browser()``), ``/mem list``,
    a memory's versions and the store's counts."""

    async def list_memories(self, vis: Visibility | None = None, *, scope: str | None = None,
                            kind: str | None = None, status: str | None = "active", place: str | None = None,
                            people: Sequence[str] = (), named: str = "", text: str | None = None,
                            limit: int = 10, offset: int = 0) -> tuple[list[Memory], int]: ...
    async def versions(self, memory_id: int) -> list[int]: ...
    async def place_episodes(self, place: str, limit: int = 50, offset: int = 0) -> list[Episode]: ...
    async def episodes_around(self, episode: Episode, before: int = 2, after: int = 2) -> list[Episode]: ...
    async def memory_counts(self, by: str) -> dict[str, int]: ...
    async def episodes_per_day(self, place: str | None = None) -> list[tuple[str, int]]: ...
    async def count_episodes(self) -> int: ...
    async def count_place_episodes(self, place: str, before_seq: int | None = None) -> int: ...
    async def has_place(self, place: str) -> bool: ...
    async def places(self) -> list[tuple[str, int, float]]: ...
    async def keyed_places(self) -> dict[int, str]: ...
    async def place_titles(self) -> dict[str, str]: ...
    async def people(self) -> list[tuple[str, str, int]]: ...
    async def people_named(self, name: str) -> list[str]: ...
    async def memories_about(self, limit: int) -> list[Memory]: ...
    async def count_memories_about(self) -> int: ...
    async def talks(self, limit: int) -> list[tuple[str, str, int]]: ...
    async def count_talks(self) -> int: ...
    async def counts(self) -> dict[str, int]: ...
    async def job_runs(self) -> dict[str, dict[str, Any]]: ...


class BundleReads(Protocol):
    """Everything, in a stable order, for the soul bundle (``memory/bundle``): each page in id order, each
    table sorted; unfiltered (a place's export asks ``scopes.visibility`` what it may hold)."""

    async def episodes_page(self, after: int, limit: int) -> list[Episode]: ...
    async def memories_page(self, after: int, limit: int) -> list[tuple[Memory, int]]: ...  # (memory, root)
    async def alias_rows(self) -> list[tuple[str, str, float, float]]: ...
    async def place_name_rows(self) -> list[tuple[str, str, str, float]]: ...
    async def place_title_rows(self) -> list[tuple[str, str, float]]: ...
    async def place_names(self) -> list[str]: ...
    async def kept_apart_pairs(self) -> list[tuple[int, int]]: ...
    async def cursors(self, prefix: str) -> dict[str, int]: ...
    async def job_runs(self) -> dict[str, dict[str, Any]]: ...
    async def count_episodes(self) -> int: ...
    async def counts(self) -> dict[str, int]: ...


class JobRuns(Protocol):
    """The background jobs' run records (what ``scheduler.JobRecords`` asks for): the part of the store
    ``Engram.job_records()`` hands out. Not memory: a run is recorded even once the check in the
    background found the file damaged (the dashboard shows the failed check from it), so it is saved
    here, not in a transaction of ``Writes``."""

    async def job_runs(self) -> dict[str, dict[str, Any]]: ...
    async def save_job_run(self, job: str, record: dict[str, Any]) -> None: ...


class RankingState(Protocol):
    """What the learned ranking keeps (``memory/recall/ranking.py``): named JSON states and the recent
    recalls' feedback rows (id, place, record), a place's erased with it (``Writes.erase``)."""

    async def ranking_state(self, name: str) -> dict[str, Any] | None: ...
    async def recall_feedback(self) -> list[tuple[int, str, dict[str, Any]]]: ...


class Store(RecallReads, ProgressReads, PeopleReads, DayReads, MetabolismReads, ForgettingReads, BrowseReads,
            BundleReads, JobRuns, RankingState, Protocol):
    """Episodes (append-only), memories with versions and sources, vectors by model, cursors and
    keyword postings: every role's reads, and one door for writes, ``transaction()``."""

    path: Path  # where the store lives (the bot's data folder holds it: diaries, identity)

    @property
    def read_only(self) -> bool: ...

    async def close(self) -> None: ...
    def listen(self, listener: Listener) -> None: ...
    def transaction(self) -> AbstractAsyncContextManager[Writes]: ...
    async def append_episodes(self, episodes: Sequence[Episode], prepared: Sequence[tuple[str, int]]
                              ) -> list[int] | None:
        """Recording's shortcut: ``episodes`` added as a transaction of their own would add them, in
        fewer steps where the store can (SQLite: one trip to its writer thread instead of three);
        None, with nothing written, where it cannot this time: then use a ``transaction``."""
        ...
    def turn(self, name: str) -> AbstractAsyncContextManager[bool]:
        """Whether this instance has the turn ``name`` (held to the block's end): False while another
        instance on the same store holds it (consolidating a place, embedding a model's new items: one
        batch at a time). SQLite: always this one's (one process writes its file; another's batch is
        caught at commit, ``expect``)."""
        ...

    # the file itself
    async def integrity(self) -> list[str]: ...
    async def checkpoint(self) -> bool: ...
    async def vacuum(self) -> tuple[int, int]: ...
    async def check(self) -> dict[str, int]:
        """The full check of the file for damage (found: raised, and no more writes)."""
        ...
