"""The diary, the self-image and a forget take turns (one lock for the plugin's days).

A diary or self-image job reads what was said, waits for the model, then writes; a forget between
the read and the write would see nothing of the job's text yet, and the job would then write the
forgotten line back. So each job, ``/mem diary``, and every forget (``/mem forget``, ``/mem
confirm``) with the diary and self-image it rewrites, holds this lock. The task holding it may
take it again (a forget's rewrite runs inside the forget). A forget that finds a job holding it
tells the user at once that it waits (the model may take minutes), then waits.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

DIARY_TURN, SELF_IMAGE_TURN, FORGET_TURN = "diary", "self-image", "forget"
# what holds the turn, in the line a waiting forget is told (English; a /mem forget says it in the
# reply's language: CommandContext.forget_turn and the catalogue's holder_* texts)
NAMES = {DIARY_TURN: "the diary job is writing now",
         SELF_IMAGE_TURN: "the self-image job is writing now",
         FORGET_TURN: "another forget is running now"}


def waiting_line(holder: str) -> str:
    """What a forget that waits for ``holder`` tells the user at once."""
    what = NAMES.get(holder, NAMES[DIARY_TURN])
    return f"Engram: {what}; this forget waits for it and follows right after."


class DaysLock:
    def __init__(self) -> None:
        self._lock = asyncio.Lock()
        self._holder: asyncio.Task[Any] | None = None
        self.held_by = ""  # what holds the turn now (one of NAMES; "" when free)
        self.waiting = 0  # tasks waiting for their turn

    def busy(self) -> bool:
        """Whether another task holds the turn now (this one would wait)."""
        return self._lock.locked() and self._holder is not asyncio.current_task()

    @asynccontextmanager
    async def hold(self, what: str = "") -> AsyncIterator[None]:
        me = asyncio.current_task()
        if me is not None and self._holder is me:
            yield
            return
        self.waiting += 1
        try:
            await self._lock.acquire()
        finally:
            self.waiting -= 1
        self._holder, self.held_by = me, what
        try:
            yield
        finally:
            self._holder, self.held_by = None, ""
            self._lock.release()

    @asynccontextmanager
    async def forget_turn(self, tell: Callable[[str], Awaitable[None]]) -> AsyncIterator[None]:
        """A forget's turn; when a job holds it now, ``tell`` the user first (``waiting_line``)."""
        if self.busy():
            await tell(waiting_line(self.held_by))
        async with self.hold(FORGET_TURN):
            yield
