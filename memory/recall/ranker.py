"""Rankers turn a candidate's features into a score (one method; swap freely), and the best
candidates into hits."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ..model import Hit
from .candidates import hit
from .features import COLUMNS, FEATURES, Features


class Ranker(Protocol):
    """Scores candidates from their features; higher is better.

    A ranker may also have ``score_matrix(names, matrix) -> array``: the same scores for a whole
    pool at once (``matrix[i, j]``: feature ``names[i]`` of candidate ``j``), which recall then
    uses instead of building a dict per candidate.
    """

    def score(self, features: Sequence[Mapping[str, float]]) -> list[float]: ...


def score_all(ranker: Ranker, names: Sequence[str], matrix: np.ndarray) -> np.ndarray:
    """Every candidate's score: by the ranker's ``score_matrix`` if it has one, else dict by dict."""
    n = matrix.shape[1]
    by_matrix = getattr(ranker, "score_matrix", None)
    if by_matrix is not None:
        return np.asarray(by_matrix(names, matrix), np.float64).reshape(n)
    rows = [dict(zip(names, r)) for r in matrix.T.tolist()]
    return np.asarray(ranker.score(rows), np.float64).reshape(n)


DEFAULT_WEIGHTS: dict[str, float] = {f.name: f.weight for f in FEATURES}
HAND_SET: dict[str, float] = {f.name: f.weight for f in FEATURES if f.hand_set}
DEFAULT_BIAS = 0.0  # a pairwise fit has none: only differences between candidates matter


@dataclass
class LinearRanker:
    """A weighted sum of features (the logit of a logistic model)."""

    weights: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    bias: float = DEFAULT_BIAS

    def score(self, features: Sequence[Mapping[str, float]]) -> list[float]:
        w = self.weights
        return [self.bias + sum(w.get(k, 0.0) * v for k, v in f.items()) for f in features]

    def score_matrix(self, names: Sequence[str], matrix: np.ndarray) -> np.ndarray:
        """``score`` of every candidate at once, the same to the last bit (see ``_python_sum``)."""
        w = np.array([self.weights.get(k, 0.0) for k in names], np.float64).reshape(-1, 1)
        return self.bias + _python_sum(matrix * w)


@dataclass
class FeatureRanker:
    """Ranks by one feature alone (the keyword-only and embedding-only baselines)."""

    feature: str

    def score(self, features: Sequence[Mapping[str, float]]) -> list[float]:
        return [f.get(self.feature, 0.0) for f in features]

    def score_matrix(self, names: Sequence[str], matrix: np.ndarray) -> np.ndarray:
        return matrix[list(names).index(self.feature)] if self.feature in names else np.zeros(matrix.shape[1])


def _python_sum(terms: np.ndarray) -> np.ndarray:
    """Column sums of ``terms`` exactly as Python 3.12's ``sum`` adds floats, top to bottom.

    ``sum`` keeps the running rounding error apart (Neumaier) and adds it at the end. Here the
    running sums come from one ``cumsum`` (strictly in order), their errors from Knuth's two-sum
    (exact, as Neumaier's are), and the errors are added up in order too.
    """
    if len(terms) == 0:
        return np.zeros(terms.shape[1:])
    running = np.add.accumulate(terms, axis=0)
    total = running[-1] + 0.0
    if len(terms) < 2:
        return total
    before, after, x = running[:-1], running[1:], terms[1:]
    part = after - before
    error = np.add.accumulate((before - (after - part)) + (x - part), axis=0)[-1]
    return np.where((error != 0) & np.isfinite(error), total + error, total)




def best_candidates(feats: Features, ranker: Ranker, k: int) -> list[tuple[int, float]]:
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
    return hits(feats, best_candidates(feats, ranker, k))
