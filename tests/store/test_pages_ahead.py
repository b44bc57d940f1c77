"""Pages read ahead at open: each next page is asked for before this one is filed, and a load that
fails or stops early leaves no read running behind it."""

from __future__ import annotations

import asyncio
from contextlib import aclosing

import numpy as np
import pytest

from astrbot_plugin_engram.memory.store import KeywordPage, pages_ahead


class Pages:
    """Pages of two ids each up to ``last``; records what was asked and whether a read finished."""

    def __init__(self, last: int):
        self.last = last
        self.asked: list[int] = []
        self.finished: list[int] = []

    async def read(self, after: int) -> KeywordPage:
        self.asked.append(after)
        await asyncio.sleep(0.01)
        ids = np.arange(after + 1, min(after + 2, self.last) + 1, dtype=np.int64)
        self.finished.append(after)
        return KeywordPage(ids, np.zeros(len(ids), np.int64), np.ones(len(ids), np.int64))


async def test_every_page_comes_in_order_the_next_asked_for_before_this_one_is_filed() -> None:
    pages = Pages(7)
    got, asked_when_filed = [], []
    async with aclosing(pages_ahead(pages.read)) as ahead:
        async for page in ahead:
            asked_when_filed.append(list(pages.asked))
            got += page.ids.tolist()
    assert got == [1, 2, 3, 4, 5, 6, 7] and pages.asked == [0, 2, 4, 6, 7]
    assert asked_when_filed[0] == [0, 2]  # the second page already asked for while the first is filed


async def test_a_load_that_fails_while_filing_leaves_no_read_behind() -> None:
    pages = Pages(100)
    with pytest.raises(ValueError):
        async with aclosing(pages_ahead(pages.read)) as ahead:
            async for page in ahead:
                if page.ids[0] == 3:
                    raise ValueError("a damaged page")
    asked = len(pages.asked)
    await asyncio.sleep(0.05)
    assert pages.asked == [0, 2, 4] and len(pages.asked) == asked  # nothing asked after the failure
    assert pages.finished == [0, 2]  # the read ahead of the failing page was cancelled, not left running
