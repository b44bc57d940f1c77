"""Features of recall's candidates (all in [0, 1]) and the ranking that turns them into hits.

The pool's features are a matrix, a row per feature and a column per candidate, worked out from
the candidates' stored rows taken as columns (no object per candidate) with a few numpy calls on
whole blocks; a feature dict and an item are built only for the hits returned. Every feature and
score is the same, to the last bit, as when each candidate was an Episode or Memory with its dict.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from functools import lru_cache
from itertools import chain, repeat
from typing import Any

import numpy as np

from .model import Hit, aware
from .ranker import Ranker, score_all
from .recall import Pool, RecallSettings
from .rows import (
    E_CONTENT,
    E_KIND,
    E_META,
    E_NAME,
    E_SECTION,
    E_SEQ,
    E_SPACE,
    E_TIME,
    E_TZ,
    E_WORDS,
    M_CREATED,
    M_IMPORTANCE,
    M_STRENGTH,
    M_TEXT,
    M_VALID_FROM,
    M_WORDS,
    dt,
    unkey,
)
from .text import (
    MONTH_WORDS,
    approx_tokens,
    asks_when,
    has_date,
    name_words,
    named_dates,
    query_words,
    word_set,
)

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
    q, cols = _QueryFacts(query), _Columns(pool, now)
    # numpy calls are few and on whole blocks: right after gather each costs ~10-20 µs (cold caches)
    _score_features(pool, cols, m)
    _neighbour_features(cols, m)
    _item_features(cols, q, s, m)
    # a question turn right before lends its match to its answer
    prev = cols.near[1]
    asked = (prev >= 0) & (m[_ROW["question_turn"], prev] == 1.0)
    m[_ROW["after_question"], cols.eps] = np.where(asked, m[_ROW["nb_prev"], cols.eps], 0.0)
    _coverage_features(cols, q.words, m)
    return Features(pool, m)


_ROW = {name: i for i, name in enumerate(COLUMNS)}


def _rows(*names: str) -> list[int]:
    return [_ROW[n] for n in names]


class _QueryFacts:
    """What the query says once, reused for every candidate."""

    def __init__(self, query: str):
        self.words = set(query_words(query))
        self.years, self.months = named_dates(query)
        self.asks_when = asks_when(query)

    def date_match(self, when: datetime | None) -> float:
        """1 when the query names the item's year and/or month (and names no other), else 0."""
        if when is None:
            return 0.0
        year_ok = not self.years or when.year in self.years
        month_ok = not self.months or when.month in self.months
        return 1.0 if year_ok and month_ok else 0.0


_OFFSETS = np.array([[-2], [-1], [1], [2]])


class _Columns:
    """The pool's rows as columns: episodes' (``ep``) and memories' (``mem``), their places and times."""

    def __init__(self, pool: Pool, now: datetime):
        self.n, self.marks = len(pool), pool.marks
        self.is_m = np.array([k == "m" for k in pool.kinds], bool)
        self.eps, self.mems = np.flatnonzero(~self.is_m), np.flatnonzero(self.is_m)
        self.ep = _transpose([pool.rows[j] for j in self.eps.tolist()], E_WORDS + 2)
        self.mem = _transpose([pool.rows[j] for j in self.mems.tolist()], M_WORDS + 1)
        self.texts = self.ep[E_CONTENT] + self.mem[M_TEXT]  # episodes, then memories
        self.stamps = self.ep[E_TIME] + tuple(c if v is None else v for v, c in
                                              zip(self.mem[M_VALID_FROM], self.mem[M_CREATED]))
        self.micros, self.timed = _micros(self.stamps)
        self.now = _micros_of(aware(now))
        self.section, self.near = self._neighbours()

    def _neighbours(self) -> tuple[np.ndarray, np.ndarray]:
        """Each episode's section number, and the pool rows of the episodes 2 and 1 places before
        and 1 and 2 after it in its section (-1: none in the pool)."""
        number: dict[tuple[str, int], int] = {}
        keys = zip(self.ep[E_SPACE], self.ep[E_SECTION])
        section = np.array([number.setdefault(k, len(number)) for k in keys], np.int64)
        places = section * _SEQ + np.array(self.ep[E_SEQ], np.int64)
        order = np.argsort(places, kind="stable")
        ordered, wanted = places[order], places + _OFFSETS
        # the last of equal places wins, as it did when a dict mapped places to candidates
        pos = np.maximum(np.searchsorted(ordered, wanted, side="right") - 1, 0)
        return section, np.where(ordered[pos] == wanted, self.eps[order[pos]], -1)

    def local_months(self) -> np.ndarray:
        """Each episode's months since 1970-01 in its own time zone (its stored month and year)."""
        k = len(self.eps)
        local = self.micros[:k] + np.array(self.ep[E_TZ], np.int64) * 60_000_000
        return local.astype("datetime64[us]").astype("datetime64[M]").astype(np.int64)

    def dates(self) -> list[datetime | None]:
        """Each item's time as a datetime in its zone (episodes, then memories; memories in UTC)."""
        zones = self.ep[E_TZ] + (0,) * len(self.mems)
        return [dt(t, z) for t, z in zip(self.stamps, zones)]


def _transpose(rows: list[Sequence[Any]], width: int) -> list[tuple[Any, ...]]:
    return list(zip(*rows)) if rows else [()] * width


def _micros(stamps: Sequence[float | None]) -> tuple[np.ndarray, np.ndarray]:
    """Timestamps as whole microseconds since 1970, rounded as ``datetime.fromtimestamp`` rounds
    them (so ages come out exactly as datetimes' did), and which were given (None: 0)."""
    timed = np.array([t is not None for t in stamps], bool)
    t = np.array([0.0 if x is None else x for x in stamps] if not timed.all() else stamps, np.float64)
    whole = np.trunc(t)  # modf, then the fraction's microseconds rounded half to even
    return whole.astype(np.int64) * 1_000_000 + np.rint((t - whole) * 1e6).astype(np.int64), timed


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def _micros_of(t: datetime) -> int:
    return (t - _EPOCH) // timedelta(microseconds=1)


def _score_features(pool: Pool, cols: _Columns, m: np.ndarray) -> None:
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


def _neighbour_features(cols: _Columns, m: np.ndarray) -> None:
    """Neighbours' mix (before, after, two away), the section's best mix and the boosted rank."""
    mix = m[_ROW["mix"]]
    two_before, before, after, two_after = np.append(mix, 0.0)[cols.near]  # row -1: no neighbour
    m[np.ix_(_rows("nb_prev", "nb_next", "nb2"), cols.eps)] = before, after, np.maximum(two_before, two_after)
    section_best = np.zeros(int(cols.section.max(initial=-1)) + 1)
    np.maximum.at(section_best, cols.section, mix[cols.eps])
    m[_ROW["session_best"]] = mix  # a memory has no section: its own mix
    m[_ROW["session_best"], cols.eps] = section_best[cols.section]
    boost = mix + 0.5 * np.maximum(m[_ROW["nb_prev"]], m[_ROW["nb_next"]])
    m[_ROW["mix_rank"], np.argsort(-boost, kind="stable")] = 1.0 / (1.0 + np.arange(cols.n) / 5.0)


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


def _item_features(cols: _Columns, q: _QueryFacts, s: RecallSettings, m: np.ndarray) -> None:
    """Shape of the text, time, speaker and bookkeeping features."""
    ep, mem = cols.ep, cols.mem
    rows = np.concatenate([cols.eps, cols.mems])  # columns below hold the episodes, then the memories
    facts = _TEXT_FACTS[list(map(_text_code, cols.texts))].T
    m[np.ix_(_rows("question_turn", "length", "has_date"), rows)] = facts
    if q.asks_when:
        m[_ROW["when_dated"]] = m[_ROW["has_date"]]
    m[_ROW["is_memory"]] = cols.is_m
    m[_ROW["recency"], rows] = _recency(cols, s.recency_days)
    if q.years or q.months:
        m[_ROW["date_match"], rows] = [q.date_match(w) for w in cols.dates()]
    names = ep[E_NAME]
    named = {a: 1.0 if a and name_words(a) & q.words else 0.0 for a in set(names)}
    image = [k == "image" or _meta_image(meta) for k, meta in zip(ep[E_KIND], ep[E_META])]
    k = len(names)
    m[np.ix_(_rows("speaker_named", "has_image", "strength", "importance"), cols.eps)] = (
        [named[a] for a in names], image, [1.0] * k, [0.5] * k)
    if len(cols.mems):
        m[np.ix_(_rows("strength", "importance"), cols.mems)] = (
            [min(1.0, x) for x in mem[M_STRENGTH]], mem[M_IMPORTANCE])


def _meta_image(meta: str) -> bool:
    """Whether an episode's meta (JSON) names an image; parsed only when it may."""
    return meta != "{}" and '"image"' in meta and bool(json.loads(meta).get("image"))


def _recency(cols: _Columns, half_life: float) -> list[float]:
    """0.5 ** (age in days / half_life); an item without a time counts as new."""
    # whole microseconds, as datetimes subtract: the same seconds to the last bit
    seconds = np.where(cols.timed, (cols.now - cols.micros) / 1e6, 0.0)
    halves = (np.maximum(0.0, seconds / _DAY) / half_life).tolist()
    return list(map(pow, repeat(0.5), halves))  # pow, as ** does, not numpy's: the same last bit


def _coverage_features(cols: _Columns, qwords: set[str], m: np.ndarray) -> None:
    """cov: share of the query's words in the text; wcov: in the text and its ±1 neighbours.

    Words are weighted by their rarity in the pool, so a word every candidate has counts little;
    the window catches questions whose words are split between a question turn and its answer.
    """
    sets: list[frozenset[str]] = [_NONE] * cols.n
    for j, found in zip(cols.eps.tolist(), _episode_matches(cols, qwords)):
        sets[j] = found
    pads = _Pads(qwords)
    for j, words, text in zip(cols.mems.tolist(), cols.mem[M_WORDS], cols.mem[M_TEXT]):
        sets[j] = word_set(text) & qwords if words is None else _matched(words, len(words), "", pads)
    df = Counter(chain.from_iterable(sets))
    idf = {w: math.log(1 + cols.n / (1 + df[w])) for w in qwords}
    total, weight = sum(idf.values()) or 1.0, idf.__getitem__
    # Each set is summed in its own order, as ``sum`` over it always was (the same last bit).
    matched = [i for i, s in enumerate(sets) if s]
    cov = np.zeros(cols.n)
    cov[matched] = [sum(map(weight, sets[i])) for i in matched]
    m[_ROW["cov"]] = m[_ROW["wcov"]] = cov / total
    sets.append(_NONE)  # row -1: no neighbour
    some = np.zeros(cols.n + 1, bool)
    some[matched] = True
    at = np.stack([cols.eps, cols.near[1], cols.near[2]])
    at = at[:, some[at].any(axis=0)].tolist()  # episodes with a word in their window
    m[_ROW["wcov"], at[0]] = [sum(map(weight, sets[i] | sets[j] | sets[k])) / total for i, j, k in zip(*at)]


def _episode_matches(cols: _Columns, qwords: set[str]) -> list[frozenset[str]]:
    """The query's words in each episode, from its index words.

    The index holds the text's words, the speaker's, then the month and year (2 words), each word
    keyed to the episode's space (``rows.keyed_words``); when they do not end like that, the text
    is tokenised again (re-tokenising ~200 texts took ~20 ms).
    """
    months = cols.local_months().tolist() if len(cols.eps) else []
    out = []
    marks, ep, pads = cols.marks, cols.ep, _Pads(qwords)
    for words, space, month, text, name in zip(ep[E_WORDS], ep[E_SPACE], months, ep[E_CONTENT], ep[E_NAME]):
        mark = marks.get(space)
        if mark is None:  # an unknown space, or a hand-made pool (no words)
            words, mark = unkey(words, None), ""
        end = _date_end(month, mark)
        if words and (words.endswith(end) or words == end[1:]):
            out.append(_matched(words, len(words) - len(end), mark, pads))
        else:
            out.append((word_set(text) | name_words(name) if name else word_set(text)) & qwords)
    return out


@lru_cache(maxsize=1024)
def _date_end(month: int, mark: str) -> str:
    """How an episode's index words end, for its months since 1970-01: " <month> <year>" keyed."""
    return f" {MONTH_WORDS[month % 12]}{mark} {1970 + month // 12}{mark}"


_NONE: frozenset[str] = frozenset()


class _Pads(dict[str, list[tuple[str, str]]]):
    """The query's words, each as an index word keyed by a mark with a space either side."""

    def __init__(self, qwords: set[str]):
        super().__init__()
        self.qwords = qwords

    def __missing__(self, mark: str) -> list[tuple[str, str]]:
        self[mark] = [(f" {w}{mark} ", w) for w in self.qwords if " " not in w]  # no index word holds a space
        return self[mark]


def _matched(words: str, cut: int, mark: str, pads: _Pads) -> frozenset[str]:
    """``frozenset(plain.split(" ")) & qwords`` for the plain words of ``words[:cut]``, built so
    only when it holds two words or more.

    Each query word is looked for as a whole word first (splitting the words and hashing them all
    costs more). Sums over the set run in its iteration order, which depends on how it was built:
    building it as before keeps every sum the same to the last bit (the order matters only with
    two words or more).
    """
    body = f" {words[:cut]} "
    found = [w for pad, w in pads[mark] if pad in body]
    if len(found) < 2:
        return frozenset(found) if found else _NONE
    plain = words[:cut].replace(mark, "") if mark else words[:cut]
    return frozenset(plain.split(" ")) & pads.qwords


def rank(feats: Features, ranker: Ranker, k: int) -> list[Hit]:
    """The ``k`` best candidates as hits, each with its features and score."""
    scores = score_all(ranker, COLUMNS, feats.matrix)
    top = np.argsort(-scores, kind="stable")[:k].tolist()
    pool = feats.pool
    return [Hit(kind="episode" if pool.kinds[j] == "e" else "memory", id=pool.ids[j], text=pool.text(j),
                score=sc, features=f, item=pool.item(j))
            for j, sc, f in zip(top, scores[top].tolist(), feats.rows(np.array(top, np.int64)))]
