"""Hybrid recall: keyword and vector candidates, their neighbours, features, and a ranker.

The audience's visibility is applied by the store and the vector index while candidates are
gathered (before ranking); every candidate is checked against it once more before it is returned.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from .model import Episode, Hit, Memory, aware
from .ranker import Ranker
from .scopes import Visibility
from .sqlite_store import SQLiteStore
from .text import (
    approx_tokens,
    asks_when,
    date_words,
    has_date,
    name_words,
    named_dates,
    query_words,
    word_set,
)
from .vectors import VectorIndex


@dataclass(frozen=True)
class RecallSettings:
    """How wide recall looks. The defaults keep ~90 % of the evidence in the pool on LoCoMo."""

    pool: int = 50  # candidates taken from each route
    seeds: int = 10  # best hits of each route whose neighbours join the pool
    radius: int = 2  # how many places either side count as neighbours
    recency_days: float = 30.0  # the recency feature halves every this many days


@dataclass
class Candidate:
    kind: str  # 'e' or 'm'
    id: int
    item: Episode | Memory | None = None
    kw: float = 0.0
    cos: float | None = None
    via: set[str] = field(default_factory=set)
    features: dict[str, float] = field(default_factory=dict)
    words: frozenset[str] | None = None  # its index words, when the keyword index had them

    @property
    def text(self) -> str:
        if isinstance(self.item, Episode):
            return self.item.content
        return self.item.text if self.item else ""


async def gather(store: SQLiteStore, index: VectorIndex | None, query: str, qvec: np.ndarray | None,
                 vis: Visibility, s: RecallSettings, include_archived: bool) -> list[Candidate]:
    """The candidate pool: keyword hits, vector hits, and the neighbours of the best of each."""
    qw = query_words(query)
    pool: dict[tuple[str, int], Candidate] = {}

    def cand(kind: str, i: int) -> Candidate:
        return pool.setdefault((kind, i), Candidate(kind, i))

    for i, bm in await store.keyword_episodes(qw, vis, s.pool):
        c = cand("e", i)
        c.kw, c.via = bm, c.via | {"kw"}
    for i, bm in await store.keyword_memories(qw, vis, s.pool, include_archived):
        c = cand("m", i)
        c.kw, c.via = bm, c.via | {"kw"}
    if qvec is not None and index is not None:
        for kind, i, sim in index.search(qvec, vis, s.pool, include_archived):
            c = cand(kind, i)
            c.cos, c.via = sim, c.via | {"vec"}
    await _load(store, pool)
    seeds = [c for c in _best(pool.values(), "kw", s.seeds) + _best(pool.values(), "cos", s.seeds)
             if isinstance(c.item, Episode)]
    seed_eps = {c.id: c.item for c in seeds if isinstance(c.item, Episode)}
    for i, ep in (await store.neighbours(seed_eps.values(), s.radius)).items():
        c = cand("e", i)
        c.item, c.via = ep, c.via | {"near"}
    if qvec is not None and index is not None:
        _fill_cosines(index, qvec, [c for c in pool.values() if c.cos is None])
    out = [c for c in pool.values() if c.item is not None and _visible(vis, c.item, include_archived)]
    await _index_words(store, out)
    return out


def _best(cands: object, attr: str, n: int) -> list[Candidate]:
    have = [c for c in cands if getattr(c, attr) is not None and getattr(c, attr) > 0]  # type: ignore[attr-defined]
    return sorted(have, key=lambda c: -getattr(c, attr))[:n]


async def _load(store: SQLiteStore, pool: dict[tuple[str, int], Candidate]) -> None:
    eps = await store.get_episodes([i for (k, i) in pool if k == "e"])
    mems = await store.get_memories([i for (k, i) in pool if k == "m"])
    for (k, i), c in pool.items():
        c.item = eps.get(i) if k == "e" else mems.get(i)


async def _index_words(store: SQLiteStore, cands: list[Candidate]) -> None:
    """Episodes' words as the keyword index stored them: tokenising ~200 texts again took ~20 ms."""
    eps = {c.id: c for c in cands if isinstance(c.item, Episode)}
    for i, ws in (await store.episode_index_words(list(eps))).items():
        c = eps[i]
        assert isinstance(c.item, Episode)
        # The index holds the text's words, the speaker's, then the month and year (2 words).
        if ws[-2:] == date_words(aware(c.item.time)):
            c.words = frozenset(ws[:-2])


def _fill_cosines(index: VectorIndex, qvec: np.ndarray, cands: list[Candidate]) -> None:
    for c in cands:
        c.cos = index.similarity(c.kind, c.id, qvec)


def _visible(vis: Visibility, item: Episode | Memory, include_archived: bool) -> bool:
    if isinstance(item, Episode):
        return vis.sees_episode(item.space)
    ok_status = item.status == "active" or (include_archived and item.status == "archived")
    return ok_status and vis.sees_memory(item.scope)


def featurize(cands: list[Candidate], query: str, now: datetime, s: RecallSettings) -> None:
    """Fill each candidate's features (all in [0, 1]); see ``ranker.FEATURES``."""
    if not cands:
        return
    _score_features(cands)
    _neighbour_features(cands)
    q = _QueryFacts(query)
    for c in cands:
        _item_features(c, q, now, s)
    for c in cands:  # a question turn right before lends its match to its answer
        f = c.features
        f["after_question"] = f.pop("_prev_q_mix", 0.0)
    _coverage_features(cands, q.words)


def _coverage_features(cands: list[Candidate], qwords: set[str]) -> None:
    """cov: share of the query's words in the text; wcov: in the text and its ±1 neighbours.

    Words are weighted by their rarity in the pool, so a word every candidate has counts little;
    the window catches questions whose words are split between a question turn and its answer.
    """
    sets = [_words_of(c) & qwords for c in cands]
    n = len(cands)
    idf = {w: math.log(1 + n / (1 + sum(1 for s in sets if w in s))) for w in qwords}
    total = sum(idf.values()) or 1.0
    at = {_place(c): s for c, s in zip(cands, sets) if isinstance(c.item, Episode)}
    for c, own in zip(cands, sets):
        win = own
        if isinstance(c.item, Episode):
            sp, sec, seq = _place(c)
            win = own | at.get((sp, sec, seq - 1), frozenset()) | at.get((sp, sec, seq + 1), frozenset())
        c.features["cov"] = sum(idf[w] for w in own) / total
        c.features["wcov"] = sum(idf[w] for w in win) / total


def _words_of(c: Candidate) -> frozenset[str]:
    """An item's words; an episode's include its speaker's name (as the keyword index does)."""
    if c.words is not None:
        return c.words
    if isinstance(c.item, Episode) and c.item.actor_name:
        return word_set(c.text) | name_words(c.item.actor_name)
    return word_set(c.text)


def _place(c: Candidate) -> tuple[str, int, int]:
    ep = c.item
    assert isinstance(ep, Episode)
    return ep.space, ep.section or 0, ep.seq or 0


def _score_features(cands: list[Candidate]) -> None:
    """kw/cos scaled over the pool, their mix, each route's rank, found by both."""
    # BM25 values of the two tables come from different corpus statistics: scale each on its own.
    kw_max = {k: max((c.kw for c in cands if c.kind == k), default=0.0) or 1.0 for k in ("e", "m")}
    sims = [c.cos for c in cands if c.cos is not None]
    lo, hi = (min(sims), max(sims)) if sims else (0.0, 1.0)
    span = (hi - lo) or 1.0
    for c in cands:
        kw = c.kw / kw_max[c.kind]
        cos = 0.0 if c.cos is None else (c.cos - lo) / span
        c.features = {"kw": kw, "cos": cos, "mix": (kw + cos) / 2 if sims else kw,
                      "both": 1.0 if {"kw", "vec"} <= c.via else 0.0}
    for name, attr in (("kw_rank", "kw"), ("cos_rank", "cos")):
        for c in cands:
            c.features[name] = 0.0
        for r, c in enumerate(_best(cands, attr, len(cands))):
            c.features[name] = 1.0 / (1.0 + r / 5.0)


class _QueryFacts:
    """What the query says once, reused for every candidate."""

    def __init__(self, query: str):
        self.words = set(query_words(query))
        self.years, self.months = named_dates(query)
        self.asks_when = asks_when(query)


def _item_features(c: Candidate, q: _QueryFacts, now: datetime, s: RecallSettings) -> None:
    """Shape of the text, time, speaker and bookkeeping features of one candidate."""
    f, item, text = c.features, c.item, c.text.strip()
    f["question_turn"] = 1.0 if text.endswith(("?", "？")) else 0.0
    f["length"] = min(1.0, math.log1p(approx_tokens(text)) / math.log(80))
    dated = has_date(text)
    f["has_date"] = 1.0 if dated else 0.0
    f["when_dated"] = 1.0 if dated and q.asks_when else 0.0
    f["is_memory"] = 1.0 if c.kind == "m" else 0.0
    when = item.time if isinstance(item, Episode) else (item.valid_from or item.created_at)  # type: ignore[union-attr]
    age_days = max(0.0, (aware(now) - aware(when)).total_seconds() / 86400) if when else 0.0
    f["recency"] = 0.5 ** (age_days / s.recency_days)
    f["date_match"] = _date_match(q, aware(when)) if when else 0.0
    if isinstance(item, Episode):
        named = bool(name_words(item.actor_name) & q.words) if item.actor_name else False
        f["speaker_named"] = 1.0 if named else 0.0
        f["has_image"] = 1.0 if item.kind == "image" or item.meta.get("image") else 0.0
        f["strength"], f["importance"] = 1.0, 0.5
    else:
        f["speaker_named"] = f["has_image"] = 0.0
        f["strength"], f["importance"] = min(1.0, item.strength), item.importance  # type: ignore[union-attr]


def _date_match(q: _QueryFacts, when: datetime) -> float:
    """1 when the query names the item's year and/or month (and names no other), else 0."""
    if not q.years and not q.months:
        return 0.0
    year_ok = not q.years or when.year in q.years
    month_ok = not q.months or when.month in q.months
    return 1.0 if year_ok and month_ok else 0.0


def _neighbour_features(cands: list[Candidate]) -> None:
    """Neighbours' mix (before, after, two away), the section's best mix and the boosted rank."""
    at: dict[tuple[str, int, int], Candidate] = {}
    section_best: dict[tuple[str, int], float] = {}
    for c in cands:
        if isinstance(c.item, Episode):
            ep = c.item
            at[(ep.space, ep.section or 0, ep.seq or 0)] = c
            key = (ep.space, ep.section or 0)
            section_best[key] = max(section_best.get(key, 0.0), c.features["mix"])

    def mix(key: tuple[str, int, int]) -> float:
        n = at.get(key)
        return n.features["mix"] if n else 0.0

    for c in cands:
        f = c.features
        if not isinstance(c.item, Episode):
            f["nb_prev"] = f["nb_next"] = f["nb2"] = f["_prev_q_mix"] = 0.0
            f["session_best"] = f["mix"]
            continue
        ep = c.item
        sp, sec, seq = ep.space, ep.section or 0, ep.seq or 0
        f["nb_prev"], f["nb_next"] = mix((sp, sec, seq - 1)), mix((sp, sec, seq + 1))
        f["nb2"] = max(mix((sp, sec, seq - 2)), mix((sp, sec, seq + 2)))
        prev = at.get((sp, sec, seq - 1))
        asked = prev is not None and prev.text.rstrip().endswith(("?", "？"))
        f["_prev_q_mix"] = f["nb_prev"] if asked else 0.0
        f["session_best"] = section_best.get((sp, sec), 0.0)
    boosted = sorted(cands, key=lambda c: -(c.features["mix"] + 0.5 * max(
        c.features["nb_prev"], c.features["nb_next"])))
    for r, c in enumerate(boosted):
        c.features["mix_rank"] = 1.0 / (1.0 + r / 5.0)


def rank(cands: list[Candidate], ranker: Ranker, k: int) -> list[Hit]:
    """The ``k`` best candidates as hits, each with its features and score."""
    scores = ranker.score([c.features for c in cands])
    best = sorted(zip(scores, cands), key=lambda t: -t[0])[:k]
    return [Hit(kind="episode" if c.kind == "e" else "memory", id=c.id, text=c.text, score=sc,
                features=dict(c.features), item=c.item) for sc, c in best]  # type: ignore[arg-type]
