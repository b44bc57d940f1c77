"""Features of recall's candidates (all in [0, 1]) and the ranking that turns them into hits.

The pool's features are a matrix, a row per feature and a column per candidate, worked out from
the pool's columns (``recall.Columns``: times, places, text shapes, the query words each holds)
with a few numpy calls on whole blocks; a feature dict is built only for the hits returned.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from itertools import repeat

import numpy as np

from .model import Hit, aware
from .ranker import Ranker, score_all
from .recall import Columns, Pool, RecallSettings, hit
from .text import EMPTY_SHAPE, asks_when, name_words, named_dates, query_words

# The order of a hit's features dict, hence of a LinearRanker's sum over it: the order the features
# were first computed in (a LinearRanker sums in this order).
COLUMNS = (
    "kw", "cos", "mix", "both", "kw_rank", "cos_rank", "nb_prev", "nb_next", "nb2", "session_best",
    "mix_rank", "question_turn", "length", "has_date", "when_dated", "is_memory", "recency",
    "date_match", "speaker_named", "has_image", "strength", "importance", "after_question", "cov",
    "wcov", "own", "empty", "recalled",
)
_SEQ = 1 << 40  # a place's key: its section's number in the pool * _SEQ + seq (far below 2**39)
_DAY = 86400


@dataclass
class Features:
    """A candidate pool's features: ``matrix[i, j]`` is feature ``COLUMNS[i]`` of candidate ``j``."""

    pool: Pool
    matrix: np.ndarray

    def rows(self, which: np.ndarray) -> list[dict[str, float]]:
        """The features of the candidates ``which`` as dicts, in ``COLUMNS`` order."""
        return [dict(zip(COLUMNS, r)) for r in self.matrix[:, which].T.tolist()]


def featurize(pool: Pool, query: str, now: datetime, s: RecallSettings) -> Features:
    """The pool's features (all in [0, 1]); see ``ranker.FEATURES``."""
    m = np.zeros((len(COLUMNS), len(pool)))
    if not len(pool):
        return Features(pool, m)
    q = _QueryFacts(query)
    cols = _Layout(pool, pool.columns(q.words), now)
    _item_features(cols, q, s, m)
    _score_features(pool, cols, m)
    _neighbour_features(cols, m)
    # a question turn right before lends its match to its answer
    prev = cols.near[1]
    asked = (prev >= 0) & (m[_ROW["question_turn"], prev] == 1.0)
    m[_ROW["after_question"], cols.eps] = np.where(asked, m[_ROW["nb_prev"], cols.eps], 0.0)
    _coverage_features(cols, m)
    _no_borrowing(m)
    return Features(pool, m)


_BORROWED = ("nb_prev", "nb_next", "nb2")


def _no_borrowing(m: np.ndarray) -> None:
    """Lines with no content of their own ("OK, noted", "👍") get no credit from the lines around
    them, and the bot's own lines none but for answering a question: a fact's neighbour is its
    acknowledgement, and the credit belongs to the fact. They keep what they match themselves."""
    empty, own = m[_ROW["empty"]] > 0, m[_ROW["own"]] > 0
    if not (empty.any() or own.any()):
        return
    m[np.ix_(_rows(*_BORROWED), np.flatnonzero(empty | own))] = 0.0
    m[_ROW["after_question"], empty] = 0.0
    m[_ROW["wcov"], empty | own] = m[_ROW["cov"], empty | own]


_ROW = {name: i for i, name in enumerate(COLUMNS)}


def _rows(*names: str) -> list[int]:
    return [_ROW[n] for n in names]


class _QueryFacts:
    """What the query says once, reused for every candidate."""

    def __init__(self, query: str):
        self.words = query_words(query)
        self.word_set = set(self.words)
        self.years, self.months = named_dates(query)
        self.asks_when = asks_when(query)

    def date_match(self, months: np.ndarray, timed: np.ndarray) -> np.ndarray:
        """1 where the query names the item's year and/or month (and names no other), else 0;
        ``months``: each item's months since 1970-01 in its own zone."""
        ok = timed.copy()
        if self.years:
            ok &= np.isin(1970 + months // 12, list(self.years))
        if self.months:
            ok &= np.isin(months % 12 + 1, list(self.months))
        return ok.astype(np.float64)


_OFFSETS = np.array([[-2], [-1], [1], [2]])


class _Layout:
    """The pool's columns and where its episodes (``eps``) and memories (``mems``) are, their
    neighbours and times."""

    def __init__(self, pool: Pool, cols: Columns, now: datetime):
        self.n, self.cols = len(pool), cols
        self.is_m = cols.section < 0
        self.eps, self.mems = np.flatnonzero(~self.is_m), np.flatnonzero(self.is_m)
        self.micros, self.timed = _micros(cols.time)
        self.now = _micros_of(aware(now))
        self.section = cols.section[self.eps]
        self.near = self._neighbours()

    def _neighbours(self) -> np.ndarray:
        """The pool rows of the episodes 2 and 1 places before each episode and 1 and 2 after it
        in its section (-1: none in the pool)."""
        places = self.section * _SEQ + self.cols.seq[self.eps]
        order = np.argsort(places, kind="stable")
        ordered, wanted = places[order], places + _OFFSETS
        # the last of equal places wins
        pos = np.maximum(np.searchsorted(ordered, wanted, side="right") - 1, 0)
        return np.where(ordered[pos] == wanted, self.eps[order[pos]], -1)

    def local_months(self) -> np.ndarray:
        """Each item's months since 1970-01 in its own time zone (its month and year)."""
        local = self.micros + self.cols.tz * 60_000_000
        return local.astype("datetime64[us]").astype("datetime64[M]").astype(np.int64)


def _micros(stamps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Timestamps as whole microseconds since 1970, rounded as ``datetime.fromtimestamp`` rounds
    them (so ages come out exactly as datetimes' did), and which were given (NaN: 0)."""
    timed = ~np.isnan(stamps)
    t = np.where(timed, stamps, 0.0)
    whole = np.trunc(t)  # modf, then the fraction's microseconds rounded half to even
    return whole.astype(np.int64) * 1_000_000 + np.rint((t - whole) * 1e6).astype(np.int64), timed


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def _micros_of(t: datetime) -> int:
    return (t - _EPOCH) // timedelta(microseconds=1)


def _score_features(pool: Pool, cols: _Layout, m: np.ndarray) -> None:
    """kw/cos scaled over the pool, their mix, each route's rank, found by both."""
    is_m = cols.is_m
    raw_kw = np.array(pool.kw, np.float64)
    raw_cos = np.array(pool.cos, np.float64)  # None is NaN
    # BM25 values of the two tables come from different corpus statistics: scale each on its own.
    kw = raw_kw / np.where(is_m, _top_or_one(raw_kw[is_m]), _top_or_one(raw_kw[~is_m]))
    has_cos = ~np.isnan(raw_cos)
    sims = raw_cos[has_cos]
    lo, hi = (float(sims.min()), float(sims.max())) if len(sims) else (0.0, 1.0)
    cos = np.where(has_cos, (raw_cos - lo) / ((hi - lo) or 1.0), 0.0)
    m[_rows("kw", "cos")] = kw, cos
    m[_ROW["mix"]] = (kw + cos) / 2 if len(sims) else kw
    m[_ROW["both"]] = pool.both
    m[_ROW["kw_rank"]], m[_ROW["cos_rank"]] = _rank_of(raw_kw), _rank_of(np.where(has_cos, raw_cos, 0.0))


def _top_or_one(values: np.ndarray) -> float:
    return (float(values.max()) if len(values) else 0.0) or 1.0


def _rank_of(values: np.ndarray) -> np.ndarray:
    """1 / (1 + r / 5) for the r-th largest positive value (ties in pool order), 0 for the rest."""
    pos = np.flatnonzero(values > 0)
    out = np.zeros(len(values))
    out[pos[np.argsort(-values[pos], kind="stable")]] = 1.0 / (1.0 + np.arange(len(pos)) / 5.0)
    return out


def _neighbour_features(cols: _Layout, m: np.ndarray) -> None:
    """Neighbours' mix (before, after, two away), the section's best mix and the boosted rank."""
    mix = m[_ROW["mix"]]
    two_before, before, after, two_after = np.append(mix, 0.0)[cols.near]  # row -1: no neighbour
    m[np.ix_(_rows("nb_prev", "nb_next", "nb2"), cols.eps)] = before, after, np.maximum(two_before, two_after)
    section_best = np.zeros(int(cols.section.max(initial=-1)) + 1)
    np.maximum.at(section_best, cols.section, mix[cols.eps])
    m[_ROW["session_best"]] = mix  # a memory has no section: its own mix
    m[_ROW["session_best"], cols.eps] = section_best[cols.section]
    lend = (m[_ROW["own"]] + m[_ROW["empty"]]) == 0  # see _no_borrowing
    boost = mix + 0.5 * np.maximum(m[_ROW["nb_prev"]], m[_ROW["nb_next"]]) * lend
    m[_ROW["mix_rank"], np.argsort(-boost, kind="stable")] = 1.0 / (1.0 + np.arange(cols.n) / 5.0)


# question_turn, length and has_date for each ``text.text_shape``: (tokens * 2 + question) * 2 + dated,
# tokens capped at 80 (length is log1p(tokens) / log(80), capped at 1)
_TEXT_FACTS = np.array([(q, min(1.0, math.log1p(t) / math.log(80)), d)
                        for t in range(81) for q in (0.0, 1.0) for d in (0.0, 1.0)], np.float64)


def _item_features(cols: _Layout, q: _QueryFacts, s: RecallSettings, m: np.ndarray) -> None:
    """Shape of the text, time, speaker and bookkeeping features."""
    c = cols.cols
    m[_rows("question_turn", "length", "has_date")] = _TEXT_FACTS[c.shape % EMPTY_SHAPE].T
    m[_ROW["empty"]] = c.shape >= EMPTY_SHAPE
    m[_ROW["own"]] = c.own
    if q.asks_when:
        m[_ROW["when_dated"]] = m[_ROW["has_date"]]
    m[_ROW["is_memory"]] = cols.is_m
    m[_ROW["recency"]] = _recency(cols, s.recency_days)
    if q.years or q.months:
        m[_ROW["date_match"]] = q.date_match(cols.local_months(), cols.timed)
    named = {a: 1.0 if a and name_words(a) & q.word_set else 0.0 for a in set(c.names)}
    m[_ROW["speaker_named"]] = [named[a] for a in c.names]
    m[_rows("has_image", "importance")] = c.image, c.importance
    m[_ROW["strength"]], m[_ROW["recalled"]] = _strength(cols, s)


def _strength(cols: _Layout, s: RecallSettings) -> tuple[np.ndarray, np.ndarray]:
    """A memory's strength now (it halves for every ``strength_days`` unrecalled; at most 1) and how
    recently it was recalled (0.5 ** (days since / ``recency_days``); 0: never, and for episodes)."""
    c = cols.cols
    strength = np.minimum(1.0, c.strength)
    if c.strength_since is None or c.recalled is None:
        return strength, np.zeros(cols.n)
    now = cols.now / 1e6
    since = np.where(np.isnan(c.strength_since), now, c.strength_since)
    strength = np.minimum(1.0, c.strength * 0.5 ** (np.maximum(0.0, now - since) / _DAY / s.strength_days))
    ago = np.where(np.isnan(c.recalled), np.inf, np.maximum(0.0, now - c.recalled))
    return strength, np.where(np.isinf(ago), 0.0, 0.5 ** (np.minimum(ago, 1e12) / _DAY / s.recency_days))


def _recency(cols: _Layout, half_life: float) -> list[float]:
    """0.5 ** (age in days / half_life); an item without a time counts as new."""
    # whole microseconds, as datetimes subtract: the same seconds to the last bit
    seconds = np.where(cols.timed, (cols.now - cols.micros) / 1e6, 0.0)
    halves = (np.maximum(0.0, seconds / _DAY) / half_life).tolist()
    return list(map(pow, repeat(0.5), halves))  # pow, as ** does, not numpy's: the same last bit


def _coverage_features(cols: _Layout, m: np.ndarray) -> None:
    """cov: share of the query's words in the text; wcov: in the text and its ±1 neighbours.

    Words are weighted by their rarity in the pool, so a word every candidate has counts little;
    the window catches questions whose words are split between a question turn and its answer.
    """
    found = cols.cols.found
    if not len(found):
        return
    idf = np.log(1 + cols.n / (1 + found.sum(axis=1)))
    padded = np.concatenate([found, np.zeros((len(found), 1), bool)], axis=1)  # column -1: no neighbour
    window = found[:, cols.eps] | padded[:, cols.near[1]] | padded[:, cols.near[2]]
    every = np.ones((len(found), 1), bool)
    # one sum down the words for every column, the total's too: all words found is exactly 1
    sums = (idf[:, None] * np.concatenate([found, window, every], axis=1)).sum(axis=0)
    total = sums[-1] or 1.0
    m[_ROW["cov"]] = m[_ROW["wcov"]] = sums[: cols.n] / total
    m[_ROW["wcov"], cols.eps] = sums[cols.n : -1] / total


def top(feats: Features, ranker: Ranker, k: int) -> list[tuple[int, float]]:
    """The ``k`` best candidates' positions in the pool and their scores, best first."""
    scores = score_all(ranker, COLUMNS, feats.matrix)
    best = np.argsort(-scores, kind="stable")[:k].tolist()
    return list(zip(best, scores[best].tolist()))


def hits(feats: Features, best: list[tuple[int, float]]) -> list[Hit]:
    """The candidates ``best`` as hits with their features (their items in ``pool.items``)."""
    rows = feats.rows(np.array([j for j, _ in best], np.int64))
    return [hit(feats.pool, j, sc, f) for (j, sc), f in zip(best, rows)]


def rank(feats: Features, ranker: Ranker, k: int) -> list[Hit]:
    """The ``k`` best candidates of a pool whose items are all at hand, as hits."""
    return hits(feats, top(feats, ranker, k))
