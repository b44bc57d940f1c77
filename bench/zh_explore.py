#!/usr/bin/env python
"""Phase-A experiments for issue 11: recall on LoCoMo questions and MADial dialogue contexts.

Each data set is recorded in a fresh store through ``Engram``; every query's whole candidate pool
with its features is recalled once, and rankers are then compared offline on those pools
(keyword alone, embedding alone, the shipped weights, and a pairwise fit cross-validated leaving
out whole conversations — the two MADial files, parallel translations of one user, leave together).

    .venv/bin/python bench/zh_explore.py --variant current|runs|bigram|uni_bigram|... --query raw|plain|plugin
    .venv/bin/python bench/zh_offline.py /tmp/zh-pools-runs-plugin.pkl   # fits on the saved pools

Variants are in bench/variants.py (patched into memory.text; "runs" is the fix that shipped in
m006, the n-gram ones add character bigrams for Chinese on top of it). The numbers in
bench/RESULTS.md (issue 11) were taken at commit 3492f99, before the fix, when "current" was the
old tokenizer; since then "current" is the fixed one.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
from _embed_cache import CachingEmbedder
from _locomo_data import Conversation, Question, load
from locomo import CACHE, FITTED, POOL_K, dialogue_lines, place, plugin_query, recall_at, record

from astrbot_plugin_engram.memory import Audience, Engram, LocalE5
from astrbot_plugin_engram.memory.recall.ranker import HAND_SET, LinearRanker
from astrbot_plugin_engram.memory.recall.training import fit_pairwise

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
SETS = {
    "locomo": DATA / "locomo-dev.json",
    "zh": DATA / "madial-dev-zh.json",
    "en": DATA / "madial-dev-en.json",
}
QUERIES: dict[str, Callable[[str], str]] = {
    "raw": lambda t: t,
    "plain": lambda t: "\n".join(dialogue_lines(t) or [t]),
    "plugin": plugin_query,
}


async def pools_of(
    name: str, convs: list[Conversation], embedder: object, qshape: Callable[[str], str]
) -> list[tuple[str, Question, list[str], list[dict[str, float]]]]:
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        engram = await Engram.open(Path(tmp) / "x.db", embedder, background=False)  # type: ignore[arg-type]
        try:
            for c in convs:
                ids = await record(engram, c)
                await engram.embed_pending()
                aud, now = Audience(place(c.sample_id)), c.end
                for q in c.questions:
                    hits = await engram.recall(qshape(q.text), aud, k=POOL_K, now=now)
                    out.append(
                        (f"{name}:{c.sample_id}", q, [ids[h.id] for h in hits], [h.features for h in hits])
                    )
        finally:
            await engram.close()
    return out


def fold_of(conv: str) -> str:
    return "madial" if conv.startswith(("zh:", "en:")) else conv


def evaluate(pools: list, score: Callable[[list[dict[str, float]]], np.ndarray]) -> tuple[float, float]:
    r5, r10 = [], []
    for _, q, dia, feats in pools:
        if q.category == 5:  # reported over categories 1-4, as bench/locomo.py does
            continue
        s = score(feats)
        # ties (a route's zeros) in the conversation's order, not in the order recall returned them
        order = np.lexsort((np.array([_place(d) for d in dia]), -s))
        ranked = [dia[i] for i in order]
        r5.append(recall_at(q.evidence, ranked, 5))
        r10.append(recall_at(q.evidence, ranked, 10))
    return statistics.fmean(r5), statistics.fmean(r10)


def _place(dia: str) -> int:
    m = re.fullmatch(r"D(\d+):(\d+)", dia)
    return int(m[1]) * 1000 + int(m[2]) if m else 0


def linear(weights: dict[str, float]) -> Callable[[list[dict[str, float]]], np.ndarray]:
    r = LinearRanker(weights, 0.0)
    return lambda feats: np.array(r.score(feats))


def fit(pools: list, set_weight: dict[str, float]) -> dict[str, float]:
    data = []
    for conv, q, dia, feats in pools:
        reps = set_weight.get(conv.split(":")[0], 1)
        data += [(feats, [d in q.evidence for d in dia])] * int(reps)
    return {**fit_pairwise(data, FITTED), **HAND_SET}


def report(by_set: dict[str, list], set_weight: dict[str, float], label: str) -> dict:
    allp = [p for ps in by_set.values() for p in ps]
    out: dict[str, dict] = {}
    rows = {
        "keyword": lambda f: np.array([x["kw"] for x in f]),
        "embedding": lambda f: np.array([x["cos"] for x in f]),
        "shipped": linear(LinearRanker().weights),
    }
    for rname, sc in rows.items():
        out[rname] = {s: evaluate(ps, sc) for s, ps in by_set.items()}
    # CV: leave out whole conversations (MADial zh+en together)
    cv: dict[str, list] = {s: [] for s in by_set}
    folds = sorted({fold_of(p[0]) for p in allp})
    for fo in folds:
        w = fit([p for p in allp if fold_of(p[0]) != fo], set_weight)
        for s, ps in by_set.items():
            held = [p for p in ps if fold_of(p[0]) == fo]
            if held:
                cv[s].append((len(held), evaluate(held, linear(w))))
    out["cv"] = {
        s: tuple(sum(n * v[i] for n, v in xs) / sum(n for n, _ in xs) for i in (0, 1)) for s, xs in cv.items()
    }
    w_all = fit(allp, set_weight)
    out["fit-all (in-sample)"] = {s: evaluate(ps, linear(w_all)) for s, ps in by_set.items()}
    print(f"\n## {label}")
    print("| ranker | " + " | ".join(f"{s} R@5 / R@10" for s in by_set) + " |")
    print("|---|" + "---|" * len(by_set))
    for rname, res in out.items():
        print(f"| {rname} | " + " | ".join(f"{res[s][0]:.3f} / {res[s][1]:.3f}" for s in by_set) + " |")
    out["weights"] = w_all
    return out


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--variant", default="current")
    ap.add_argument("--query", default="raw", choices=sorted(QUERIES))
    ap.add_argument("--sets", default="locomo,zh,en")
    ap.add_argument("--madial-weight", type=float, default=5.0)
    ap.add_argument("--save", type=Path)
    ap.add_argument("--load", type=Path)
    args = ap.parse_args()
    import variants

    variants.apply(args.variant)
    embedder = CachingEmbedder(LocalE5(), CACHE)
    by_set = {}
    for s in args.sets.split(","):
        by_set[s] = await pools_of(s, load(SETS[s]), embedder, QUERIES[args.query])
    if "locomo" in args.sets:
        embedder.save()
    import pickle

    Path(f"/tmp/zh-pools-{args.variant}-{args.query}.pkl").write_bytes(pickle.dumps(by_set))  # noqa: ASYNC240
    weight = {"zh": args.madial_weight, "en": args.madial_weight}
    res = report(
        by_set, weight, f"variant={args.variant} query={args.query} madial-weight={args.madial_weight}"
    )
    if args.save:
        args.save.write_text(json.dumps({k: v for k, v in res.items()}, indent=1, default=list))


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    asyncio.run(main())
