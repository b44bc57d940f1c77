"""A big place's inverted file is made beside the event loop: its first search does not wait for it.

Until the file is ready the place is scanned whole (exact answers); writes that come meanwhile —
added rows, forgotten rows, changed statuses — hold in the file once it takes over, and a
forgotten vector is never found again, before, during or after.
"""

from __future__ import annotations

import os
import sys
import threading
from concurrent.futures import wait

import numpy as np
import pytest

from astrbot_plugin_engram.memory.index import vectors
from astrbot_plugin_engram.memory.index.vectors import VectorIndex, _Block

from .test_vectors import brute, chat, clustered, unit

BIG = chat("big")


@pytest.fixture
def small_big(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks of 2,000 vectors count as big (an inverted file takes ~50 ms, not seconds)."""
    monkeypatch.setattr(vectors, "APPROX_FROM", 2000)


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch, small_big: None) -> threading.Event:
    """The builder's thread waits for this event before it starts: a build stays under way."""
    go, make = threading.Event(), vectors._inverted_file

    def slow(stored: np.ndarray):  # type: ignore[no-untyped-def]
        assert go.wait(30)
        return make(stored)

    monkeypatch.setattr(vectors, "_inverted_file", slow)
    return go


def big_index(rng: np.random.Generator, n: int = 3000) -> tuple[VectorIndex, np.ndarray]:
    index, vecs = VectorIndex("test"), clustered(rng, n)
    index.add("e", "big", list(range(1, n + 1)), vecs, ["active"] * n)
    return index, vecs


def block(index: VectorIndex) -> _Block:
    return index._blocks[index._number[("e", "big")]]


def finished(index: VectorIndex) -> None:
    """Wait for the block's build to end (the next search puts the file in place)."""
    b = block(index)
    if b.building is not None:
        wait([b.building], timeout=30)


def ids(found: list[tuple[str, int, float]]) -> list[int]:
    return [i for _, i, _ in found]


def test_the_first_search_of_a_big_place_is_answered_exactly_while_its_inverted_file_is_made(
        held: threading.Event) -> None:
    rng = np.random.default_rng(1)
    index, vecs = big_index(rng)
    rows = {("e", i + 1): ("big", v, "active") for i, v in enumerate(vecs)}
    for q in vecs[:5] + 0.05 * unit(rng, 5):
        got = [(k, i) for k, i, _ in index.search(q, BIG, 10)]
        assert got == brute(rows, q, BIG, 10, index=index)  # the whole scan: the true best, in order
    assert block(index).ivf is None and block(index).building is not None  # not waited for
    held.set()
    finished(index)
    index.search(vecs[0], BIG, 10)
    assert block(index).ivf is not None and block(index).building is None  # in place from now on


def test_rows_forgotten_added_and_hidden_while_the_file_is_made_hold_in_it(held: threading.Event) -> None:
    rng = np.random.default_rng(2)
    index, vecs = big_index(rng)
    index.search(vecs[0], BIG, 5)  # the build starts (and waits)
    index.erase("e", 42)
    assert 42 not in ids(index.search(vecs[41], BIG, 50))  # gone from the whole scan at once
    index.set_status("e", 43, "superseded")
    extra = unit(rng, 1)[0]  # far from every row held
    index.add("e", "big", [9000], extra[None, :], ["active"])
    held.set()
    finished(index)
    assert ids(index.search(extra, BIG, 1)) == [9000]  # this search puts the file in place
    assert block(index).ivf is not None
    assert 42 not in ids(index.search(vecs[41], BIG, 50)) and index.similarity("e", 42, vecs[41]) is None
    assert 43 not in ids(index.search(vecs[42], BIG, 50))
    ivf = block(index).ivf
    assert ivf is not None and ivf.ntotal == 3000 - 2 + 1  # the forgotten and the superseded left out


def test_a_row_forgotten_after_the_build_ended_but_before_any_search_is_never_found(
        held: threading.Event) -> None:
    rng = np.random.default_rng(3)
    index, vecs = big_index(rng)
    index.search(vecs[0], BIG, 5)
    held.set()
    finished(index)
    index.erase("e", 7)  # the finished file is put in place first, then the row leaves it
    assert block(index).ivf is not None
    assert 7 not in ids(index.search(vecs[6], BIG, 100))


def test_the_file_made_beside_is_the_file_made_at_once(monkeypatch: pytest.MonkeyPatch,
                                                       small_big: None) -> None:
    rng = np.random.default_rng(4)
    beside, vecs = big_index(np.random.default_rng(5))
    at_once, _ = big_index(np.random.default_rng(5))
    beside.search(vecs[0], BIG, 5)
    finished(beside)
    monkeypatch.setattr(vectors, "BUILD_BESIDE", False)
    for q in vecs[rng.choice(3000, 20, replace=False)] + 0.05 * unit(rng, 20):
        assert beside.search(q, BIG, 10) == at_once.search(q, BIG, 10)
    assert block(beside).ivf is not None and block(at_once).ivf is not None


def test_forgetting_holds_whenever_the_build_ends(small_big: None) -> None:
    """Real threads, no holding back: erases and adds land before, during or after each build."""
    for seed in range(40):
        rng = np.random.default_rng(100 + seed)
        index, vecs = big_index(rng, 2000 + int(rng.integers(0, 200)))
        gone, added = set(), {}
        index.search(vecs[0], BIG, 5)  # the build starts
        for step in range(60):
            item = int(rng.integers(1, len(vecs) + 1))
            if step % 3 == 0:
                new = 10_000 + step
                added[new] = normalise_one(vecs[item - 1] + 0.001 * unit(rng, 1)[0])
                index.add("e", "big", [new], added[new][None, :], ["active"])
            else:
                index.erase("e", item)
                gone.add(item)
            found = set(ids(index.search(vecs[item - 1], BIG, 30)))
            assert not found & gone, f"seed {seed}: a forgotten row was found"
        finished(index)
        for item in sorted(gone)[:20]:
            assert item not in ids(index.search(vecs[item - 1], BIG, 50)), f"seed {seed}"
        assert block(index).ivf is not None
        for new, v in added.items():
            assert new in ids(index.search(v, BIG, 5)), f"seed {seed}: an added row was lost"


def test_a_failed_build_leaves_the_place_scanned_whole(monkeypatch: pytest.MonkeyPatch, small_big: None,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    def broken(stored: np.ndarray):  # type: ignore[no-untyped-def]
        raise MemoryError("no room for the lists")

    monkeypatch.setattr(vectors, "_inverted_file", broken)
    rng = np.random.default_rng(6)
    index, vecs = big_index(rng)
    rows = {("e", i + 1): ("big", v, "active") for i, v in enumerate(vecs)}
    index.search(vecs[0], BIG, 5)
    finished(index)
    for q in vecs[:3]:
        assert [(k, i) for k, i, _ in index.search(q, BIG, 10)] == brute(rows, q, BIG, 10, index=index)
    assert block(index).ivf is None and block(index).building is None and block(index).failed
    assert "could not be made" in caplog.text


def normalise_one(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v)).astype(np.float32)



def test_wait_built_returns_once_every_file_under_way_is_done(held: threading.Event) -> None:
    rng = np.random.default_rng(9)
    index, vecs = big_index(rng)
    index.wait_built()  # nothing under way: returns at once
    index.search(vecs[0], BIG, 5)  # the build starts (and waits for the event)
    b = block(index)
    assert b.building is not None and not b.building.done()
    threading.Timer(0.2, held.set).start()
    index.wait_built()
    assert b.building is not None and b.building.done()  # done; the next search puts it in place


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a thread's own priority is Linux's")
def test_the_builders_thread_runs_behind_the_bots_threads(small_big: None) -> None:
    """On a busy host the build must not take the cores from a reply: its thread's niceness is raised,
    the calling thread's (the event loop's) left as it was."""
    seen: dict[str, int] = {}
    make = vectors._inverted_file

    def spy(stored: np.ndarray):  # type: ignore[no-untyped-def]
        seen["builder"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        return make(stored)

    before = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(vectors, "_inverted_file", spy)
        mp.setattr(vectors, "_builder", None)  # a fresh builder: its thread starts under this test
        index, vecs = big_index(np.random.default_rng(11))
        index.search(vecs[0], BIG, 5)
        index.wait_built()
    assert seen["builder"] == min(19, before + vectors.BUILDER_NICE)
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == before
