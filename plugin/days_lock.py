"""The diary, the self-image and a forget take turns (one lock for the plugin's days).

A diary or self-image job reads what was said, waits for the model, then writes; a forget between
the read and the write would see nothing of the job's text yet, and the job would then write the
forgotten line back. So each job, ``/mem diary``, and every forget (``/mem forget``, ``/mem
confirm``) with the diary and self-image it rewrites, holds this lock. The task holding it may
take it again (a forget's rewrite runs inside the forget).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any


class DaysLock:
    def __init__(self) -> None:
        self._lock = asyncio.Lock()
        self._holder: asyncio.Task[Any] | None = None
        self.waiting = 0  # tasks waiting for their turn

    @asynccontextmanager
    async def hold(self) -> AsyncIterator[None]:
        me = asyncio.current_task()
        if me is not None and self._holder is me:
            yield
            return
        self.waiting += 1
        try:
            await self._lock.acquire()
        finally:
            self.waiting -= 1
        self._holder = me
        try:
            yield
        finally:
            self._holder = None
            self._lock.release()
