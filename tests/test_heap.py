"""What loading frees is given back to the system (``memory/heap.py``): RSS at 100k items is a target."""

from __future__ import annotations

import os
import sys

import pytest

from astrbot_plugin_engram.memory.heap import release_free_heap


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RSS from /proc; malloc_trim is glibc's")
def test_memory_freed_after_a_load_leaves_the_process() -> None:
    # as a page of blobs does: many blocks too big for Python's own allocator, one small survivor
    # after each (so the heap's top cannot simply shrink), all but the survivors then freed
    blobs, keep = [], []
    for n in range(5_000):
        blobs.append(bytes(12_000) + n.to_bytes(4, "little"))
        keep.append(bytearray(600))
    before = rss_mb()
    del blobs
    held = rss_mb()
    assert release_free_heap()
    after = rss_mb()
    assert held - after > 30, (before, held, after)  # ~57 MB of blobs: most of it goes back
    assert len(keep) == 5_000
