"""Offline ranker experiments on pools saved by zh_explore.py (issue 11, phase A)."""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from zh_explore import _place  # noqa: E402

from astrbot_plugin_engram.memory.recall.features import COLUMNS as FEATURES  # noqa: E402
from astrbot_plugin_engram.memory.recall.ranker import DEFAULT_WEIGHTS, HAND_SET
from astrbot_plugin_engram.memory.recall.training import fit_pairwise

FITTED = [f for f in FEATURES if f not in HAND_SET]


def derive(feats: list[dict[str, float]], how: set[str]) -> tuple[np.ndarray, list[str]]:
    names = list(FEATURES) + ["cov_n", "wcov_n", "kw_z", "cos_z", "cos_raw_gap"]
    x = np.array([[f.get(n, 0.0) for n in FEATURES] + [0.0] * 5 for f in feats])
    ix = {n: i for i, n in enumerate(names)}
    for base in ("cov", "wcov"):
        col = x[:, ix[base]]
        x[:, ix[base + "_n"]] = col / (col.max() or 1.0)
    for base in ("kw", "cos"):
        col = x[:, ix[base]]
        sd = col.std() or 1.0
        x[:, ix[base + "_z"]] = (col - col.mean()) / sd
    return x, names


def load(path):
    by = pickle.loads(Path(path).read_bytes())
    out: dict[str, list] = {}
    for s, ps in by.items():
        out[s] = []
        for conv, q, dia, feats in ps:
            x, names = derive(feats, set())
            rel = np.array([d in q.evidence for d in dia])
            tie = np.array([_place(d) for d in dia])
            out[s].append((conv, q.category, x, rel, tie, len(q.evidence)))
    return out, names


def recall(pools, w):
    r5, r10 = [], []
    for _conv, cat, x, rel, tie, n in pools:
        if cat == 5:
            continue
        order = np.lexsort((tie, -(x @ w)))
        r5.append(rel[order[:5]].sum() / n)
        r10.append(rel[order[:10]].sum() / n)
    return np.mean(r5), np.mean(r10)


def fit(pools, use, names, mw, l2=0.1):
    qs = []
    for conv, _cat, x, rel, _tie, _n in pools:
        reps = mw if conv.startswith(("zh:", "en:")) else 1
        rows = [dict(zip(use, r)) for r in x[:, [names.index(u) for u in use]]]
        qs += [(rows, rel)] * reps
    w = fit_pairwise(qs, use, l2=l2)
    full = np.zeros(len(names))
    for k, v in {**w, **HAND_SET}.items():
        full[names.index(k)] = v
    return full


def run(path, configs, schemes=("pair", "each")):
    data, names = load(path)
    allp = [p for ps in data.values() for p in ps]
    w0 = np.array([DEFAULT_WEIGHTS.get(n, 0.0) for n in names])
    emb = np.array([1.0 if n == "cos" else 0.0 for n in names])
    kw = np.array([1.0 if n == "kw" else 0.0 for n in names])
    print(path)
    for label, w in (("keyword", kw), ("embedding", emb), ("shipped", w0)):
        print(
            f"  {label:40s}",
            "  ".join(f"{s} {a:.3f}/{b:.3f}" for s, ps in data.items() for a, b in [recall(ps, w)]),
        )
    for label, use, mw, l2 in configs:
        for scheme in schemes:
            fold = (
                (lambda c: "madial" if c.startswith(("zh:", "en:")) else c)
                if scheme == "pair"
                else (lambda c: c)
            )
            res: dict[str, list] = {s: [] for s in data}
            for fo in sorted({fold(p[0]) for p in allp}):
                w = fit([p for p in allp if fold(p[0]) != fo], use, names, mw, l2)
                for s, ps in data.items():
                    held = [p for p in ps if fold(p[0]) == fo and p[1] != 5]
                    if held:
                        res[s].append((len(held), recall(held, w)))
            cv = {
                s: tuple(sum(n * v[i] for n, v in xs) / sum(n for n, _ in xs) for i in (0, 1))
                for s, xs in res.items()
            }
            print(f"  cv-{scheme} {label:33s}", "  ".join(f"{s} {a:.3f}/{b:.3f}" for s, (a, b) in cv.items()))
        w = fit(allp, use, names, mw, l2)
        print(
            f"  fit-all {label:32s}",
            "  ".join(f"{s} {a:.3f}/{b:.3f}" for s, ps in data.items() for a, b in [recall(ps, w)]),
        )


if __name__ == "__main__":
    base = FITTED
    norm = [f for f in FITTED if f not in ("cov", "wcov")] + ["cov_n", "wcov_n"]
    configs = [
        ("base mw5", base, 5, 0.1),
        ("base mw1", base, 1, 0.1),
        ("base mw10", base, 10, 0.1),
        ("norm-cov mw5", norm, 5, 0.1),
        ("base+norm mw5", base + ["cov_n", "wcov_n"], 5, 0.1),
    ]
    run(sys.argv[1], configs)
