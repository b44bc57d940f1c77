"""Features of recall's candidates (all in [0, 1]) and the ranking that turns them into hits.

The pool's features are a matrix, a row per feature and a column per candidate, worked out with
list comprehensions over the candidates and a few numpy calls on whole blocks; a feature dict is
built only for the hits returned (a dict per candidate cost ~40 µs a candidate). Every feature and
score is the same, to the last bit, as when each candidate had its dict.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from itertools import chain, repeat

import numpy as np

from .model import Episode, Hit, Memory, aware
from .ranker import Ranker, score_all
from .recall import Candidate, RecallSettings
from .text import approx_tokens, asks_when, has_date, name_words, named_dates, query_words, word_set

# The order of a hit's features dict, hence of a LinearRanker's sum over it: the order the features
# were first computed in, kept so that scores stay the same to the last bit.
COLUMNS = (
    "kw", "cos", "mix", "both", "kw_rank", "cos_rank", "nb_prev", "nb_next", "nb2", "session_best",
    "mix_rank", "question_turn", "length", "has_date", "when_dated", "is_memory", "recency",
    "date_match", "speaker_named", "has_image", "strength", "importance", "after_question", "cov",
    "wcov",
)
_SEQ = 1 << 40  # a place's key: its section's number in the pool * _SEQ + seq (far below 2**39)
_DAY = 86400


@dataclass
class Features:
    """A candidate pool's features: ``matrix[i, j]`` is feature ``COLUMNS[i]`` of ``cands[j]``."""

    cands: list[Candidate]
    matrix: np.ndarray

    def rows(self, which: np.ndarray) -> list[dict[str, float]]:
        """The features of the candidates ``which`` as dicts, in ``COLUMNS`` order."""
        return [dict(zip(COLUMNS, r)) for r in self.matrix[:, which].T.tolist()]


def featurize(cands: list[Candidate], query: str, now: datetime, s: RecallSettings) -> Features:
    """The pool's features (all in [0, 1]); see ``ranker.FEATURES``."""
    m = np.zeros((len(COLUMNS), len(cands)))
    if not cands:
        return Features(cands, m)
    q, pool = _QueryFacts(query), _Pool(cands)
    # numpy calls are few and on whole blocks: right after gather each costs ~10-20 µs (cold caches)
    _score_features(pool, m)
    _neighbour_features(pool, m)
    _item_features(pool, q, now, s, m)
    # a question turn right before lends its match to its answer
    prev = pool.near[1]
    asked = (prev >= 0) & (m[_ROW["question_turn"], prev] == 1.0)
    m[_ROW["after_question"], pool.eps] = np.where(asked, m[_ROW["nb_prev"], pool.eps], 0.0)
    _coverage_features(pool, q.words, m)
    return Features(cands, m)


_ROW = {name: i for i, name in enumerate(COLUMNS)}


def _rows(*names: str) -> list[int]:
    return [_ROW[n] for n in names]


class _QueryFacts:
    """What the query says once, reused for every candidate."""

    def __init__(self, query: str):
        self.words = set(query_words(query))
        self.years, self.months = named_dates(query)
        self.asks_when = asks_when(query)

    def date_match(self, when: datetime) -> float:
        """1 when the query names the item's year and/or month (and names no other), else 0."""
        year_ok = not self.years or when.year in self.years
        month_ok = not self.months or when.month in self.months
        return 1.0 if year_ok and month_ok else 0.0


_OFFSETS = np.array([[-2], [-1], [1], [2]])


class _Pool:
    """The candidates split into episodes and memories; episodes' sections and neighbours."""

    def __init__(self, cands: list[Candidate]):
        self.cands, self.n = cands, len(cands)
        self.is_m = np.array([c.kind == "m" for c in cands], bool)
        # gather loads an episode for every 'e' candidate and a memory for every 'm' one
        self.eps, self.mems = np.flatnonzero(~self.is_m), np.flatnonzero(self.is_m)
        self.episodes: list[Episode] = [cands[i].item for i in self.eps.tolist()]  # type: ignore[misc]
        self.memories: list[Memory] = [cands[i].item for i in self.mems.tolist()]  # type: ignore[misc]
        self.section, self.near = self._neighbours()

    def _neighbours(self) -> tuple[np.ndarray, np.ndarray]:
        """Each episode's section number, and the pool rows of the episodes 2 and 1 places before
        and 1 and 2 after it in its section (-1: none in the pool)."""
        number: dict[tuple[str, int], int] = {}
        section = np.array([number.setdefault((e.space, e.section or 0), len(number))
                            for e in self.episodes], np.int64)
        places = section * _SEQ + np.array([e.seq or 0 for e in self.episodes], np.int64)
        order = np.argsort(places, kind="stable")
        ordered, wanted = places[order], places + _OFFSETS
        # the last of equal places wins, as it did when a dict mapped places to candidates
        pos = np.maximum(np.searchsorted(ordered, wanted, side="right") - 1, 0)
        return section, np.where(ordered[pos] == wanted, self.eps[order[pos]], -1)


def _score_features(pool: _Pool, m: np.ndarray) -> None:
    """kw/cos scaled over the pool, their mix, each route's rank, found by both."""
    cands, is_m = pool.cands, pool.is_m
    raw_kw = np.array([c.kw for c in cands], np.float64)
    raw_cos = np.array([c.cos for c in cands], np.float64)  # None is NaN
    # BM25 values of the two tables come from different corpus statistics: scale each on its own.
    kw = raw_kw / np.where(is_m, _top_or_one(raw_kw[is_m]), _top_or_one(raw_kw[~is_m]))
    has_cos = ~np.isnan(raw_cos)
    sims = raw_cos[has_cos]
    lo, hi = (float(sims.min()), float(sims.max())) if len(sims) else (0.0, 1.0)
    cos = np.where(has_cos, (raw_cos - lo) / ((hi - lo) or 1.0), 0.0)
    m[_rows("kw", "cos")] = kw, cos
    m[_ROW["mix"]] = (kw + cos) / 2 if len(sims) else kw
    m[_ROW["both"]] = [{"kw", "vec"} <= c.via for c in cands]
    m[_ROW["kw_rank"]], m[_ROW["cos_rank"]] = _rank_of(raw_kw), _rank_of(np.where(has_cos, raw_cos, 0.0))


def _top_or_one(values: np.ndarray) -> float:
    return (float(values.max()) if len(values) else 0.0) or 1.0


def _rank_of(values: np.ndarray) -> np.ndarray:
    """1 / (1 + r / 5) for the r-th largest positive value (ties in pool order), 0 for the rest."""
    pos = np.flatnonzero(values > 0)
    out = np.zeros(len(values))
    out[pos[np.argsort(-values[pos], kind="stable")]] = 1.0 / (1.0 + np.arange(len(pos)) / 5.0)
    return out


def _neighbour_features(pool: _Pool, m: np.ndarray) -> None:
    """Neighbours' mix (before, after, two away), the section's best mix and the boosted rank."""
    mix = m[_ROW["mix"]]
    two_before, before, after, two_after = np.append(mix, 0.0)[pool.near]  # row -1: no neighbour
    m[np.ix_(_rows("nb_prev", "nb_next", "nb2"), pool.eps)] = before, after, np.maximum(two_before, two_after)
    section_best = np.zeros(int(pool.section.max(initial=-1)) + 1)
    np.maximum.at(section_best, pool.section, mix[pool.eps])
    m[_ROW["session_best"]] = mix  # a memory has no section: its own mix
    m[_ROW["session_best"], pool.eps] = section_best[pool.section]
    boost = mix + 0.5 * np.maximum(m[_ROW["nb_prev"]], m[_ROW["nb_next"]])
    m[_ROW["mix_rank"], np.argsort(-boost, kind="stable")] = 1.0 / (1.0 + np.arange(pool.n) / 5.0)


# question_turn, length and has_date for each code of ``_text_code``: (tokens * 2 + question) * 2
# + dated, tokens capped at 80 (length is log1p(tokens) / log(80), capped at 1)
_TEXT_FACTS = np.array([(q, min(1.0, math.log1p(t) / math.log(80)), d)
                        for t in range(81) for q in (0.0, 1.0) for d in (0.0, 1.0)], np.float64)


@lru_cache(maxsize=50_000)
def _text_code(text: str) -> int:
    """The row of ``_TEXT_FACTS`` for a text (cached: the same items come back in recalls)."""
    text = text.strip()
    question = text.endswith(("?", "？"))
    return (min(approx_tokens(text), 80) * 2 + question) * 2 + has_date(text)


def _item_features(pool: _Pool, q: _QueryFacts, now: datetime, s: RecallSettings, m: np.ndarray) -> None:
    """Shape of the text, time, speaker and bookkeeping features."""
    eps, mems = pool.episodes, pool.memories
    rows = np.concatenate([pool.eps, pool.mems])  # lists below hold the episodes, then the memories
    texts = [e.content for e in eps] + [x.text for x in mems]
    whens = [e.time for e in eps] + [x.valid_from or x.created_at for x in mems]
    facts = _TEXT_FACTS[[_text_code(t) for t in texts]].T
    m[np.ix_(_rows("question_turn", "length", "has_date"), rows)] = facts
    if q.asks_when:
        m[_ROW["when_dated"]] = m[_ROW["has_date"]]
    m[_ROW["is_memory"]] = pool.is_m
    m[_ROW["recency"], rows] = _recency(whens, now, s.recency_days)
    if q.years or q.months:
        m[_ROW["date_match"], rows] = [q.date_match(w) if w else 0.0 for w in whens]
    names = [e.actor_name for e in eps]
    named = {a: 1.0 if a and name_words(a) & q.words else 0.0 for a in set(names)}
    image = [e.kind == "image" or bool(e.meta and e.meta.get("image")) for e in eps]
    m[np.ix_(_rows("speaker_named", "has_image", "strength", "importance"), pool.eps)] = (
        [named[a] for a in names], image, [1.0] * len(eps), [0.5] * len(eps))
    if mems:
        m[np.ix_(_rows("strength", "importance"), pool.mems)] = (
            [min(1.0, x.strength) for x in mems], [x.importance for x in mems])


def _recency(whens: list[datetime | None], now: datetime, half_life: float) -> list[float]:
    """0.5 ** (age in days / half_life); an item without a time counts as new."""
    now = aware(now)
    try:
        seconds = [(now - w).total_seconds() for w in whens]  # type: ignore[operator]
    except TypeError:  # a naive time, or none
        seconds = [(now - aware(w)).total_seconds() if w else 0.0 for w in whens]
    halves = (np.maximum(0.0, np.array(seconds, np.float64) / _DAY) / half_life).tolist()
    return list(map(pow, repeat(0.5), halves))  # pow, as ** does, not numpy's: the same last bit


def _coverage_features(pool: _Pool, qwords: set[str], m: np.ndarray) -> None:
    """cov: share of the query's words in the text; wcov: in the text and its ±1 neighbours.

    Words are weighted by their rarity in the pool, so a word every candidate has counts little;
    the window catches questions whose words are split between a question turn and its answer.
    """
    sets = [w & qwords if (w := c.words) is not None else _words_of(c) & qwords for c in pool.cands]
    df = Counter(chain.from_iterable(sets))
    idf = {w: math.log(1 + pool.n / (1 + df[w])) for w in qwords}
    total, weight = sum(idf.values()) or 1.0, idf.__getitem__
    # Each set is summed in its own order, as ``sum`` over it always was (the same last bit).
    matched = [i for i, s in enumerate(sets) if s]
    cov = np.zeros(pool.n)
    cov[matched] = [sum(map(weight, sets[i])) for i in matched]
    m[_ROW["cov"]] = m[_ROW["wcov"]] = cov / total
    sets.append(frozenset())  # row -1: no neighbour
    some = np.zeros(pool.n + 1, bool)
    some[matched] = True
    at = np.stack([pool.eps, pool.near[1], pool.near[2]])
    at = at[:, some[at].any(axis=0)].tolist()  # episodes with a word in their window
    m[_ROW["wcov"], at[0]] = [sum(map(weight, sets[i] | sets[j] | sets[k])) / total for i, j, k in zip(*at)]


def _words_of(c: Candidate) -> frozenset[str]:
    """An item's words; an episode's include its speaker's name (as the keyword index does)."""
    if isinstance(c.item, Episode) and c.item.actor_name:
        return word_set(c.text) | name_words(c.item.actor_name)
    return word_set(c.text)


def rank(feats: Features, ranker: Ranker, k: int) -> list[Hit]:
    """The ``k`` best candidates as hits, each with its features and score."""
    scores = score_all(ranker, COLUMNS, feats.matrix)
    top = np.argsort(-scores, kind="stable")[:k]
    cands = [feats.cands[i] for i in top.tolist()]
    return [Hit(kind="episode" if c.kind == "e" else "memory", id=c.id, text=c.text, score=sc,
                features=f, item=c.item)  # type: ignore[arg-type]
            for c, sc, f in zip(cands, scores[top].tolist(), feats.rows(top))]
