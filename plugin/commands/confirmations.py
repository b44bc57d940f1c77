"""Confirmation codes for the wide forgets: a code is bound to one chat and one sender, used once,
and expires after a few minutes."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...memory.wording import Said
from ..replies.catalogue import TEXTS

CONFIRM_SECONDS = 300.0


@dataclass(frozen=True)
class Pending:
    chat: str
    sender: str
    action: str  # what ``/mem confirm`` will do: "forget-person" or "forget-place"
    target: str
    summary: str
    expires: float


class ConfirmError(Said):
    """A code that is unknown, expired, or was given in another chat; the message says which."""

    texts = TEXTS


class Confirmations:
    """Codes waiting for ``/mem confirm``."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, seconds: float = CONFIRM_SECONDS):
        self.clock = clock
        self.seconds = seconds
        self._codes: dict[str, Pending] = {}

    def ask(self, chat: str, sender: str, action: str, target: str, summary: str) -> str:
        """A new code for ``action`` on ``target`` (any older code of this chat and sender lapses)."""
        self._codes = {c: p for c, p in self._codes.items()
                       if (p.chat, p.sender) != (chat, sender) and p.expires > self.clock()}
        code = f"{secrets.randbelow(900_000) + 100_000}"
        self._codes[code] = Pending(chat, sender, action, target, summary, self.clock() + self.seconds)
        return code

    def take(self, code: str, chat: str, sender: str) -> Pending:
        """The action a code confirms, used up; ``ConfirmError`` when it cannot be used here."""
        p = self._codes.get(code.strip())
        if p is None:
            raise ConfirmError("confirm_unknown", code=repr(code.strip()[:20]))
        if (p.chat, p.sender) != (chat, sender):
            raise ConfirmError("confirm_elsewhere")
        del self._codes[code.strip()]
        if p.expires <= self.clock():
            raise ConfirmError("confirm_expired")
        return p


def chat_of(event: Any) -> str:
    """The chat a command came from (AstrBot's unified origin, else the group or sender)."""
    umo = str(getattr(event, "unified_msg_origin", "") or "")
    return umo or f"{event.get_platform_name()}:{event.get_group_id() or event.get_sender_id()}"
