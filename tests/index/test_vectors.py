"""The vector index answers exactly what a full scan of the visible, live vectors would.

The index holds int8 codes: its cosines are within 2e-3 of float32's, and a search returns exactly
the order a full scan of those same cosines gives. Past ``APPROX_FROM`` a block is an inverted file:
it finds most (not all) of the true best, and forgetting, moving and statuses work there alike.
"""

from __future__ import annotations

import numpy as np
import pytest

from astrbot_plugin_engram.memory.index.vectors import VectorIndex, normalise
from astrbot_plugin_engram.memory.scopes import Visibility

DIM = 384  # what the bundled model gives: the codes' precision is measured at it
EVERYTHING = Visibility(None, None)


def chat(place: str, *scopes: str) -> Visibility:
    return Visibility(frozenset(scopes), frozenset({place}))


def unit(rng: np.random.Generator, n: int, dim: int = DIM) -> np.ndarray:
    return normalise(rng.standard_normal((n, dim)).astype(np.float32))


def brute(rows: dict[tuple[str, int], tuple[str, np.ndarray, str]], q: np.ndarray, vis: Visibility,
          k: int, include_archived: bool = False, index: VectorIndex | None = None) -> list[tuple[str, int]]:
    """The top ``k`` (kind, id) by a plain scan over every visible live row (``index``: with the
    cosines of its codes, one by one, rather than float32's)."""
    ok = ("active", "archived") if include_archived else ("active",)

    def cosine(key: tuple[str, int], vec: np.ndarray) -> float:
        if index is None:
            return float(vec @ normalise(q))
        got = index.similarity(*key, q)
        assert got is not None, f"{key} has no vector in the index"
        return got

    sims = {key: cosine(key, vec) for key, (group, vec, status) in rows.items()
            if status in ok and (vis.sees_episode(group) if key[0] == "e" else vis.sees_memory(group))}
    return sorted(sims, key=lambda key: -sims[key])[:k]


@pytest.fixture
def filled() -> tuple[VectorIndex, dict[tuple[str, int], tuple[str, np.ndarray, str]]]:
    rng = np.random.default_rng(3)
    index, rows = VectorIndex("test"), {}
    for kind, groups, first in (("e", ["a", "b", "c"], 1), ("m", ["public", "space:a", "owner"], 1000)):
        for g, group in enumerate(groups):
            ids = list(range(first + 300 * g, first + 300 * g + 200))
            vecs = unit(rng, len(ids))
            # memories: half hidden (a search masks them); episodes: a few dead (it skips them)
            statuses = [("superseded", "archived", "active", "active")[i % 4] if kind == "m"
                        else "superseded" if i % 25 == 0 else "active" for i in ids]
            index.add(kind, group, ids, vecs, statuses)
            rows.update({(kind, i): (group, v, s) for i, v, s in zip(ids, vecs, statuses)})
    return index, rows


def test_search_equals_a_full_scan_of_what_the_audience_sees(filled) -> None:
    index, rows = filled
    rng = np.random.default_rng(4)
    for vis in (chat("a", "public", "space:a"), chat("b", "public"), EVERYTHING, chat("nowhere")):
        for q in unit(rng, 8):
            for archived in (False, True):
                got = index.search(q, vis, 10, archived)
                assert [(kind, i) for kind, i, _ in got] == brute(rows, q, vis, 10, archived, index)
                exact = set(brute(rows, q, vis, 10, archived))  # float32's best: all but a near tie or two
                assert len(exact & {(k, i) for k, i, _ in got}) >= len(got) - 2
                want = [rows[(k, i)][1] @ q for k, i, _ in got]
                assert [s for *_, s in got] == pytest.approx(want, abs=2e-3)
                assert [s for *_, s in got] == [index.similarity(k, i, q) for k, i, _ in got]


def test_a_superseded_memory_is_no_longer_found_and_an_archived_one_only_when_asked(filled) -> None:
    index, rows = filled
    group, vec, _ = rows[("m", 1002)]
    assert index.search(vec, EVERYTHING, 1)[0][:2] == ("m", 1002)
    index.set_status("m", 1002, "archived")
    assert index.search(vec, EVERYTHING, 1)[0][:2] != ("m", 1002)
    assert index.search(vec, EVERYTHING, 1, include_archived=True)[0][:2] == ("m", 1002)
    index.set_status("m", 1002, "superseded")
    assert ("m", 1002) not in [(k, i) for k, i, _ in index.search(vec, EVERYTHING, 50, True)]


def test_a_moved_memory_is_found_only_under_its_new_scope(filled) -> None:
    index, rows = filled
    vec = rows[("m", 1602)][1]  # active, scope owner
    index.move(1602, "space:b")
    assert index.search(vec, chat("b", "space:b"), 1)[0][:2] == ("m", 1602)
    assert ("m", 1602) not in [(k, i) for k, i, _ in index.search(vec, chat("x", "owner"), 50)]
    assert len(index) == len(rows)


def test_similarities_are_the_cosines_in_the_order_asked_and_none_without_a_vector(filled) -> None:
    index, rows = filled
    q = unit(np.random.default_rng(5), 1)[0] * 3  # not normalised: cosines all the same
    items = [("m", 1603), ("e", 5), ("e", 99999), ("m", 5), ("e", 305), ("m", -1)]
    got = index.similarities(items, q)
    want = [float(rows[it][1] @ normalise(q)) if it in rows else None for it in items]
    assert got[2:4] == [None, None] and got[5] is None
    assert got == pytest.approx(want, abs=2e-3)
    assert index.similarity("e", 5, q) == got[1]


def test_an_id_added_twice_keeps_its_first_vector() -> None:
    index = VectorIndex("test")
    a, b = np.eye(DIM, dtype=np.float32)[:2]
    index.add("e", "s", [7, 7], np.stack([a, b]), ["active", "active"])
    index.add("e", "s", [7], b[None, :], ["active"])
    assert len(index) == 1
    assert index.similarities([("e", 7)], a) == [pytest.approx(1.0, abs=2e-3)]


def test_similarities_after_a_search_are_the_same_and_see_vectors_added_since(filled) -> None:
    index, rows = filled
    rng = np.random.default_rng(6)
    q, other, fresh = unit(rng, 3)
    index.search(q, EVERYTHING, 5)  # the cosines of this question are now at hand
    index.add("e", "a", [5000], fresh[None, :], ["active"])  # after the search, in a scanned block
    index.move(1602, "space:new")  # after the search, to a block it did not scan
    items = [("e", 5), ("m", 1603), ("e", 5000), ("m", 1602), ("e", 4999)]
    got = index.similarities(items, q)
    want = [rows[("e", 5)][1] @ q, rows[("m", 1603)][1] @ q, fresh @ q, rows[("m", 1602)][1] @ q]
    assert got[:4] == pytest.approx(want, abs=2e-3) and got[4] is None
    index.search(other, EVERYTHING, 5)
    assert index.similarities(items, q) == got  # computed afresh: the same floats


def clustered(rng: np.random.Generator, n: int, centres: int = 40) -> np.ndarray:
    """Unit vectors around a few centres, as embedded chat lines bunch by topic."""
    middle = unit(rng, centres)
    noise = 0.08 * rng.standard_normal((n, DIM)).astype(np.float32)
    return normalise(middle[rng.integers(0, centres, n)] + noise)


def test_a_large_block_is_an_inverted_file_that_finds_the_best_and_forgets_what_it_is_told(monkeypatch
                                                                                          ) -> None:
    from astrbot_plugin_engram.memory.index import vectors

    monkeypatch.setattr(vectors, "APPROX_FROM", 2000)
    monkeypatch.setattr(vectors, "BUILD_BESIDE", False)  # made at once (beside: test_inverted_file_build)
    rng = np.random.default_rng(7)
    vecs = clustered(rng, 3000)
    index = VectorIndex("test")
    index.add("e", "big", list(range(1, 3001)), vecs, ["active"] * 3000)
    index.add("m", "public", [1, 2], unit(rng, 2), ["active", "active"])
    everyone = chat("big")
    assert index._blocks[0].ivf is None  # made at the block's first search, not when it is filled
    index.search(vecs[0], everyone, 1)
    assert index._blocks[0].ivf is not None and index._blocks[1].ivf is None
    rows = {("e", i + 1): ("big", v, "active") for i, v in enumerate(vecs)}
    overlap = []
    for q in vecs[rng.choice(3000, 30, replace=False)] + 0.05 * unit(rng, 30):
        got = [(k, i) for k, i, _ in index.search(q, everyone, 10)]
        overlap.append(len(set(got) & set(brute(rows, q, everyone, 10, index=index))) / 10)
        assert [s for *_, s in index.search(q, everyone, 10)] == index.similarities(got, q)
    assert np.mean(overlap) >= 0.9  # approximate: most of the true best, nearly always
    target = vecs[41]
    assert index.search(target, everyone, 1)[0][:2] == ("e", 42)
    index.erase("e", 42)  # hard forgetting: gone from the inverted file, no cosine any more
    assert ("e", 42) not in [(k, i) for k, i, _ in index.search(target, everyone, 50)]
    assert index.similarity("e", 42, target) is None and len(index) == 3001
    index.set_status("e", 43, "superseded")
    assert ("e", 43) not in [(k, i) for k, i, _ in index.search(vecs[42], everyone, 50)]
    index.add("e", "big", [5000], target[None, :], ["active"])  # added after: found through its list
    assert index.search(target, everyone, 1)[0][:2] == ("e", 5000)
