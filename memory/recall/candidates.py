"""Recall's candidates: the pool (keyword and vector hits and their neighbours), its columns, and
reading the hits from the store at the end.

The audience's visibility is applied by the store and the vector index while candidates are
gathered (before ranking); every candidate is checked against it once more before it is ranked,
and every hit once more when it is read from the file to be returned.

Episodes' columns come from the in-memory ``index.episode_columns`` and the words each holds from the
query words' postings (which rows hold each word), so a candidate episode is never read from the
file unless it is returned. Memories (few, and changeable) are read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import tzinfo
from functools import lru_cache
from typing import Any

import numpy as np

from ..clock import DEFAULT_BOUNDARY_HOUR
from ..index import Indexes
from ..index.episode_columns import EpisodeColumns
from ..model import Episode, Hit, Memory, timestamp, zone_minutes
from ..scopes import Visibility
from ..store import MemoryRankRow, Store
from ..text.words import MONTH_WORDS, name_words, query_words, text_shape, word_set


@dataclass(frozen=True)
class RecallSettings:
    """How wide recall looks. The defaults keep ~90 % of the evidence in the pool on LoCoMo."""

    pool: int = 35  # candidates taken from each route (50 gave the same LoCoMo recall, 30 less)
    seeds: int = 10  # best hits of each route whose neighbours join the pool
    radius: int = 2  # how many places either side count as neighbours
    recency_days: float = 30.0  # the recency feature halves every this many days
    strength_days: float = 30.0  # a memory's strength halves for every this many days it is not recalled
    time_windows: bool = True  # a query naming a time ("yesterday", "上周末") prefers items inside it
    tz: tzinfo | None = None  # the zone those windows' days are counted in (None: UTC)
    boundary_hour: int = DEFAULT_BOUNDARY_HOUR  # and the hour they end at (the diary's, ``clock.day_of``)


@dataclass
class Columns:
    """What the features need of each candidate, in pool order (episodes and memories alike)."""

    time: np.ndarray  # seconds since 1970; NaN: no time
    tz: np.ndarray  # the time's zone, minutes east of UTC
    section: np.ndarray  # a number per (space, section) in the pool; -1: a memory
    seq: np.ndarray
    shape: np.ndarray  # ``text.text_shape``
    image: np.ndarray
    own: np.ndarray  # the bot's own line
    names: list[str]  # the speaker ('' for a memory)
    strength: np.ndarray
    importance: np.ndarray
    words: list[str]  # the query's words
    found: np.ndarray  # found[w, j]: candidate j holds words[w]
    # a memory's last recall (NaN: never; episodes too) and when its stored strength was set
    # (its last recall, else its creation): strength fades from then (``metabolism.faded``)
    recalled: np.ndarray | None = None
    strength_since: np.ndarray | None = None

    @classmethod
    def of_items(cls, items: Sequence[Episode | Memory], words: list[str]) -> Columns:
        """Columns worked out from the items themselves (a hand-made pool)."""
        rows = [_episode_facts(it) if isinstance(it, Episode) else _memory_facts(it) for it in items]
        time, tz, place, seq, shape, image, own, names, strength, importance, held = (
            list(c) for c in zip(*rows)) if rows else ([] for _ in range(11))
        number: dict[Any, int] = {}
        section = [-1 if p is None else number.setdefault(p, len(number)) for p in place]
        found = np.array([[w in h for h in held] for w in words], bool).reshape(len(words), len(items))
        recalled = [timestamp(it.last_recalled) if isinstance(it, Memory) else None for it in items]
        since = [max(timestamp(it.last_recalled) or 0.0, timestamp(it.created_at) or 0.0)
                 if isinstance(it, Memory) else None for it in items]  # a new version: from its making
        return cls(np.array(time, np.float64), np.array(tz, np.int64), np.array(section, np.int64),
                   np.array(seq, np.int64), np.array(shape, np.int64), np.array(image, bool),
                   np.array(own, bool), names,
                   np.array(strength, np.float64), np.array(importance, np.float64), words, found,
                   _stamps(recalled), _stamps(since))


def _stamps(values: list[float | None]) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in values], np.float64)


def _episode_facts(ep: Episode) -> tuple[Any, ...]:
    t = ep.time
    return (np.nan if t is None else timestamp(t), zone_minutes(t) if t else 0, (ep.place, ep.section or 0),
            ep.seq or 0, text_shape(ep.content), ep.kind == "image" or bool(ep.meta.get("image")),
            ep.kind == "message_out", ep.actor_name, 1.0, 0.5,
            word_set(ep.content) | name_words(ep.actor_name))


def _memory_facts(m: Memory) -> tuple[Any, ...]:
    t = timestamp(m.valid_from or m.created_at)
    return (np.nan if t is None else t, 0, None, 0, text_shape(m.text), False, False, "",
            m.strength, m.importance, word_set(m.text))


@dataclass
class Pool:
    """The candidates as parallel lists, one entry each; their ``cols`` as arrays.

    ``items``: the objects at hand, by position (a hand-made pool's all; recall's are read for
    the hits only, by ``load_hits``).
    """

    kinds: list[str] = field(default_factory=list)  # 'e' or 'm'
    ids: list[int] = field(default_factory=list)
    kw: list[float] = field(default_factory=list)  # BM25, 0 when the keyword route missed it
    cos: list[float | None] = field(default_factory=list)  # None: no vector
    both: list[bool] = field(default_factory=list)  # found by the keyword and the vector route
    # cosine to the item embedded as a query (``embedders.as_query_model``); None: no such vector
    cos_qq: list[float | None] = field(default_factory=list)
    cols: Columns | None = None
    items: dict[int, Episode | Memory] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.ids)

    def add_item(self, item: Episode | Memory, kw: float = 0.0, cos: float | None = None,
                 both: bool = False) -> None:
        """Add a hand-made candidate (its columns are worked out from it)."""
        self.items[len(self.ids)] = item
        self.kinds.append("e" if isinstance(item, Episode) else "m")
        self.ids.append(item.id)  # type: ignore[arg-type]
        self.kw.append(kw)
        self.cos.append(cos)
        self.cos_qq.append(None)
        self.both.append(both)
        self.cols = None

    def columns(self, words: list[str]) -> Columns:
        """The columns, with which of ``words`` each candidate holds (a hand-made pool's worked
        out again for other words; recall's were gathered for its query's words)."""
        if self.cols is None or self.cols.words != words and len(self.items) == len(self):
            self.cols = Columns.of_items([self.items[j] for j in range(len(self))], words)
        if self.cols.words != words:
            raise ValueError("this pool was gathered for another query")
        return self.cols

    def text(self, j: int) -> str:
        item = self.items[j]
        return item.content if isinstance(item, Episode) else item.text


async def gather_candidates(store: Store, indexes: Indexes, query: str, qvec: np.ndarray | None,
                            vis: Visibility, s: RecallSettings, include_archived: bool) -> Pool:
    """The candidate pool: keyword hits, vector hits, and the neighbours of the best of each."""
    qw = query_words(query)
    index, keywords = indexes.vectors, indexes.keywords
    postings: dict[str, np.ndarray] = {}  # each query word's episodes
    mem_postings: dict[str, np.ndarray] = {}  # and memories
    found: dict[tuple[str, int], list[Any]] = {}  # (kind, id) -> [kw, cos, routes: 1 keyword | 2 vector]
    for i, bm in await keywords.search_episodes(store, qw, vis, s.pool, postings):
        found[("e", i)] = [bm, None, 1]
    for i, bm in await keywords.search_memories(store, qw, vis, s.pool, include_archived, mem_postings):
        found[("m", i)] = [bm, None, 1]
    if qvec is not None and index is not None:
        for kind, i, sim in index.search(qvec, vis, s.pool, include_archived):
            f = found.setdefault((kind, i), [0.0, None, 0])
            f[1], f[2] = sim, f[2] | 2
    episodes = indexes.episodes
    await episodes.sync(store)
    seeds = [i for k, i in _best(found, 0, s.seeds) + _best(found, 1, s.seeds) if k == "e"]
    for i in episodes.near(list(dict.fromkeys(seeds)), s.radius):
        found.setdefault(("e", i), [0.0, None, 0])
    mem_rows = {r.id: r for r in await store.memory_rank_rows([i for k, i in found if k == "m"])}
    keep = _visible(vis, episodes, found, mem_rows, include_archived)
    pool = Pool([k[0] for k in keep], [k[1] for k in keep], [found[k][0] for k in keep],
                [found[k][1] for k in keep], [found[k][2] == 3 for k in keep])
    pool.cols = await _columns(store, episodes, pool, mem_rows, qw, postings, mem_postings)
    if qvec is not None and index is not None:
        todo = [j for j, c in enumerate(pool.cos) if c is None]
        for j, cos in zip(todo, index.similarities([(pool.kinds[j], pool.ids[j]) for j in todo], qvec)):
            pool.cos[j] = cos
    if qvec is not None and indexes.second is not None:  # each one's cosine to its item embedded as a query
        is_m, ids = np.array([k == "m" for k in pool.kinds], bool), np.array(pool.ids, np.int64)
        pool.cos_qq = _nones(await indexes.second.cosines_for(store, is_m, ids, qvec))
    return pool


def _nones(values: np.ndarray) -> list[float | None]:
    return [None if v != v else v for v in values.tolist()]  # NaN: None


def _best(found: dict[tuple[str, int], list[Any]], at: int, n: int) -> list[tuple[str, int]]:
    """The ``n`` candidates with the highest positive score ``at`` (ties in pool order)."""
    have = [(key, v[at]) for key, v in found.items() if v[at] is not None and v[at] > 0]
    return [key for key, _ in sorted(have, key=lambda kv: -kv[1])[:n]]


def _visible(vis: Visibility, episodes: EpisodeColumns, found: dict[tuple[str, int], list[Any]],
             mem_rows: dict[int, MemoryRankRow], include_archived: bool) -> list[tuple[str, int]]:
    """The candidates the audience may see, in pool order (each episode's space asked once).

    Episodes are judged by the space their columns were read with (episodes never move); an id
    the file does not hold is dropped.
    """
    places: dict[int, bool] = {-1: False}
    size = len(episodes.place)
    out = []
    for key in found:
        kind, i = key
        if kind == "e":
            sp = int(episodes.place[i]) if i < size else -1
            ok = places.get(sp)
            if ok is None:
                ok = places[sp] = vis.sees_episode(episodes.places[sp])
        else:
            r = mem_rows.get(i)
            status = None if r is None else r.status
            live = status == "active" or include_archived and status == "archived"
            ok = live and vis.sees_memory(r.scope)  # type: ignore[union-attr]
        if ok:
            out.append(key)
    return out


async def _columns(store: Store, episodes: EpisodeColumns, pool: Pool, mem_rows: dict[int, MemoryRankRow],
                   words: list[str], postings: dict[str, np.ndarray], mem_postings: dict[str, np.ndarray]
                   ) -> Columns:
    """The pool's columns: episodes' from the in-memory columns, memories' from their rows; the
    words each holds from the query words' postings."""
    n = len(pool)
    kinds = np.array([k == "m" for k in pool.kinds], bool)
    ids = np.array(pool.ids, np.int64)
    eps, mems = np.flatnonzero(~kinds), np.flatnonzero(kinds)
    e = ids[eps]
    time, tz = np.full(n, np.nan), np.zeros(n, np.int64)
    section, seq, shape = np.full(n, -1, np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64)
    image, own, strength, importance = np.zeros(n, bool), np.zeros(n, bool), np.ones(n), np.full(n, 0.5)
    recalled, since = np.full(n, np.nan), np.full(n, np.nan)
    time[eps], tz[eps] = episodes.time[e], episodes.tz[e]
    seq[eps], shape[eps] = episodes.seq[e], episodes.shape[e]
    image[eps], own[eps] = episodes.image[e], episodes.own[e]
    places = episodes.place[e].astype(np.int64) << 32 | episodes.section[e]
    section[eps] = np.unique(places, return_inverse=True)[1].reshape(-1)
    names = [""] * n
    for j, at in zip(eps.tolist(), episodes.name[e].tolist()):
        names[j] = episodes.names[at]
    rows = [mem_rows[i] for i in ids[mems].tolist()]
    if rows:
        stamps = [r.created_at if r.valid_from is None else r.valid_from for r in rows]
        time[mems] = [np.nan if t is None else t for t in stamps]
        shape[mems] = [_memory_shape(r.text) for r in rows]
        strength[mems] = [r.strength for r in rows]
        recalled[mems] = [np.nan if r.last_recalled is None else r.last_recalled for r in rows]
        # a new version keeps its last recall: its strength runs from the later of that and its making
        since[mems] = [r.created_at if r.last_recalled is None else max(r.last_recalled, r.created_at or 0.0)
                       for r in rows]
        importance[mems] = [r.importance for r in rows]
    found = np.zeros((len(words), n), bool)
    if words and len(e):
        found[:, eps] = _holding(e, [postings.get(w, _NONE) for w in words])
    if words and rows:
        found[:, mems] = _holding(ids[mems], [mem_postings.get(w, _NONE) for w in words])
    await _drop_date_only(store, found, words, eps, e, time[eps], tz[eps])
    return Columns(time, tz, section, seq, shape, image, own, names, strength, importance, words, found,
                   recalled, since)


def _holding(ids: np.ndarray, lists: list[np.ndarray]) -> np.ndarray:
    """``out[w, j]``: ``ids[j]`` is in ``lists[w]`` (the ids distinct, each list ascending).

    Short lists: each posting looked up among the ids, one search for all. Long ones (a large place's
    common words, ~50k postings for ~100 ids): the ids looked up in each list instead.
    """
    out = np.zeros((len(lists), len(ids)), bool)
    if not len(ids) or not lists:
        return out
    order = np.argsort(ids)
    ordered = ids[order]
    if sum(len(r) for r in lists) > _PER_LIST * len(lists):
        for w, rows in enumerate(lists):
            if len(rows):
                at = np.minimum(np.searchsorted(rows, ordered), len(rows) - 1)
                out[w, order] = rows[at] == ordered
        return out
    rows = np.concatenate(lists)
    term = np.repeat(np.arange(len(lists)), [len(r) for r in lists])
    pos = np.minimum(np.searchsorted(ordered, rows), len(ids) - 1)
    hit = ordered[pos] == rows
    out[term[hit], order[pos[hit]]] = True
    return out


_PER_LIST = 400  # a list's own lookups cost about as much as this many postings searched among the ids
_NONE = np.zeros(0, np.int64)
_memory_shape = lru_cache(maxsize=20_000)(text_shape)  # the same memories come back in recalls


def forget_cached_shapes() -> None:
    """Drop the cached shapes of memories' texts (keyed by text, which a forget may have erased)."""
    _memory_shape.cache_clear()


async def _drop_date_only(store: Store, found: np.ndarray, words: list[str], eps: np.ndarray,
                          e: np.ndarray, time: np.ndarray, tz: np.ndarray) -> None:
    """Un-mark the query words an episode's index holds only as its own month or year.

    An episode is indexed under its month and year too (so "in May 2023" finds it); the coverage
    features count only what its text and speaker say, so where a query word is the episode's
    own month or year its index words are read to tell which.
    """
    dates = [w for w, word in enumerate(words) if word in MONTH_WORDS or (word.isdigit() and len(word) == 4)]
    if not dates or not len(e):
        return
    months = (time * 1e6 + tz * 60_000_000).astype("datetime64[us]").astype("datetime64[M]").astype(np.int64)
    own = [(MONTH_WORDS[m % 12], str(1970 + m // 12)) for m in months.tolist()]
    doubt = {(w, j) for w in dates for j in np.flatnonzero(found[w, eps]).tolist() if words[w] in own[j]}
    if not doubt:
        return
    index_words = await store.episode_index_words(sorted({int(e[j]) for _, j in doubt}))
    for w, j in doubt:
        body = index_words.get(int(e[j]), [])[:-2]  # all but the month and the year
        found[w, eps[j]] = words[w] in body


async def load_hits(store: Store, pool: Pool, which: Sequence[int], vis: Visibility) -> list[int]:
    """Read the candidates ``which`` from the file into ``pool.items`` (memories with their
    sources); returns those still there and visible, in order."""
    eps = [pool.ids[j] for j in which if pool.kinds[j] == "e" and j not in pool.items]
    mems = [pool.ids[j] for j in which if pool.kinds[j] == "m" and j not in pool.items]
    got: dict[tuple[str, int], Episode | Memory] = {}
    if eps:
        got.update((("e", i), ep) for i, ep in (await store.get_episodes(eps)).items()
                   if vis.sees_episode(ep.place))
    if mems:
        got.update((("m", i), m) for i, m in (await store.get_memories(mems)).items()
                   if vis.sees_memory(m.scope))
    out = []
    for j in which:
        item = pool.items.get(j) or got.get((pool.kinds[j], pool.ids[j]))
        if item is not None:
            pool.items[j] = item
            out.append(j)
    return out


def hit(pool: Pool, j: int, score: float, features: dict[str, float]) -> Hit:
    return Hit(kind="episode" if pool.kinds[j] == "e" else "memory", id=pool.ids[j], text=pool.text(j),
               score=score, features=features, item=pool.items[j])
