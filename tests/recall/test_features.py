"""Recall's features and ranking on hand-made candidate pools: what each feature notices."""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone

import numpy as np

from astrbot_plugin_engram.memory import Episode, FeatureRanker, LinearRanker, Memory, RecallSettings
from astrbot_plugin_engram.memory.recall.candidates import Pool
from astrbot_plugin_engram.memory.recall.features import COLUMNS, FEATURES, featurize
from astrbot_plugin_engram.memory.recall.ranker import rank

NOW = datetime(2024, 6, 1, tzinfo=timezone.utc)
T0 = datetime(2024, 5, 3, 18, 0, tzinfo=timezone.utc)


def turn(seq: int, text: str, kw: float = 0.0, section: int = 1, place: str = "g", who: str = "Ann",
         when: datetime | None = None) -> tuple[Episode, float]:
    ep = Episode(place=place, content=text, actor=who.lower(), actor_name=who, id=seq, seq=seq,
                 section=section, time=when or T0 + timedelta(minutes=seq))
    return ep, kw


def pool_of(items: Sequence[tuple[Episode | Memory, float]]) -> Pool:
    pool = Pool()
    for item, kw in items:
        pool.add_item(item, kw=kw)
    return pool


def features(items: Sequence[tuple[Episode | Memory, float]], query: str) -> dict[int, dict[str, float]]:
    """Every candidate's features, by id."""
    feats = featurize(pool_of(items), query, NOW, RecallSettings())
    return {h.id: h.features for h in rank(feats, FeatureRanker("kw"), len(items))}


def test_a_question_turn_lends_its_match_to_the_answer_after_it() -> None:
    pool = [turn(1, "Where did you spend the summer holiday?", kw=2.0), turn(2, "In Lisbon with the kids."),
            turn(3, "Nice. Did you like it?"), turn(4, "The food was great.")]
    f = features(pool, "summer holiday")
    assert f[2]["after_question"] == f[2]["nb_prev"] == 1.0  # the answer right after the match
    assert f[4]["after_question"] == 0.0  # after a question that matched nothing
    assert f[1]["after_question"] == 0.0 and f[1]["question_turn"] == 1.0


def test_a_section_boundary_stops_neighbours_and_the_word_window() -> None:
    same = [turn(1, "Where did you spend the summer holiday?", kw=2.0), turn(2, "In Lisbon.")]
    split = [turn(1, "Where did you spend the summer holiday?", kw=2.0), turn(2, "In Lisbon.", section=2)]
    joined, broken = features(same, "summer holiday"), features(split, "summer holiday")
    assert joined[2]["nb_prev"] == 1.0 and joined[2]["wcov"] == 1.0 and joined[2]["session_best"] == 1.0
    assert broken[2]["nb_prev"] == broken[2]["after_question"] == broken[2]["wcov"] == 0.0
    assert broken[2]["session_best"] == 0.0


def test_two_places_away_counts_only_as_nb2() -> None:
    pool = [turn(1, "The lake trip was lovely.", kw=1.0), turn(2, "Cold water though."),
            turn(3, "We swam every day.")]
    f = features(pool, "lake trip")
    assert f[3]["nb2"] == 1.0 and f[3]["nb_prev"] == 0.0
    assert f[2]["nb_prev"] == 1.0 and f[2]["nb2"] == f[2]["nb_next"] == 0.0


def test_a_line_without_content_of_its_own_borrows_nothing_from_its_neighbours() -> None:
    pool = [turn(1, "The lake trip was lovely.", kw=1.0), turn(2, "Yes."), turn(3, "We swam every day.")]
    f = features(pool, "lake trip")
    assert f[2]["empty"] == 1.0 and f[2]["nb_prev"] == f[2]["wcov"] == f[2]["after_question"] == 0.0
    assert f[3]["nb2"] == 1.0  # the line with content two places on still counts the match


def test_coverage_weighs_rare_words_above_common_ones() -> None:
    pool = [turn(i, f"Bob talked about the weather on day {i}.", kw=0.5) for i in range(1, 6)]
    pool.append(turn(9, "Bob bought a kayak.", kw=1.0))
    f = features(pool, "Bob kayak")  # "bob" is in every candidate, "kayak" in one
    assert f[9]["cov"] == 1.0
    assert 0 < f[1]["cov"] < 0.5 < f[9]["cov"] - f[1]["cov"]


def test_the_word_window_joins_a_question_and_its_answer() -> None:
    pool = [turn(1, "Did you visit Porto?", kw=1.0), turn(2, "Yes, we rode the old tram.", kw=1.0),
            turn(5, "The tram was slow.", kw=1.0)]
    f = features(pool, "Porto tram")
    assert f[2]["cov"] < 1.0 and f[2]["wcov"] == 1.0  # its own words plus its question's
    assert f[5]["wcov"] == f[5]["cov"] < 1.0  # no neighbour in the pool


def test_dates_in_text_and_query() -> None:
    pool = [turn(1, "We moved house last week.", when=datetime(2023, 5, 2, tzinfo=timezone.utc)),
            turn(2, "We moved house.", when=datetime(2023, 7, 2, tzinfo=timezone.utc))]
    f = features(pool, "When did they move house in May 2023?")
    assert f[1]["has_date"] == f[1]["when_dated"] == f[1]["date_match"] == 1.0
    assert f[2]["has_date"] == f[2]["when_dated"] == f[2]["date_match"] == 0.0
    plain = features(pool, "did they move house in May")
    assert plain[1]["when_dated"] == 0.0 and plain[1]["date_match"] == 1.0


def test_speaker_named_length_and_recency() -> None:
    old, new = NOW - timedelta(days=60), NOW - timedelta(days=30)
    pool = [turn(1, "ok", who="Caroline", when=old), turn(2, "A much longer turn " * 30, who="Mel", when=new)]
    f = features(pool, "What did Caroline say?")
    assert f[1]["speaker_named"] == 1.0 and f[2]["speaker_named"] == 0.0
    assert f[1]["length"] < f[2]["length"] == 1.0
    assert f[1]["recency"] == 0.25 and f[2]["recency"] == 0.5  # halves every 30 days


def test_memories_get_their_own_bookkeeping_features() -> None:
    mem = Memory(text="Ann keeps bees", scope="public", strength=3.0, importance=0.9, id=7,
                 created_at=(NOW - timedelta(days=30)).replace(tzinfo=None))  # naive: taken as UTC
    pool: list[tuple[Episode | Memory, float]] = [turn(1, "Ann talked about bees.", kw=1.0), (mem, 2.0)]
    f = features(pool, "Ann bees")
    m = f[7]
    assert m["is_memory"] == 1.0 and m["strength"] == 1.0 and m["importance"] == 0.9
    assert m["kw"] == 1.0 and f[1]["kw"] == 1.0  # each table's BM25 is scaled on its own
    assert m["session_best"] == m["mix"] and m["nb_prev"] == m["nb_next"] == m["nb2"] == 0.0
    assert m["recency"] == 0.5 and f[1]["is_memory"] == 0.0 and f[1]["strength"] == 1.0


def test_hits_carry_every_feature_and_ties_keep_pool_order() -> None:
    pool = [turn(i, f"line {i}") for i in range(1, 8)]
    feats = featurize(pool_of(pool), "nothing matches", NOW, RecallSettings())
    hits = rank(feats, FeatureRanker("has_date"), 4)  # every score 0: a tie
    assert [h.id for h in hits] == [1, 2, 3, 4]
    names = {f.name for f in FEATURES}
    assert all(list(h.features) == list(COLUMNS) and set(h.features) == names for h in hits)
    assert rank(featurize(Pool(), "q", NOW, RecallSettings()), LinearRanker(), 5) == []


class DictOnlyRanker:
    """A ranker with nothing but ``score`` (no column method): recall scores it row by row."""

    def __init__(self, weights: dict[str, float]):
        self.inner = LinearRanker(weights)

    def score(self, features):  # type: ignore[no-untyped-def]
        return self.inner.score(features)


def test_a_ranker_with_only_score_ranks_as_the_column_path_does() -> None:
    lines = [("Where is the lake?", 1.0), ("North of town.", 0.0), ("We swam there.", 0.5), ("Cold!", 0.2)]
    pool = [turn(i, t, kw=k) for i, (t, k) in enumerate(lines, 1)]
    feats = featurize(pool_of(pool), "lake swim", NOW, RecallSettings())
    weights = {"kw": 0.7, "after_question": 2.0, "length": -0.3, "nb2": 1.1}
    by_columns, by_rows = rank(feats, LinearRanker(weights), 4), rank(feats, DictOnlyRanker(weights), 4)
    assert [(h.id, h.score) for h in by_columns] == [(h.id, h.score) for h in by_rows]


def test_column_scores_equal_dict_scores_to_the_last_bit() -> None:
    rng = random.Random(3)
    names = list(COLUMNS)
    ranker = LinearRanker({n: rng.uniform(-4, 4) * 10 ** rng.randint(-6, 6) for n in names}, 0.37)
    rows = [{n: rng.choice([0.0, 1.0, rng.random(), 1e-9 * rng.random()]) for n in names} for _ in range(300)]
    matrix = np.array([[r[n] for r in rows] for n in names])
    assert ranker.score_matrix(names, matrix).tolist() == ranker.score(rows)


def test_a_hand_made_pool_asked_two_questions_answers_each() -> None:
    pool = pool_of([turn(1, "We swam in the lake.", kw=1.0), turn(2, "The trip was long.", kw=1.0)])
    first = featurize(pool, "lake", NOW, RecallSettings())
    second = featurize(pool, "trip", NOW, RecallSettings())
    cov = COLUMNS.index("cov")
    assert first.matrix[cov].tolist() == [1.0, 0.0] and second.matrix[cov].tolist() == [0.0, 1.0]
