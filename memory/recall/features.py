"""Features of recall's candidates (all in [0, 1]), from one registry: ``FEATURES``.

Each feature is registered once with the step that computes it and the weight the shipped
``LinearRanker`` gives it. The pool's features are a matrix, a row per feature (in registry order)
and a column per candidate, worked out from the pool's columns (``candidates.Columns``: times,
places, text shapes, the query words each holds) with a few numpy calls on whole blocks; a feature
dict is built only for the hits returned.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone, tzinfo
from itertools import repeat

import numpy as np

from ..model import aware
from ..strength import faded
from ..text.words import EMPTY_SHAPE, asks_when, name_words, named_dates, query_words
from .candidates import Columns, Pool, RecallSettings
from .timewindow import query_window


@dataclass(frozen=True)
class Feature:
    """A feature: its name (a key of ``Hit.features``), the step that computes it, the shipped
    ``LinearRanker``'s weight, and whether that weight is set by hand (kept when weights are fitted)."""

    name: str
    step: str
    weight: float
    hand_set: bool = False


# Weights fitted by bench/locomo.py (pairwise logistic regression over recall's candidate pools) on
# all dev data: the seven LoCoMo dev conversations (questions, all five categories) and MADial's
# Chinese and English dialogue contexts, sent as the plugin sends them (each MADial question
# weighing ~4.2); cross-validated across conversations, see bench/RESULTS.md (issue 11). Hand-set:
# what no conversation benchmark can teach (LoCoMo holds no memories, and its questions are spread
# evenly over the past): memory-only features and recency; the bot's own lines and lines with no
# content of their own (LoCoMo holds no bot). A memory lacks the neighbour features an episode gets,
# and is a distilled note, so ``is_memory`` makes up for both. ``own`` and ``empty`` were set on the
# first-week set (bench/firstweek.py): what people said comes before what the bot said unless the
# bot's line holds the answer, and an acknowledgement never crowds out a fact. The order is the
# order of a hit's features dict and of a LinearRanker's sum (the steps that compute them run in
# ``_STEPS``' order).
FEATURES = (
    Feature("kw", "scores", -0.006),  # BM25, scaled to the best of its table (episodes, memories) in the pool
    Feature("cos", "scores", 1.564),  # cosine, scaled to the pool's range
    # the cosine to the item embedded as a query (``embedders.as_query_model``), scaled the same; the
    # scaled cos where an item has no such vector (yet, or with an embedder whose two kinds are one).
    # Hand-set on top of the fitted weights: a refit with it moved every weight and lost LoCoMo R@5 and
    # MADial R@10; 1.5 from a scan over 0-3 on all dev data, where LoCoMo, MADial and the time-window
    # set all hold (bench/RESULTS.md, issue 11: the item as a query)
    Feature("cos_qq", "scores", 1.500, hand_set=True),
    Feature("mix", "scores", 0.779),  # (kw + cos) / 2
    Feature("both", "scores", -0.136),  # found by the keyword and the vector route
    Feature("kw_rank", "scores", -0.073),  # 1 / (1 + r / 5) for the r-th best keyword score
    Feature("cos_rank", "scores", 0.326),  # the same for the cosine
    Feature("nb_prev", "neighbours", -0.316),  # the mix of the episode right before in its section
    Feature("nb_next", "neighbours", 0.073),  # right after
    Feature("nb2", "neighbours", 1.383),  # the better of the two two places away
    # the best mix in the candidate's section (named before "section" was the word for it; kept: it is
    # a key of Hit.features and of saved weights)
    Feature("session_best", "neighbours", 3.371),
    Feature("mix_rank", "neighbours", 1.043),  # rank by mix + half the better neighbour's
    Feature("question_turn", "item", -1.190),  # the text asks a question
    Feature("length", "item", 1.079),  # log1p(tokens) / log(80), capped at 1
    Feature("has_date", "item", 0.808),  # the text names a time
    Feature("when_dated", "item", 1.057),  # has_date, when the query asks when
    Feature("is_memory", "item", 1.000, hand_set=True),
    Feature("recency", "item", 0.100, hand_set=True),  # halves every RecallSettings.recency_days
    Feature("date_match", "item", 3.190),  # the query names the item's year and/or month
    Feature("speaker_named", "item", 0.835),  # the query names the speaker
    Feature("has_image", "item", 0.128),
    Feature("strength", "item", 0.100, hand_set=True),
    Feature("importance", "item", 0.200, hand_set=True),
    Feature("after_question", "after_question", 2.338),  # nb_prev, when that turn asks a question
    Feature("cov", "coverage", 0.286),  # share of the query's words (rarity-weighted) in the text
    Feature("wcov", "coverage", 5.005),  # the same over the text and its neighbours either side
    Feature("own", "item", -1.000, hand_set=True),  # the bot's own line
    Feature("empty", "item", -3.000, hand_set=True),  # no content of its own ("OK, noted", "👍")
    Feature("cov_rel", "relative_coverage", 0.803),  # cov over the pool's best cov
    Feature("wcov_rel", "relative_coverage", -1.706),  # wcov over the pool's best wcov
    # the item's event time lies in the window the query names ("yesterday", "上周末"); hand-set: 3.0
    # (near date_match's fitted weight) until cos_qq came, then 4.0, so that a named window weighs
    # against two cosines as it did against one (the time-window set: en .975 / zh .958 with 3.0 and no
    # cos_qq, .983 / .958 now); LoCoMo's questions that name a window name a year too, and get none
    # (bench/RESULTS.md, time windows: measured with and without)
    Feature("in_window", "window", 4.000, hand_set=True),
    # how recently a memory was injected, returned or shown (issue 14): by hand until a refit on data
    # with recall history says otherwise
    Feature("recalled", "item", 0.100, hand_set=True),
)
COLUMNS = tuple(f.name for f in FEATURES)
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
    """The pool's features (all in [0, 1]): each step of the registry, in order."""
    m = np.zeros((len(COLUMNS), len(pool)))
    if not len(pool):
        return Features(pool, m)
    q = _QueryFacts(query)
    cols = _Layout(pool, pool.columns(q.words), now)
    for step in _STEPS.values():
        step(pool, cols, q, s, m)
    return Features(pool, m)


_BORROWED = ("nb_prev", "nb_next", "nb2")


def _no_borrowing(pool: Pool, cols: _Layout, q: _QueryFacts, s: RecallSettings, m: np.ndarray) -> None:
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
        self.text = query
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
        self.when = aware(now)
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

    def local_months(self, tz: tzinfo | None = None) -> np.ndarray:
        """Each item's months since 1970-01 (its month and year): on the calendar of ``tz`` (the
        audience's, the bot's zone), else in the zone its time was stored with. Episodes stored
        before the plugin kept the bot's zone carry UTC's: a line said early on June 1 in Shanghai
        is May 31 there."""
        minutes = self.cols.tz if tz is None else _zone_minutes(self.micros, self.timed, tz)
        local = self.micros + minutes * 60_000_000
        return local.astype("datetime64[us]").astype("datetime64[M]").astype(np.int64)


def _zone_minutes(micros: np.ndarray, timed: np.ndarray, tz: tzinfo) -> np.ndarray:
    """``tz``'s offset from UTC in minutes at each time (its summer time too); 0 where untimed."""
    out = np.zeros(len(micros), np.int64)
    for j in np.flatnonzero(timed).tolist():
        offset = (_EPOCH + timedelta(microseconds=int(micros[j]))).astimezone(tz).utcoffset()
        out[j] = 0 if offset is None else offset // timedelta(minutes=1)
    return out


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


def _score_features(pool: Pool, cols: _Layout, q: _QueryFacts, s: RecallSettings, m: np.ndarray) -> None:
    """kw/cos scaled over the pool, their mix, each route's rank, found by both."""
    is_m = cols.is_m
    raw_kw = np.array(pool.kw, np.float64)
    raw_cos = np.array(pool.cos, np.float64)  # None is NaN
    # BM25 values of the two tables come from different corpus statistics: scale each on its own.
    kw = raw_kw / np.where(is_m, _top_or_one(raw_kw[is_m]), _top_or_one(raw_kw[~is_m]))
    cos = _scaled(raw_cos)
    m[_rows("kw", "cos")] = kw, cos
    qq = np.array(pool.cos_qq if len(pool.cos_qq) == cols.n else [None] * cols.n, np.float64)
    m[_ROW["cos_qq"]] = np.where(np.isnan(qq), cos, _scaled(qq))
    has_cos = ~np.isnan(raw_cos)
    m[_ROW["mix"]] = (kw + cos) / 2 if has_cos.any() else kw
    m[_ROW["both"]] = pool.both
    m[_ROW["kw_rank"]], m[_ROW["cos_rank"]] = _rank_of(raw_kw), _rank_of(np.where(has_cos, raw_cos, 0.0))


def _scaled(raw: np.ndarray) -> np.ndarray:
    """Cosines scaled to their range in the pool; 0 where NaN (no vector)."""
    have = ~np.isnan(raw)
    sims = raw[have]
    lo, hi = (float(sims.min()), float(sims.max())) if len(sims) else (0.0, 1.0)
    return np.where(have, (raw - lo) / ((hi - lo) or 1.0), 0.0)


def _top_or_one(values: np.ndarray) -> float:
    return (float(values.max()) if len(values) else 0.0) or 1.0


def _rank_of(values: np.ndarray) -> np.ndarray:
    """1 / (1 + r / 5) for the r-th largest positive value (ties in pool order), 0 for the rest."""
    pos = np.flatnonzero(values > 0)
    out = np.zeros(len(values))
    out[pos[np.argsort(-values[pos], kind="stable")]] = 1.0 / (1.0 + np.arange(len(pos)) / 5.0)
    return out


def _neighbour_features(pool: Pool, cols: _Layout, q: _QueryFacts, s: RecallSettings, m: np.ndarray) -> None:
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


def _item_features(pool: Pool, cols: _Layout, q: _QueryFacts, s: RecallSettings, m: np.ndarray) -> None:
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
        m[_ROW["date_match"]] = q.date_match(cols.local_months(s.tz), cols.timed)
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
    # the metabolism's one rule (``strength.faded``): what ``fade()`` archives by is what recall ranks by,
    # a memory made while the clock read 1970 included
    strength = np.minimum(1.0, faded(c.strength, since, now, s.strength_days))
    ago = np.where(np.isnan(c.recalled), np.inf, np.maximum(0.0, now - c.recalled))
    return strength, np.where(np.isinf(ago), 0.0, 0.5 ** (np.minimum(ago, 1e12) / _DAY / s.recency_days))


def _recency(cols: _Layout, half_life: float) -> list[float]:
    """0.5 ** (age in days / half_life); an item without a time counts as new."""
    # whole microseconds, as datetimes subtract: the same seconds to the last bit
    seconds = np.where(cols.timed, (cols.now - cols.micros) / 1e6, 0.0)
    halves = (np.maximum(0.0, seconds / _DAY) / half_life).tolist()
    return list(map(pow, repeat(0.5), halves))  # pow, as ** does, not numpy's: the same last bit


def _after_question(pool: Pool, cols: _Layout, q: _QueryFacts, s: RecallSettings, m: np.ndarray) -> None:
    """A question turn right before lends its match to its answer."""
    prev = cols.near[1]
    asked = (prev >= 0) & (m[_ROW["question_turn"], prev] == 1.0)
    m[_ROW["after_question"], cols.eps] = np.where(asked, m[_ROW["nb_prev"], cols.eps], 0.0)


def _coverage_features(pool: Pool, cols: _Layout, q: _QueryFacts, s: RecallSettings, m: np.ndarray) -> None:
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


def _relative_coverage(pool: Pool, cols: _Layout, q: _QueryFacts, s: RecallSettings, m: np.ndarray) -> None:
    """cov and wcov over their best value in the pool. A long dialogue context shares a small part
    of its words with any one line, a short question a large one; against the pool's best, both
    mean "as much of the query as anything here holds"."""
    for share, rel in (("cov", "cov_rel"), ("wcov", "wcov_rel")):
        m[_ROW[rel]] = m[_ROW[share]] / (m[_ROW[share]].max() or 1.0)


def _window_feature(pool: Pool, cols: _Layout, q: _QueryFacts, s: RecallSettings, m: np.ndarray) -> None:
    """in_window: the item's event time lies in the window the query names (``timewindow``)."""
    window = query_window(q.text, cols.when, s.tz, s.boundary_hour) if s.time_windows else None
    if window is not None:
        start, end = _micros_of(window.start), _micros_of(window.end)
        m[_ROW["in_window"]] = cols.timed & (cols.micros >= start) & (cols.micros < end)


Step = Callable[[Pool, _Layout, _QueryFacts, RecallSettings, np.ndarray], None]
# The steps in the order they run (the item step first: neighbours lend nothing to the bot's own or
# empty lines); ``no_borrowing`` computes no feature of its own, it takes back what those borrowed.
_STEPS: dict[str, Step] = {"item": _item_features, "scores": _score_features,
                           "neighbours": _neighbour_features, "after_question": _after_question,
                           "coverage": _coverage_features, "no_borrowing": _no_borrowing,
                           "relative_coverage": _relative_coverage,
                           "window": _window_feature}
assert {f.step for f in FEATURES} <= set(_STEPS)
