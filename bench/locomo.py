#!/usr/bin/env python
"""Evidence recall@5/@10 on LoCoMo through Engram's public API, for four rankers.

Each conversation is recorded as episodes in its own space (``locomo:<sample_id>``), each question
is recalled with that space's audience. A query that is a piece of dialogue (MADial's
``<Speaker>:"line"`` contexts) is sent as the plugin sends one (``memory.compose.recall_query``: the
latest message first, then the turns before it; ``--query raw`` sends the file's text as it is).
Rankers: ``keyword`` (BM25 alone), ``embedding`` (cosine alone) and ``hybrid`` (the LinearRanker
with weights fitted by pairwise logistic regression over recall's candidate pools — each question's
evidence above its other candidates — leave one conversation out: each conversation is scored with
weights fitted on the others). The weights fitted on every conversation are printed at the end, in
the form of ``memory.ranker.DEFAULT_WEIGHTS``.
``shipped`` is always reported too: the LinearRanker with ``DEFAULT_WEIGHTS`` (``--fixed``: that one
only, no fitting). Several ``--data`` files are recorded side by side and fitted together (the
shipped weights come from LoCoMo dev + MADial zh + en); each file's questions weigh
sqrt(largest file's questions / its own) each in the fit, and results are reported per file.

    .venv/bin/python bench/locomo.py [--data FILE ...] [--json OUT] [--fixed] [--query plugin|raw]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import re
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from _embed_cache import CachingEmbedder
from _locomo_data import Conversation, Question, load

from astrbot_plugin_engram.memory import Audience, Engram, Episode, FeatureRanker, LocalE5, NoEmbedder
from astrbot_plugin_engram.memory.compose import recall_query
from astrbot_plugin_engram.memory.recall.ranker import DEFAULT_WEIGHTS, HAND_SET, LinearRanker, Ranker
from astrbot_plugin_engram.memory.recall.training import FITTED, fit_logistic, fit_pairwise

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = HERE.parent.parent / "shared" / "data" / "locomo-dev.json"
CACHE = HERE / ".cache"
POOL_K = 200  # recall this many to see a question's whole candidate pool with its features
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


@dataclass
class Pool:
    """One question's recall candidates: their dia_ids and features (from ``recall``)."""

    conv: str
    q: Question
    dia: list[str]
    feats: list[dict[str, float]]
    weight: float = 1.0  # of this question in the fit


_LINE = re.compile(r'^<([^>]*)>:\s*"?(.*?)"?\s*$')


def dialogue_lines(text: str) -> list[str] | None:
    """The lines of a dialogue context (``<Speaker>:"line"``, one a line) without the speaker marks;
    None for a plain question. A line without its mark is kept as it is, brackets stripped."""
    lines = [ln for ln in text.split("\n") if ln.strip()]
    parsed = [_LINE.match(ln) for ln in lines]
    if not any(parsed):
        return None
    return [m[2] if m else ln.strip().strip("<>").strip('"') for m, ln in zip(parsed, lines)]


def plugin_query(text: str) -> str:
    """The query the plugin sends for this context: its last line is the latest message."""
    lines = dialogue_lines(text)
    return recall_query(text, []) if lines is None else recall_query(lines[-1], lines[:-1])


def place(sample_id: str) -> str:
    return f"locomo:{sample_id}"


async def record(engram: Engram, conv: Conversation) -> dict[int, str]:
    """Record one conversation as episodes; returns episode id -> dia_id."""
    sp = place(conv.sample_id)
    eps = [Episode(place=sp, content=t.text, actor=f"{sp}:{t.speaker}", actor_name=t.speaker,
                   kind="message_in", time=t.time, source="locomo",
                   meta={"dia_id": t.dia_id, **({"image": True} if t.has_image else {})})
           for t in conv.turns]
    ids = await engram.record_many(eps)
    return {i: t.dia_id for i, t in zip(ids, conv.turns)}


QUERY = {"plugin": plugin_query, "raw": lambda text: text}
query_of = plugin_query


async def ranked(engram: Engram, conv: Conversation, ids: dict[int, str], k: int
                 ) -> list[tuple[Question, list[str], list[dict[str, float]]]]:
    """Recall every question of ``conv`` with the engram's current ranker."""
    aud, now = Audience(place(conv.sample_id)), conv.end
    out = []
    for q in conv.questions:
        hits = await engram.recall(query_of(q.text), aud, k=k, now=now)
        out.append((q, [ids[h.id] for h in hits if h.kind == "episode"], [h.features for h in hits]))
    return out


async def crowd(engram: Engram, n: int) -> None:
    """``n`` episodes of other chats (bench/perf.py's corpus, not embedded): a store shared by many."""
    from _perf_corpus import items

    eps = [e for e in items(n + n // 10, seed=7) if isinstance(e, Episode)][:n]
    for i in range(0, len(eps), 5000):
        await engram.record_many(eps[i : i + 5000])
    print(f"recorded {len(eps)} episodes of {len({e.place for e in eps})} other chats")


def recall_at(evidence: frozenset[str], dia: Sequence[str], k: int) -> float:
    return len(evidence & set(dia[:k])) / len(evidence)


def fit(pools: Sequence[Pool], l2: float | None, how: str = "pairwise",
        held: dict[str, float] | None = None) -> LinearRanker:
    """A LinearRanker whose fitted weights come from logistic regression on ``pools``; the hand-set
    weights (and ``held``: ``--weight``) are kept, not fitted."""
    held = {**HAND_SET, **(held or {})}
    names = [n for n in FITTED if n not in held]
    if how == "pairwise":
        w = fit_pairwise([(p.feats, [d in p.q.evidence for d in p.dia]) for p in pools], names,
                         l2=0.1 if l2 is None else l2, weights=[p.weight for p in pools])
        return LinearRanker({**w, **held}, 0.0)
    rows, labels, sw = [], [], []
    for p in pools:
        for d, f in zip(p.dia, p.feats):
            rows.append(f)
            labels.append(1.0 if d in p.q.evidence else 0.0)
            sw.append(p.weight * (1.0 / len(p.q.evidence) if d in p.q.evidence else 1.0))
    w, b = fit_logistic(rows, labels, names, l2=1.0 if l2 is None else l2, weights=sw)
    return LinearRanker({**w, **held}, b)


def summarise(results: list[tuple[Question, list[str]]]) -> dict:
    """r5/r10 over categories 1-4, r5_all/r10_all over all, and per category."""
    def mean(qs: list[tuple[Question, list[str]]], k: int) -> float:
        return round(statistics.fmean(recall_at(q.evidence, d, k) for q, d in qs), 4) if qs else 0.0
    main = [r for r in results if r[0].category != 5]
    per = {CATEGORIES[c]: {"n": len(sel), "r5": mean(sel, 5), "r10": mean(sel, 10)}
           for c in sorted(CATEGORIES) if (sel := [r for r in results if r[0].category == c])}
    return {"r5": mean(main, 5), "r10": mean(main, 10), "r5_all": mean(results, 5),
            "r10_all": mean(results, 10), "n": len(main), "n_all": len(results), "per_category": per}


async def run(args: argparse.Namespace) -> dict:
    global query_of
    query_of = QUERY[args.query]
    files: dict[str, list[Conversation]] = {}
    for path in args.data:
        convs = load(path)
        if args.conversations:
            keep = set(args.conversations.split(","))
            convs = [c for c in convs if c.sample_id in keep]
        if convs:
            files[str(path)] = convs
    inner = LocalE5() if args.embedder == "local" else NoEmbedder()
    embedder = CachingEmbedder(inner, CACHE) if args.embedder == "local" else inner
    with tempfile.TemporaryDirectory() as tmp:
        engram = await Engram.open(Path(tmp) / "locomo.db", embedder, background=False)
        try:
            return await evaluate(engram, embedder, files, args)
        finally:
            await engram.close()


async def evaluate(engram: Engram, embedder: object, files: dict[str, list[Conversation]],
                   args: argparse.Namespace) -> dict:
    convs = [c for cs in files.values() for c in cs]
    file_of = {c.sample_id: f for f, cs in files.items() for c in cs}
    t0 = time.perf_counter()
    ids = {c.sample_id: await record(engram, c) for c in convs}
    await engram.embed_pending()
    if isinstance(embedder, CachingEmbedder):
        embedder.save()
    n_turns = sum(len(c.turns) for c in convs)
    print(f"recorded and embedded {n_turns} turns in {time.perf_counter() - t0:.1f}s")
    if args.crowd:
        await crowd(engram, args.crowd)
    pools: list[Pool] = []
    t0 = time.perf_counter()
    for c in convs:
        pools += [Pool(c.sample_id, q, d, f) for q, d, f in await ranked(engram, c, ids[c.sample_id], POOL_K)]
    if isinstance(embedder, CachingEmbedder):
        embedder.save()
    asked = {f: sum(len(c.questions) for c in cs) for f, cs in files.items()}
    for p in pools:  # a small file's questions weigh more each, short of the file weighing as a big one
        p.weight = math.sqrt(max(asked.values()) / asked[file_of[p.conv]])
    sizes = [len(p.dia) for p in pools]
    print(f"recalled {sum(asked.values())} questions in {time.perf_counter() - t0:.1f}s; pool size mean "
          f"{statistics.fmean(sizes):.0f}, max {max(sizes)}; evidence in pool (cat 1-4) "
          f"{pool_coverage(pools):.3f}")
    results: dict[str, dict[str, list[tuple[Question, list[str]]]]] = {f: {} for f in files}

    async def ranking(name: str, ranker: Ranker, which: list[Conversation]) -> None:
        engram.ranker = ranker
        for c in which:
            res = [(q, d) for q, d, _ in await ranked(engram, c, ids[c.sample_id], 10)]
            results[file_of[c.sample_id]].setdefault(name, []).extend(res)
            folds.setdefault(name, {})[c.sample_id] = summarise(res)

    folds: dict[str, dict[str, dict]] = {}
    await ranking("keyword", FeatureRanker("kw"), convs)
    if not isinstance(embedder, NoEmbedder):
        await ranking("embedding", FeatureRanker("cos"), convs)
        if getattr(embedder, "asymmetric", False):  # the items' second vectors (cos_qq) alone
            await ranking("embedding as a query", FeatureRanker("cos_qq"), convs)
    if not args.fixed:
        for c in convs:  # leave one conversation out
            train = [p for p in pools if p.conv != c.sample_id] if len(convs) > 1 else pools
            await ranking("hybrid", fit(train, args.l2, args.fit, args.weight), [c])
    await ranking("shipped", LinearRanker({**DEFAULT_WEIGHTS, **args.weight}), convs)
    sets = {}
    for f, cs in files.items():
        rankers = {name: summarise(res) for name, res in results[f].items()}
        if "hybrid" in rankers:
            h = rankers["hybrid"]
            h["folds"] = {c.sample_id: {k: folds["hybrid"][c.sample_id][k] for k in ("r5", "r10")}
                          for c in cs}
            for key in ("r5", "r10"):
                vals = [v[key] for v in h["folds"].values()]
                h[f"{key}_fold_mean"] = round(statistics.fmean(vals), 4)
                h[f"{key}_fold_std"] = round(statistics.pstdev(vals), 4)
        sets[f] = {"conversations": [c.sample_id for c in cs], "questions": asked[f], "rankers": rankers}
    final = fit(pools, args.l2, args.fit, args.weight)
    out = {"data": list(files), "query": args.query, "sets": sets, "weights": final.weights,
           "bias": final.bias}
    if len(sets) == 1:
        out.update(next(iter(sets.values())))
    return out


def pool_coverage(pools: Sequence[Pool]) -> float:
    main = [p for p in pools if p.q.category != 5]
    return statistics.fmean(len(p.q.evidence & set(p.dia)) / len(p.q.evidence) for p in main)


def table(out: dict) -> str:
    cats = list(CATEGORIES.values())
    head = ("| ranker | R@5 1-4 | R@10 1-4 | R@5 all | R@10 all | "
            + " | ".join(f"{c} R@5/@10" for c in cats) + " |")
    lines = []
    for f, st in out["sets"].items():
        lines += [f"{f} ({st['questions']} questions, query: {out['query']})", "", head,
                  "|" + "---|" * (5 + len(cats))]
        for name, r in st["rankers"].items():
            per = r["per_category"]
            cells = [f"{per[c]['r5']:.3f} / {per[c]['r10']:.3f}" if c in per else "-" for c in cats]
            label = "hybrid (cross-validated)" if name == "hybrid" else name
            lines.append(f"| {label} | {r['r5']:.3f} | {r['r10']:.3f} | {r['r5_all']:.3f} | "
                         f"{r['r10_all']:.3f} | " + " | ".join(cells) + " |")
        h = st["rankers"].get("hybrid")
        if h:
            lines.append("")
            lines.append(f"hybrid across folds (cat 1-4): R@5 {h['r5_fold_mean']:.3f} ± "
                         f"{h['r5_fold_std']:.3f}, R@10 {h['r10_fold_mean']:.3f} ± {h['r10_fold_std']:.3f}")
            lines.append("folds: " + ", ".join(f"{k} {v['r5']:.3f}/{v['r10']:.3f}"
                                               for k, v in h["folds"].items()))
        lines.append("")
    return "\n".join(lines)


def held_weights(ap: argparse.ArgumentParser, given: list[str]) -> dict[str, float]:
    """``--weight NAME=VALUE`` options as a dict (a clear error for a malformed one or an unknown name)."""
    try:
        weights = {k: float(v) for k, v in (w.split("=", 1) for w in given)}
    except ValueError:
        ap.error("--weight wants NAME=VALUE, e.g. cos_qq=2.0")
    if unknown := set(weights) - set(DEFAULT_WEIGHTS):
        ap.error(f"--weight: no feature named {', '.join(sorted(unknown))}")
    return weights


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, nargs="+", default=[DEFAULT_DATA],
                    help="files in the LoCoMo format (several: recorded side by side, fitted together)")
    ap.add_argument("--query", choices=sorted(QUERY), default="plugin",
                    help="send a dialogue context as the plugin's query (default) or as the file has it")
    ap.add_argument("--json", type=Path, help="write the results here")
    ap.add_argument("--embedder", choices=("local", "none"), default="local")
    ap.add_argument("--conversations", help="comma-separated sample_ids (default: all)")
    ap.add_argument("--fit", choices=("pairwise", "pointwise"), default="pairwise",
                    help="logistic regression on (relevant - other) pairs per question, or on rows")
    ap.add_argument("--l2", type=float, help="L2 penalty (default 0.1 pairwise, 1.0 pointwise)")
    ap.add_argument("--crowd", type=int, default=0, metavar="N",
                    help="first fill the store with N episodes of other chats (a bot in many chats)")
    ap.add_argument("--fixed", action="store_true",
                    help="the shipped LinearRanker (DEFAULT_WEIGHTS) only, no cross-validated fit")
    ap.add_argument("--approx", action="store_true",
                    help="search every place's vectors through an inverted file (index.vectors."
                         "APPROX_FROM = 0), as the largest places of a big store are: its recall cost")
    ap.add_argument("--weight", action="append", default=[], metavar="NAME=VALUE",
                    help="hold a feature's weight at VALUE in the shipped ranker and in every fit "
                         "(repeatable; e.g. cos_qq=0 for the ranker without the item-as-query cosine)")
    args = ap.parse_args()
    args.weight = held_weights(ap, args.weight)
    if args.approx:
        from astrbot_plugin_engram.memory.index import vectors

        vectors.APPROX_FROM, vectors.BUILD_BESIDE = 0, False  # every search through its file
    out = asyncio.run(run(args))
    print(table(out))
    print("\nweights fitted on all conversations (the registry's weights in memory/recall/features.py):")
    print("DEFAULT_WEIGHTS: dict[str, float] = {")
    for k, v in out["weights"].items():
        print(f'    "{k}": {v:.3f},')
    print(f"}}\nDEFAULT_BIAS = {out['bias']:.3f}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
