"""Fitting a ranker's weights from labelled candidate pools: offline work (bench/locomo.py), never
run by recall."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from .features import FEATURES

# the features whose weights a fit learns (the hand-set ones keep their registry weight)
FITTED = tuple(f.name for f in FEATURES if not f.hand_set)


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, x))))


def fit_logistic(rows: Sequence[Mapping[str, float]], labels: Sequence[float], names: Sequence[str],
                 l2: float = 1.0, weights: Sequence[float] | None = None, iters: int = 50
                 ) -> tuple[dict[str, float], float]:
    """Logistic regression by Newton's method (numpy only): feature weights and the bias.

    ``l2`` penalises the weights (not the bias); ``weights`` are per-row sample weights.
    """
    x = np.array([[r.get(n, 0.0) for n in names] for r in rows], np.float64)
    x = np.hstack([x, np.ones((len(x), 1))])
    y = np.asarray(labels, np.float64)
    sw = np.ones(len(y)) if weights is None else np.asarray(weights, np.float64)
    reg = np.full(x.shape[1], l2)
    reg[-1] = 0.0
    beta = np.zeros(x.shape[1])
    for _ in range(iters):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ beta, -50, 50)))
        grad = x.T @ (sw * (p - y)) + reg * beta
        hess = (x * (sw * p * (1 - p))[:, None]).T @ x + np.diag(reg + 1e-9)
        step = np.linalg.solve(hess, grad)
        beta -= step
        if np.abs(step).max() < 1e-7:
            break
    return {n: float(b) for n, b in zip(names, beta[:-1])}, float(beta[-1])


def fit_pairwise(queries: Sequence[tuple[Sequence[Mapping[str, float]], Sequence[bool]]],
                 names: Sequence[str], l2: float = 0.1, weights: Sequence[float] | None = None
                 ) -> dict[str, float]:
    """Feature weights that rank each query's relevant rows above its others (pairwise logistic).

    Every (relevant, other) pair of one query is a sample ``x_rel - x_other``; each query weighs
    the same in total (or ``weights[i]``, when given). The weights suit a LinearRanker (bias 0:
    only differences matter).
    """
    diffs, sw = [], []
    for n, (rows, relevant) in enumerate(queries):
        x = np.array([[r.get(n, 0.0) for n in names] for r in rows], np.float64)
        rel = np.asarray(relevant, bool)
        if rel.all() or not rel.any():
            continue
        pos, neg = x[rel], x[~rel]
        d = (pos[:, None, :] - neg[None, :, :]).reshape(-1, len(names))
        diffs.append(d)
        sw.append(np.full(len(d), (1.0 if weights is None else weights[n]) / len(d)))
    if not diffs:
        return {n: 0.0 for n in names}
    d, w = np.vstack(diffs), np.concatenate(sw)
    x, y, w = np.vstack([d, -d]), np.r_[np.ones(len(d)), np.zeros(len(d))], np.r_[w, w]
    beta = np.zeros(len(names))
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ beta, -50, 50)))
        grad = x.T @ (w * (p - y)) + l2 * beta
        hess = (x * (w * p * (1 - p))[:, None]).T @ x + l2 * np.eye(len(names))
        step = np.linalg.solve(hess, grad)
        beta -= step
        if np.abs(step).max() < 1e-7:
            break
    return {n: float(b) for n, b in zip(names, beta)}
