"""Which query words each candidate holds (``candidates._holding``): the pool's ids looked up in each
word's postings give what looking each posting up among the ids gave (the version before session 16)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from astrbot_plugin_engram.memory.recall.candidates import _holding


def each_posting_among_the_ids(ids: np.ndarray, lists: list[np.ndarray]) -> np.ndarray:
    out = np.zeros((len(lists), len(ids)), bool)
    rows = np.concatenate(lists)
    if not len(rows):
        return out
    term = np.repeat(np.arange(len(lists)), [len(r) for r in lists])
    order = np.argsort(ids)
    pos = np.minimum(np.searchsorted(ids[order], rows), len(ids) - 1)
    hit = ids[order[pos]] == rows
    out[term[hit], order[pos[hit]]] = True
    return out


@given(st.integers(0, 2**32 - 1), st.integers(1, 20), st.integers(1, 60), st.sampled_from([5, 300, 10**6]))
def test_holding_marks_exactly_the_words_each_candidate_holds(seed: int, words: int, pool: int,
                                                              span: int) -> None:
    """As recall calls it: at least one word and one candidate."""
    rng = np.random.default_rng(seed)
    lists = [np.flatnonzero(rng.random(span) < rng.uniform(0, 0.3)) if span < 10**6 else
             np.unique(rng.integers(0, span, rng.integers(0, 2_000))) for _ in range(words)]
    held = [rng.choice(r, min(len(r), 3), replace=False) for r in lists if len(r)]
    ids = rng.permutation(np.unique(np.concatenate([*held, rng.integers(0, span, pool)])))[:pool]
    assert np.array_equal(_holding(ids, lists), each_posting_among_the_ids(ids, lists))
