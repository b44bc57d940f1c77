"""The in-memory second vectors: compact, looked up by (kind, id), whatever order they came in."""

from __future__ import annotations

import numpy as np

from astrbot_plugin_engram.memory.index.second_vectors import SecondVectors


def unit(rng: np.random.Generator, n: int, dim: int = 24) -> np.ndarray:
    v = rng.normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_cosines_match_the_float_vectors_within_int8_rounding() -> None:
    rng = np.random.default_rng(1)
    vecs, q = unit(rng, 50), unit(rng, 1)[0]
    sv = SecondVectors("m#as-query")
    sv.add("e", list(range(1, 51)), vecs)
    got = sv.cosines([("e", i) for i in range(1, 51)], q)
    assert np.allclose(np.array(got, float), vecs @ q, atol=0.02)
    assert sv.cosines([("m", 1), ("e", 51)], q) == [None, None]  # another kind, an unknown id


def test_ids_out_of_order_and_saved_again_are_found_with_their_last_vector() -> None:
    rng = np.random.default_rng(2)
    a, b, c = unit(rng, 3)
    sv = SecondVectors("m#as-query")
    sv.add("m", [5, 9], np.stack([a, b]))
    sv.add("m", [7], np.stack([c]))  # out of order (a memory embedded after a reindex, say)
    sv.add("m", [5], np.stack([c]))  # saved again: the newer vector counts
    nine, seven, five = sv.cosines([("m", 9), ("m", 7), ("m", 5)], c)
    assert nine is not None and seven is not None and five is not None
    assert abs(nine - float(b @ c)) < 0.02 and seven > 0.99 and five > 0.99
    assert len(sv) == 3


def test_erased_items_have_no_second_vector_and_a_query_of_another_size_gets_none() -> None:
    rng = np.random.default_rng(3)
    sv = SecondVectors("m#as-query")
    sv.add("e", [1, 2, 3], unit(rng, 3))
    sv.erase("e", [2, 99])
    got = sv.cosines([("e", 1), ("e", 2), ("e", 3)], unit(rng, 1)[0])
    assert got[0] is not None and got[1] is None and got[2] is not None
    assert sv.cosines([("e", 1)], np.ones(7, np.float32)) == [None]  # another model's dimension
