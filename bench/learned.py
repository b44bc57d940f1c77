#!/usr/bin/env python
"""Does a ranking that learns from what replies used beat the shipped one? (issue 32, offline proof)

Each file's conversations are recorded and every question recalled once, as ``bench/locomo.py``
does, keeping each question's whole candidate pool with its features (the features do not depend
on the ranker, so any weights rank the pool offline exactly as recall would). Then a bot is
simulated: questions come one by one; the ``recall_k`` (8) best candidates under the weights in use
are injected (``Learner.explore`` now and then swaps the last for one just below the cut); the reply
"used" the injected notes that are evidence turns, with a share of those labels flipped (``noisy``:
10, 20, 30 %); the learner (``memory.recall.learner``) learns from that and nothing else.

Scored only on questions whose feedback the learner has not seen, R@5 / R@10 of the ranking in use
(learned weights only while they judge better than the shipped ones, see the learner), against the
shipped weights on the same questions:

- ``within``: each conversation on its own, from the shipped weights, questions in the file's
  order; the first half only teach, each later one is scored before it teaches.
- ``across``: leave one conversation out: the learner goes through the other conversations'
  questions (shuffled per seed), then scores the held-out one without learning. A file with one
  conversation (MADial: one user's archive) is split into five folds of its questions instead.

Categories 1-4 are scored (LoCoMo's convention; all are learned from). Several seeds (exploration,
flips and order), mean ± std.

    .venv/bin/python bench/learned.py [--data FILE ...] [--json OUT] [--seeds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import pickle
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np
from _embed_cache import CachingEmbedder
from _locomo_data import Conversation, load
from locomo import CACHE, DEFAULT_DATA, POOL_K, ranked, record

from astrbot_plugin_engram.memory import Engram, LocalE5
from astrbot_plugin_engram.memory.recall.features import COLUMNS
from astrbot_plugin_engram.memory.recall.learner import Judged, Learner, LearnSettings
from astrbot_plugin_engram.memory.recall.ranker import HAND_SET
from astrbot_plugin_engram.memory.recall.training import FITTED, fit_pairwise
from astrbot_plugin_engram.memory.text.words import word_set

INJECTED = 8  # the plugin's default recall_k
# the weights a bot starts from and the learner stays near: the shipped ones, unless --start
# changes some (a bot for which the shipped weights are wrong)
START = Learner().shipped.copy()
NOISE = (0.1, 0.2, 0.3)


@dataclass
class Asked:
    """One question's pool: its features (``COLUMNS`` x candidates), which candidates are evidence."""

    matrix: np.ndarray
    evidence: np.ndarray
    n_evidence: int
    scored: bool  # category 1-4
    speakers: list[str]  # each candidate's speaker, "conversation:name"
    dia: list[str] = field(default_factory=list)  # each candidate's turn id
    question: str = ""
    conv: str = ""


async def pools(path: Path, cache: bool = False) -> dict[str, list[Asked]]:
    """Every question's candidate pool, by conversation, in the file's order (``cache``: kept in
    bench/.cache/ between runs, for the attempts; rebuilt when the features changed)."""
    kept = CACHE / f"learned-pools-{path.stem}.pkl"
    if cache and kept.exists():
        saved = pickle.loads(kept.read_bytes())
        if saved["columns"] == COLUMNS:
            return saved["convs"]
    out = await _pools(path)
    if cache:
        kept.write_bytes(pickle.dumps({"columns": COLUMNS, "convs": out}))
    return out


async def _pools(path: Path) -> dict[str, list[Asked]]:
    convs: list[Conversation] = load(path)
    embedder = CachingEmbedder(LocalE5(), CACHE)
    with tempfile.TemporaryDirectory() as tmp:
        engram = await Engram.open(Path(tmp) / "learned.db", embedder, background=False)
        try:
            ids = {c.sample_id: await record(engram, c) for c in convs}
            await engram.embed_pending()
            out = {}
            for c in convs:
                speaker = {t.dia_id: f"{c.sample_id}:{t.speaker}" for t in c.turns}
                out[c.sample_id] = [
                    Asked(np.array([[f[n] for n in COLUMNS] for f in feats]).reshape(-1, len(COLUMNS)).T,
                          np.array([d in q.evidence for d in dia], bool), len(q.evidence), q.category != 5,
                          [speaker.get(d, "") for d in dia], list(dia), q.text, c.sample_id)
                    for q, dia, feats in await ranked(engram, c, ids[c.sample_id], POOL_K)]
        finally:
            await engram.close()
            embedder.save()
    return out


def fitted(sets: list[dict[str, list[Asked]]], l2: float = 0.1) -> np.ndarray:
    """Weights fitted on ``sets`` (files) as the shipped ones were (``bench/locomo.py``'s ``fit``:
    pairwise logistic regression over every question's pool, l2 .1, a small file's questions weighing
    more, the hand-set weights kept): with the scored file left out, the weights a bot whose data
    differs from the fitting data starts from."""
    names = [n for n in FITTED if n not in HAND_SET]
    asked = [sum(len(qs) for qs in s.values()) for s in sets]
    queries, weights = [], []
    for s, n in zip(sets, asked):
        for qs in s.values():
            for a in qs:
                rows = [dict(zip(COLUMNS, col)) for col in a.matrix.T.tolist()]
                queries.append((rows, a.evidence.tolist()))
                weights.append(math.sqrt(max(asked) / n))
    w = fit_pairwise(queries, names, l2=l2, weights=weights)
    return np.array([HAND_SET[c] if c in HAND_SET else w[c] for c in COLUMNS])


def with_speakers(convs: dict[str, list[Asked]]) -> tuple[dict[str, list[Asked]], list[str]]:
    """The pools with one more feature per speaker (1 for that speaker's lines), its shipped weight 0:
    a per-bot prior the learner may learn (which person's lines the replies use)."""
    names = sorted({sp for qs in convs.values() for a in qs for sp in a.speakers if sp})
    at = {n: i for i, n in enumerate(names)}
    out: dict[str, list[Asked]] = {}
    for k, qs in convs.items():
        out[k] = []
        for a in qs:
            extra = np.zeros((len(names), a.matrix.shape[1]))
            for j, sp in enumerate(a.speakers):
                if sp in at:
                    extra[at[sp], j] = 1.0
            out[k].append(replace(a, matrix=np.vstack([a.matrix, extra])))
    return out, names


class PresetGuard:
    """A different learner: no gradient, a few fixed weight vectors (arms: the start with one weight
    moved by ±``step``, and any ``presets``) judged on every recall's (used, ignored) pairs against
    the start; the best arm is served while its gain over the last ``window`` recalls beats
    ``margin`` and ``z`` standard errors (a stricter z than the learner's: many arms are compared)."""

    def __init__(self, settings: LearnSettings, start: np.ndarray, presets: list[np.ndarray],
                 step: float = 1.0, z: float = 3.0):
        self.settings, self.shipped, self.z = settings, start.copy(), z
        arms = [start + d * step * np.eye(len(start))[i] for i in range(len(start)) for d in (-1.0, 1.0)]
        self.arms = np.array(arms + list(presets))
        self.judged = [Judged() for _ in self.arms]
        self.best = 0

    @property
    def weights(self) -> np.ndarray:
        return self.arms[self.best]

    def _sure(self, j: Judged) -> bool:
        n = len(j.gains)
        if n < max(2, self.settings.serve_after):
            return False
        mean, se = float(np.mean(j.gains)), float(np.std(j.gains, ddof=1)) / math.sqrt(n)
        return mean > self.settings.margin and mean > self.z * se

    @property
    def serving(self) -> bool:
        return self._sure(self.judged[self.best])

    def served(self) -> np.ndarray:
        return self.weights if self.serving else self.shipped

    def explore(self, order: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
        return Learner.explore(self, order, k, rng)  # type: ignore[arg-type]

    def learn(self, features: np.ndarray, used: np.ndarray) -> bool:
        x, u = features.T, np.asarray(used, bool)
        if u.all() or not u.any():
            return False
        pairs = (x[u][:, None, :] - x[~u][None, :, :]).reshape(-1, x.shape[1])
        base = float(np.mean(pairs @ self.shipped > 0))
        acc = np.mean((pairs @ self.arms.T) > 0, axis=0)
        for j, a in zip(self.judged, acc.tolist()):
            j.add(a - base, self.settings.window)
        self.best = int(np.argmax([j.gain() for j in self.judged]))
        return True


WORDS: dict[tuple[str, str], frozenset[str]] = {}  # (conversation, turn id) -> the turn's words
TAU = 0.2  # the word overlap (Jaccard) from which a past question counts as similar


NEAREST = 5  # past questions an expansion draws on at most (the most similar)


@dataclass
class Expanding(Learner):
    """Relevance feedback as one more feature, its shipped weight 0: the words of the notes replies
    used for the ``NEAREST`` most similar past questions (Jaccard of their words ≥ ``TAU``, weighted
    by it) expand the question; a candidate scores the share of that expansion's word mass it holds.
    The learner learns the feature's weight with the others."""

    past: list[tuple[frozenset[str], Counter[str]]] = field(default_factory=list)

    def matrix(self, a: Asked) -> np.ndarray:
        q = word_set(a.question)
        near: list[tuple[float, Counter[str]]] = []
        for words, used in self.past:
            union = len(q | words)
            sim = len(q & words) / union if union else 0.0
            if sim >= TAU:
                near.append((sim, used))
        bag: dict[str, float] = {}
        for sim, used in sorted(near, key=lambda x: -x[0])[:NEAREST]:
            for t, n in used.items():
                bag[t] = bag.get(t, 0.0) + sim * n
        total = sum(bag.values()) or 1.0
        f = [sum(bag.get(t, 0.0) for t in WORDS.get((a.conv, d), ())) / total for d in a.dia] if bag else \
            [0.0] * len(a.dia)
        return np.vstack([a.matrix, np.array(f)[None, :]])

    def remember(self, a: Asked, shown: np.ndarray, used: np.ndarray) -> None:
        bag: Counter[str] = Counter()
        for j, u in zip(shown.tolist(), used.tolist()):
            if u:
                bag.update(WORDS.get((a.conv, a.dia[j]), ()))
        if bag:
            self.past.append((frozenset(word_set(a.question)), bag))


def matrix_of(learner: object, a: Asked) -> np.ndarray:
    return learner.matrix(a) if isinstance(learner, Expanding) else a.matrix


VARIANT = "pairwise"
PRESETS: list[np.ndarray] = []


def new_learner(settings: LearnSettings):  # type: ignore[no-untyped-def]
    if VARIANT == "presets":
        return PresetGuard(settings, START.copy(), PRESETS)
    if VARIANT == "expand":
        return Expanding(settings, np.r_[START, 0.0])
    return Learner(settings, START.copy())


def recall_at(a: Asked, w: np.ndarray, m: np.ndarray | None = None) -> tuple[float, float]:
    top = np.argsort(-(w @ (a.matrix if m is None else m)), kind="stable")[:10]
    hit = a.evidence[top]
    return hit[:5].sum() / a.n_evidence, hit.sum() / a.n_evidence


def refit(asked: list[Asked], l2: float = 1.0) -> np.ndarray:
    """Weights fitted with every candidate's label (not only the injected ones') on ``asked``
    themselves: pairwise logistic regression, its prior the shipped weights (Newton's method). On
    the questions it is scored on, it bounds what any weights of these features can learn."""
    w0 = START
    diffs, sw = [], []
    for a in asked:
        x, rel = a.matrix.T, a.evidence
        if rel.any() and not rel.all():
            d = (x[rel][:, None, :] - x[~rel][None, :, :]).reshape(-1, x.shape[1])
            diffs.append(d)
            sw.append(np.full(len(d), 1.0 / len(d)))
    if not diffs:
        return w0
    d, sw_ = np.vstack(diffs), np.concatenate(sw)
    w = w0.copy()
    for _ in range(30):
        p = 1.0 / (1.0 + np.exp(-np.clip(d @ w, -30, 30)))
        grad = -(d.T @ (sw_ * (1 - p))) + l2 * (w - w0)
        hess = (d * (sw_ * p * (1 - p))[:, None]).T @ d + l2 * np.eye(len(w))
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-6:
            break
    return w


def searched(asked: list[Asked], sweeps: int = 2) -> np.ndarray:
    """Weights found by coordinate ascent on R@10 itself over ``asked`` (from the shipped ones,
    each weight moved by ±0.5, 1, 2 while that helps): an in-sample search, optimistic on purpose."""
    def r10(w: np.ndarray) -> float:
        return float(np.mean([recall_at(a, w)[1] for a in asked]))
    w = START.copy()
    best = r10(w)
    for _ in range(sweeps):
        for i in range(len(w)):
            for delta in (-2.0, -1.0, -0.5, 0.5, 1.0, 2.0):
                t = w.copy()
                t[i] += delta
                if (got := r10(t)) > best + 1e-9:
                    best, w = got, t
    return w


def limits(groups: list[list[Asked]], search: bool) -> dict:
    """On each group of scored questions: the best R@10 any ranking of the pool reaches (its
    evidence in the pool), and the R@5 / R@10 of weights refitted on the group itself (and, with
    ``search``, of weights searched for on it)."""
    pool, fitted, found = [], [], []
    for group in groups:
        w = refit(group)
        ws = searched(group) if search else None
        for a in group:
            pool.append(min(10, int(a.evidence.sum())) / a.n_evidence)
            fitted.append(recall_at(a, w))
            if ws is not None:
                found.append(recall_at(a, ws))
    r = np.mean(fitted, axis=0)
    out = {"pool_r10": round(float(np.mean(pool)), 4),
           "refit_in_sample": {"r5": round(float(r[0]), 4), "r10": round(float(r[1]), 4)}}
    if found:
        f = np.mean(found, axis=0)
        out["searched_in_sample"] = {"r5": round(float(f[0]), 4), "r10": round(float(f[1]), 4)}
    return out


def scored_groups(convs: dict[str, list[Asked]], setting: str) -> list[list[Asked]]:
    """The questions each setting scores, by conversation (across, one conversation: as one group)."""
    if setting == "within":
        return [[a for i, a in enumerate(qs) if i >= len(qs) / 2 and a.scored] for qs in convs.values()]
    return [[a for a in qs if a.scored] for qs in convs.values()]


def three(a: Asked, learner: Learner) -> tuple[float, ...]:
    """R@5 and R@10 of the shipped weights, the served ones and the learned ones (served or not),
    and whether the learned ones were served."""
    m = matrix_of(learner, a)
    return (recall_at(a, learner.shipped, m) + recall_at(a, learner.served(), m)
            + recall_at(a, learner.weights, m) + (float(learner.serving),))


def teach(learner: Learner, a: Asked, flip: float, rng: np.random.Generator) -> None:
    """What the bot injects for this question, what the (simulated) reply used, learned from."""
    m = matrix_of(learner, a)
    order = np.argsort(-(learner.served() @ m), kind="stable")
    shown = learner.explore(order, INJECTED, rng)
    used = a.evidence[shown] ^ (rng.random(len(shown)) < flip)
    learner.learn(m[:, shown], used)
    if isinstance(learner, Expanding):
        learner.remember(a, shown, used)


def within(convs: dict[str, list[Asked]], flip: float, seed: int, settings: LearnSettings) -> np.ndarray:
    """(r5, r10) of the shipped, the served and the learned weights (served or not) per scored question."""
    rng = np.random.default_rng(seed)
    rows = []
    for asked in convs.values():
        learner = new_learner(settings)
        for i, a in enumerate(asked):
            if i >= len(asked) / 2 and a.scored:
                rows.append(three(a, learner))
            teach(learner, a, flip, rng)
    return np.array(rows)


def folds(convs: dict[str, list[Asked]], rng: np.random.Generator) -> list[tuple[list[Asked], list[Asked]]]:
    """(taught, scored) pairs: leave one conversation out, or five folds of one conversation's questions."""
    if len(convs) > 1:
        return [([a for k, qs in convs.items() if k != held for a in qs], convs[held]) for held in convs]
    asked = next(iter(convs.values()))
    parts = np.array_split(rng.permutation(len(asked)), 5)
    return [([asked[i] for p in parts if p is not part for i in p], [asked[i] for i in part])
            for part in parts]


def across(convs: dict[str, list[Asked]], flip: float, seed: int, settings: LearnSettings) -> np.ndarray:
    rng = np.random.default_rng(seed)
    rows = []
    for taught, scored in folds(convs, rng):
        learner = new_learner(settings)
        for i in rng.permutation(len(taught)).tolist():
            teach(learner, taught[i], flip, rng)
        rows += [three(a, learner) for a in scored if a.scored]
    return np.array(rows)


def measure(convs: dict[str, list[Asked]], seeds: int, settings: LearnSettings, search: bool = False) -> dict:
    out: dict = {}
    for name, how in (("within", within), ("across", across)):
        s: dict = {}
        for flip in (0.0, *NOISE):
            runs = [how(convs, flip, seed, settings).mean(axis=0) for seed in range(seeds)]
            mean, std = np.mean(runs, axis=0), np.std(runs, axis=0)
            got, raw = (
                {"r5": round(float(mean[at]), 4), "r10": round(float(mean[at + 1]), 4),
                 "r5_std": round(float(std[at]), 4), "r10_std": round(float(std[at + 1]), 4)}
                for at in (2, 4))
            # the share of the scored questions the learned weights ranked
            got["served"] = round(float(mean[6]), 4)
            if flip == 0.0:
                s["shipped"] = {"r5": round(float(mean[0]), 4), "r10": round(float(mean[1]), 4)}
                s["learned"], s["noisy"] = got, {}
                s["unguarded"] = {**raw, "noisy": {}}  # the learned weights always in use
            else:
                s["noisy"][str(flip)] = got
                s["unguarded"]["noisy"][str(flip)] = raw
        s["questions"] = len(how(convs, 0.0, 0, replace(settings, explore=0.0)))
        s["limits"] = limits(scored_groups(convs, name), search)
        out[name] = s
    return out


def table(name: str, res: dict) -> str:
    lines = [f"{name}", "",
             "| setting | questions | shipped R@5 / R@10 | learned | 10 % flipped | 20 % | 30 % |",
             "|---|---|---|---|---|---|---|"]
    for setting in ("within", "across"):
        s = res[setting]

        def cell(r: dict) -> str:
            served = f" ({r['served']:.0%} served)" if r.get("served") else ""
            return f"{r['r5']:.3f} / {r['r10']:.3f} ± {r['r10_std']:.3f}{served}"
        shipped = s["shipped"]
        lines.append(f"| {setting} | {s['questions']} | {shipped['r5']:.3f} / {shipped['r10']:.3f} | "
                     f"{cell(s['learned'])} | " + " | ".join(cell(s['noisy'][str(f)]) for f in NOISE) + " |")
        u = s["unguarded"]
        lines.append(f"| {setting}, unguarded | | | {cell(u)} | "
                     + " | ".join(cell(u['noisy'][str(f)]) for f in NOISE) + " |")
        lim = s["limits"]
        lines.append(f"| {setting}, refit with every label on the scored questions (in sample) | | | "
                     f"{lim['refit_in_sample']['r5']:.3f} / {lim['refit_in_sample']['r10']:.3f} | | | |")
        if "searched_in_sample" in lim:
            sr = lim["searched_in_sample"]
            lines.append(f"| {setting}, weights searched for R@10 on the scored questions (in sample) | | | "
                         f"{sr['r5']:.3f} / {sr['r10']:.3f} | | | |")
        lines.append(f"| {setting}, the pool's evidence (no ranking does better at 10) | | | "
                     f"- / {lim['pool_r10']:.3f} | | | |")
    return "\n".join(lines) + "\n"


def record_cpu(runs: int) -> dict[str, float]:
    """CPU time (``time.process_time``) the reply path spends on the learned ranking per injection:
    ``explore``, ``record`` (8 injected and 8 held-back notes with every feature) and ``replied``,
    over ``runs`` injections in 300 places (their logs full, as in a busy bot)."""
    from astrbot_plugin_engram.memory.model import Episode, Hit
    from astrbot_plugin_engram.memory.recall.ranking import LearnedRanking

    rng = np.random.default_rng(0)
    hits = [Hit("episode", i, f"note {i} about the picnic plan", 0.0,
                {c: float(v) for c, v in zip(COLUMNS, rng.random(len(COLUMNS)))},
                Episode(place="qq:group:1", content=f"note {i}")) for i in range(16)]
    ranking = LearnedRanking()
    notes = {h.key: h.text for h in hits[:8]}
    for i in range(300 * 20):  # every place's log full first
        ranking.record(f"qq:group:{i % 300}", hits[:8], hits[8:])
    t0 = time.process_time()
    for i in range(runs):
        place = f"qq:group:{i % 300}"
        ranking.explore(place)
        rid = ranking.record(place, hits[:8], hits[8:])
        ranking.replied(rid, "a reply about the picnic plan", notes)
    took = time.process_time() - t0
    return {"runs": runs, "cpu_us_per_injection": round(took / runs * 1e6, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--record-cpu", type=int, metavar="RUNS",
                    help="only measure the CPU the reply path spends recording, per injection, and exit")
    ap.add_argument("--data", type=Path, nargs="+", default=[DEFAULT_DATA])
    ap.add_argument("--json", type=Path, help="write the results here")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--search", action="store_true",
                    help="also search weights for R@10 on the scored questions themselves (slow on LoCoMo)")
    for f in ("rate", "pull", "bound", "explore", "margin"):
        ap.add_argument(f"--{f}", type=float, default=getattr(LearnSettings(), f))
    ap.add_argument("--serve-after", type=int, default=LearnSettings().serve_after)
    ap.add_argument("--window", type=int, default=LearnSettings().window)
    ap.add_argument("--cache", action="store_true", help="keep the pools in bench/.cache/ between runs")
    ap.add_argument("--start-fit", type=Path, nargs="+", metavar="FILE",
                    help="start from weights fitted as the shipped ones were, on these files only (the "
                         "scored file left out: out of sample); the 'shipped' rows then show these")
    ap.add_argument("--variant", choices=("pairwise", "speakers", "presets", "expand"), default="pairwise",
                    help="the learner (default) / with a per-speaker prior feature / a guard over presets / "
                         "with relevance feedback from similar past questions as a feature")
    ap.add_argument("--start", action="append", default=[], metavar="NAME=VALUE",
                    help="start from the shipped weights with this one changed (repeatable): a bot "
                         "for which they are wrong; the 'shipped' rows then show these weights")
    args = ap.parse_args()
    if args.record_cpu:
        print(record_cpu(args.record_cpu))
        return
    global START, VARIANT
    for given in args.start:
        name, _, value = given.partition("=")
        if name not in COLUMNS:
            ap.error(f"--start: no feature named {name}")
        START[COLUMNS.index(name)] = float(value)
    settings = LearnSettings(args.rate, args.pull, args.bound, args.explore, args.serve_after, args.margin,
                             args.window)
    VARIANT = args.variant
    base = START.copy()
    if args.start_fit:
        fit_sets = [asyncio.run(pools(p, args.cache)) for p in args.start_fit]
        START = fitted(fit_sets)
        if VARIANT == "presets":  # each fitting file's own fit is a preset too
            PRESETS.extend(fitted([s]) for s in fit_sets)
        print("start (fitted on " + ", ".join(p.stem for p in args.start_fit) + "): "
              + ", ".join(f"{c} {w:+.2f} ({w - b:+.2f})" for c, w, b in zip(COLUMNS, START, base)
                          if abs(w - b) > 0.05))
    sets = {}
    for path in args.data:
        t0 = time.perf_counter()
        convs = asyncio.run(pools(path, args.cache))
        if VARIANT == "expand":
            WORDS.update({(c.sample_id, t.dia_id): frozenset(word_set(t.text)) for c in load(path)
                          for t in c.turns})
        if VARIANT == "speakers":
            convs, speakers = with_speakers(convs)
            START = np.r_[START[: len(COLUMNS)], np.zeros(len(speakers))]
        sets[str(path)] = res = measure(convs, args.seeds, settings, args.search)
        n = sum(len(q) for q in convs.values())
        took = time.perf_counter() - t0
        print(table(f"{path} ({len(convs)} conversations, {n} questions, {took:.0f}s)", res))
    out = {"data": [str(p) for p in args.data], "settings": asdict(settings),
           "seeds": args.seeds, "sets": sets}
    if len(sets) == 1:
        out.update(next(iter(sets.values())))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
