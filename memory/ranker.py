"""Rankers turn a candidate's features into a score. One method; swap freely."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

FEATURES = (
    "kw", "cos", "mix", "nb1", "nb2", "session_best", "mix_rank", "both", "question_turn",
    "length", "speaker_named", "recency", "strength", "importance", "is_memory",
)


class Ranker(Protocol):
    """Scores candidates from their features; higher is better."""

    def score(self, features: Sequence[Mapping[str, float]]) -> list[float]: ...


# Hand-set to start with; bench/locomo.py fits these by logistic regression, cross-validated across
# conversations, and prints weights in this form.
DEFAULT_WEIGHTS: dict[str, float] = {
    "mix": 3.0, "nb1": 1.2, "nb2": 0.6, "session_best": 0.8, "mix_rank": 1.0, "both": 0.3,
    "question_turn": -0.4, "length": 0.2, "speaker_named": 0.2, "recency": 0.1, "strength": 0.1,
    "importance": 0.2, "is_memory": 0.3,
}


@dataclass
class LinearRanker:
    """A weighted sum of features (the logit of a logistic model)."""

    weights: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    bias: float = 0.0

    def score(self, features: Sequence[Mapping[str, float]]) -> list[float]:
        w = self.weights
        return [self.bias + sum(w.get(k, 0.0) * v for k, v in f.items()) for f in features]


@dataclass
class FeatureRanker:
    """Ranks by one feature alone (the keyword-only and embedding-only baselines)."""

    feature: str

    def score(self, features: Sequence[Mapping[str, float]]) -> list[float]:
        return [f.get(self.feature, 0.0) for f in features]


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, x))))
