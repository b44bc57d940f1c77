"""The keyword index's fast paths (``KeywordIndex.best``, ``_estimated_counts``, ``_sum_by_row``) give
exactly what the plain formulas they replaced give: the same rows, the same float scores, in the same
order, on random indexes and doclists (rows of other groups, rows the index never saw, cut lists)."""

from __future__ import annotations

from collections.abc import Collection

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from astrbot_plugin_engram.memory.index import keywords
from astrbot_plugin_engram.memory.index.keywords import K1, NO_GROUP, B, KeywordIndex, _sum_by_row


def reference_sum_by_row(rows: np.ndarray, weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    ids, at = np.unique(rows, return_inverse=True)
    return ids, np.bincount(at, weight, len(ids))


def reference_best(index: KeywordIndex, lists: list[np.ndarray], groups: Collection[int] | None, limit: int,
                   filtered: bool, cap: int) -> list[tuple[int, float]]:
    """``KeywordIndex.best`` as it was written before its fast paths (session 16)."""
    if not lists or limit <= 0:
        return []
    group, length_of = index._group, index._length
    rows = np.concatenate(lists)
    term = np.repeat(np.arange(len(lists)), [len(r) for r in lists])
    known = rows < len(group)
    wanted = None
    if groups is None:
        n_rows, words = int(index._rows.sum()), float(index._words.sum())
    else:
        wanted = np.zeros(len(index._rows) + 1, bool)
        g = np.fromiter(groups, np.int64, len(groups))
        wanted[g[(g >= 0) & (g < len(index._rows))]] = True
        n_rows, words = int(index._rows[wanted[:-1]].sum()), float(index._words[wanted[:-1]].sum())
        if filtered:
            keep = known.copy()
            keep[known] = wanted[group[rows[known]]]
            rows, term, known = rows[keep], term[keep], known[keep]
    if not len(rows):
        return []
    df = np.bincount(term, minlength=len(lists)).astype(np.float64)
    cut = [t for t, r in enumerate(lists) if len(r) > cap]
    if cut:
        cl = [lists[t] for t in cut]
        first = np.array([int(r[0]) for r in cl], np.int64)
        start = int(first.min())
        tail = group[start:]
        searched = np.flatnonzero(tail != NO_GROUP if wanted is None else wanted[tail]) + start
        covered = len(searched) - np.searchsorted(searched, first)
        held = np.array([len(r) if wanted is None else
                         int(np.count_nonzero(wanted[group[r[r < len(group)]]])) for r in cl], np.float64)
        est = np.where(covered > 0, np.minimum(n_rows, held * n_rows / np.maximum(covered, 1)), held)
        df[cut] = np.maximum(df[cut], est)
    n_rows = max(1, n_rows, int(df.max()))
    avg = words / n_rows or 1.0
    idf = np.maximum(np.log((n_rows - df + 0.5) / (df + 0.5)), 1e-6)
    length = np.full(len(rows), avg)
    length[known] = length_of[rows[known]]
    length[length <= 0] = avg
    weight = idf[term] * (K1 + 1) / (1 + K1 * (1 - B + B * length / avg))
    ids, score = reference_sum_by_row(rows, weight)
    if len(score) > limit:
        edge = np.partition(score, len(score) - limit)[len(score) - limit]
        some = np.flatnonzero(score >= edge)
        ids, score = ids[some], score[some]
    top = np.argsort(-score, kind="stable")[:limit]
    return list(zip(ids[top].tolist(), score[top].tolist()))


@st.composite
def searches(draw: st.DrawFn) -> tuple[KeywordIndex, list[np.ndarray], list[int] | None, int, bool, int]:
    """A random index (some rows dropped, some groups empty) and a search of it: each word's rowids
    ascending, some of other groups, some beyond what the index knows, some lists past ``cap``."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    n, groups = draw(st.integers(1, 3000)), draw(st.integers(1, 6))
    index = KeywordIndex("episodes")
    ids = np.arange(n)[rng.random(n) < draw(st.floats(0.2, 1.0))]
    index.put(ids.tolist(), rng.integers(0, groups, len(ids)).tolist(),
              rng.integers(1, 30, len(ids)).tolist())
    index.drop(ids[rng.random(len(ids)) < 0.1])
    cap = draw(st.integers(5, 200))
    lists = []
    for _ in range(draw(st.integers(1, 12))):
        share = draw(st.floats(0.0, 1.0))
        rows = np.flatnonzero(rng.random(n + 50) < share)  # up to 50 rows beyond the index's rows
        lists.append(rows[-(cap + 1):] if len(rows) > cap else rows)  # the newest cap + 1, as the store reads
    searched = draw(st.none() | st.lists(st.integers(-1, groups + 1), max_size=4))
    return index, lists, searched, draw(st.integers(0, 60)), draw(st.booleans()), cap


@given(searches())
def test_best_gives_exactly_what_the_plain_formula_gives(
        search: tuple[KeywordIndex, list[np.ndarray], list[int] | None, int, bool, int]) -> None:
    index, lists, groups, limit, filtered, cap = search
    saved = keywords.DOCLIST_CAP
    keywords.DOCLIST_CAP = cap
    try:
        assert index.best(lists, groups, limit, filtered) == reference_best(index, lists, groups, limit,
                                                                            filtered, cap)
    finally:
        keywords.DOCLIST_CAP = saved


@given(st.integers(0, 2**32 - 1), st.integers(1, 40), st.sampled_from([10, 10_000, 5_000_000, 2**50]))
def test_sum_by_row_adds_each_rows_weights_in_the_order_given(seed: int, runs: int, span: int) -> None:
    """Dense or sparse rowids, ascending runs (each word's list) or not: the same ids, the same sums
    to the last bit (each row's weights added in their given order)."""
    rng = np.random.default_rng(seed)
    parts = [np.sort(rng.integers(0, span, rng.integers(1, 300))) for _ in range(runs)]
    rows = np.concatenate(parts) if seed % 2 else rng.permutation(np.concatenate(parts))
    weight = rng.random(len(rows)) * 10 ** rng.uniform(-3, 3, len(rows))  # varied magnitudes: order matters
    ids, sums = _sum_by_row(rows, weight)
    ref_ids, ref_sums = reference_sum_by_row(rows, weight)
    assert np.array_equal(ids, ref_ids) and np.array_equal(sums, ref_sums)
