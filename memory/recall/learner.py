"""A ranking that learns from what replies used: the LinearRanker's weights moved online by
pairwise logistic steps on each recall's feedback, starting from the shipped weights and kept near
them.

Feedback on one recall is the features of the notes it injected and which of them the reply used
(``feedback``). Only those are judged, so each step compares used notes with injected ones the
reply ignored; a note that is never injected could never earn credit, so ``explore`` now and then
puts one from just below the cut into the last slot.

Safe by construction: every weight stays within ``bound`` of its shipped value and is pulled back
towards it; the steps are small and normalised per recall (one recall weighs the same whatever its
size); and the learned weights are *served* only while they order the new feedback better than the
shipped weights do (each recall is judged by both before it is learned from: a champion and a
challenger), over the last ``window`` judged recalls, by more than ``margin`` and by more than
twice the standard error of that difference. Feedback that says nothing consistent (flipped at
random, adversarial) leaves the shipped ranking in use. (A mean since the start, without the
standard error, let worse weights through under noisy feedback with larger steps: bench/RESULTS.md,
issue 32.)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ..errors import InvalidInputError
from .features import COLUMNS, FEATURES
from .ranker import LinearRanker

SHIPPED: dict[str, float] = {f.name: f.weight for f in FEATURES}


@dataclass(frozen=True)
class LearnSettings:
    """How fast and how far the weights may move."""

    # rate and bound from bench/learned.py: on the dev sets as they are (nothing to learn) they leave
    # the shipped ranking in use; from weights wrong for a bot they recover more than .05 / 1.0 did
    rate: float = 0.2  # step size of one recall's mean pairwise gradient
    pull: float = 0.02  # share of the distance to the shipped weights taken back each step
    bound: float = 3.0  # no weight moves further than this from its shipped value
    explore: float = 0.1  # chance that a recall's last injected slot goes to a note just below the cut
    serve_after: int = 20  # judged recalls before learned weights may be served
    margin: float = 0.02  # the learned weights' pairwise accuracy must beat the shipped by this
    window: int = 200  # the judged recalls that count (the latest)


@dataclass
class Judged:
    """How much better the learned weights ordered each recent recall's (used, ignored) pairs than
    the shipped ones did, judged before learning from it: the share of pairs each ordered right,
    learned minus shipped, the latest last."""

    gains: list[float] = field(default_factory=list)

    @property
    def recalls(self) -> int:
        return len(self.gains)

    def add(self, gain: float, window: int) -> None:
        self.gains.append(gain)
        del self.gains[: max(0, len(self.gains) - window)]

    def gain(self) -> float:
        return float(np.mean(self.gains)) if self.gains else 0.0

    def sure(self, margin: float) -> bool:
        """The mean gain beats ``margin`` and twice its standard error."""
        n = len(self.gains)
        if n < 2:
            return False
        mean, se = float(np.mean(self.gains)), float(np.std(self.gains, ddof=1)) / math.sqrt(n)
        return mean > margin and mean > 2.0 * se


@dataclass
class Learner:
    """One bot's learned weights (in ``COLUMNS`` order) and what judged them."""

    settings: LearnSettings = field(default_factory=LearnSettings)
    shipped: np.ndarray = field(default_factory=lambda: np.array([SHIPPED[c] for c in COLUMNS]))
    weights: np.ndarray = field(default_factory=lambda: np.zeros(0))  # empty: the shipped ones
    judged: Judged = field(default_factory=Judged)
    steps: int = 0

    def __post_init__(self) -> None:
        if not len(self.weights):
            self.weights = self.shipped.copy()

    # -- what recall uses

    @property
    def serving(self) -> bool:
        """Whether the learned weights are in use (else the shipped ones are)."""
        s = self.settings
        return self.judged.recalls >= s.serve_after and self.judged.sure(s.margin)

    def served(self) -> np.ndarray:
        return self.weights if self.serving else self.shipped

    def ranker(self) -> LinearRanker:
        return LinearRanker(dict(zip(COLUMNS, self.served().tolist())))

    def explore(self, order: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
        """The candidates to inject, from candidates ``order``-ed best first: the best ``k``, now
        and then with the last one swapped for one of the next ``k``."""
        chosen = np.array(order[:k])
        if len(order) > k and k > 0 and rng.random() < self.settings.explore:
            chosen[-1] = order[k + int(rng.integers(min(k, len(order) - k)))]
        return chosen

    # -- learning

    def learn(self, features: np.ndarray, used: np.ndarray) -> bool:
        """One recall's feedback: ``features[i, j]`` is feature ``COLUMNS[i]`` of injected note
        ``j``, ``used[j]`` whether the reply used it. Returns whether it taught anything (it does
        not when all or none were used)."""
        x, u = _checked(features, used, len(self.shipped))
        if u.all() or not u.any():
            return False
        pairs = (x[u][:, None, :] - x[~u][None, :, :]).reshape(-1, x.shape[1])
        self.judged.add(float(np.mean(pairs @ self.weights > 0)) - float(np.mean(pairs @ self.shipped > 0)),
                        self.settings.window)
        p = 1.0 / (1.0 + np.exp(-np.clip(pairs @ self.weights, -30.0, 30.0)))
        grad = ((1.0 - p)[:, None] * pairs).mean(axis=0)
        s = self.settings
        w = self.weights + s.rate * grad
        w -= s.pull * (w - self.shipped)
        self.weights = np.clip(w, self.shipped - s.bound, self.shipped + s.bound)
        self.steps += 1
        return True

    def reset(self) -> None:
        """Back to the shipped weights, forgetting what judged the learned ones."""
        self.weights = self.shipped.copy()
        self.judged = Judged()
        self.steps = 0

    # -- inspecting and keeping

    def moved(self) -> dict[str, tuple[float, float]]:
        """The weights that moved: name -> (shipped, learned), largest move first."""
        d = self.weights - self.shipped
        return {COLUMNS[i]: (float(self.shipped[i]), float(self.weights[i]))
                for i in np.argsort(-np.abs(d), kind="stable").tolist() if abs(d[i]) > 1e-9}

    def state(self) -> dict[str, Any]:
        """What to keep on disk (JSON): the learned weights by name, the judging, the steps."""
        return {"weights": dict(zip(COLUMNS, self.weights.tolist())), "judged": asdict(self.judged),
                "steps": self.steps}

    @classmethod
    def from_state(cls, state: Mapping[str, Any], settings: LearnSettings | None = None) -> Learner:
        """A learner from ``state()``; a feature it does not name (new since) starts at its shipped
        weight, and one this version no longer has is dropped. Weights are put back within bounds."""
        out = cls(settings or LearnSettings())
        try:
            saved = {str(k): float(v) for k, v in dict(state.get("weights") or {}).items()}
            judged = Judged([float(g) for g in dict(state.get("judged") or {}).get("gains", [])])
            steps = int(state.get("steps", 0))
        except (TypeError, ValueError, AttributeError) as e:
            raise InvalidInputError(f"saved ranking weights are not readable: {e}",
                                    code="ranking_unreadable") from e
        w = np.array([saved.get(c, out.shipped[i]) for i, c in enumerate(COLUMNS)])
        if not np.isfinite(w).all() or not all(map(math.isfinite, judged.gains)):
            raise InvalidInputError("saved ranking weights are not finite", code="ranking_unreadable")
        b = out.settings.bound
        out.weights, out.judged, out.steps = np.clip(w, out.shipped - b, out.shipped + b), judged, steps
        return out


def _checked(features: np.ndarray, used: np.ndarray, n: int = len(COLUMNS)) -> tuple[np.ndarray, np.ndarray]:
    """Notes as rows, and their used flags; a clear error for the wrong shape or a non-finite value."""
    x = np.asarray(features, np.float64)
    u = np.asarray(used, bool).reshape(-1)
    if x.ndim != 2 or x.shape[0] != n or x.shape[1] != len(u):
        raise InvalidInputError(f"feedback wants {n} features for each of {len(u)} notes, got "
                                f"{x.shape}", code="feedback_shape")
    if not np.isfinite(x).all() or not math.isfinite(float(np.abs(x).max(initial=0.0))):
        raise InvalidInputError("feedback features must be finite", code="feedback_not_finite")
    return x.T, u
