"""Features of recall's candidates (all in [0, 1]) and the ranking that turns them into hits."""

from __future__ import annotations

import math
from datetime import datetime

from .model import Episode, Hit, aware
from .ranker import Ranker
from .recall import Candidate, RecallSettings, best
from .text import approx_tokens, asks_when, has_date, name_words, named_dates, query_words, word_set


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
        for r, c in enumerate(best(cands, attr, len(cands))):
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
