"""Changes to the core identity the bot proposes and only the owner decides.

The model calls ``identity_propose(change, reason)``; the proposal waits in
``identity/proposals.json`` until the owner approves it (the change is appended to ``self.md`` under
a dated section, the previous version kept in ``identity/history/``) or rejects it (nothing else
changes). A flood is capped: past ``MAX_PENDING`` waiting proposals new ones are refused, the oldest
kept. A proposal keeps where it was made and whom the bot was answering, so that a hard forget can
drop the ones drawn from what it erases (``forgetting.py``).
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timezone, tzinfo
from typing import Any

from ..errors import InvalidInputError, UnknownIdError
from ..model import aware, now_utc
from ..validate import clean
from .file_lock import locked
from .identity import IdentityFolder, atomic_write

log = logging.getLogger("engram.identity")

PROPOSALS_FILE = "proposals.json"
MAX_PENDING = 20
MAX_CHANGE, MAX_REASON = 1000, 500
PENDING, APPROVED, REJECTED = "pending", "approved", "rejected"


class ProposalFlood(InvalidInputError):
    """Too many proposals wait for the owner; a new one is refused."""


@dataclass(frozen=True)
class Proposal:
    id: int
    change: str
    reason: str
    place: str
    at: str  # ISO time it was proposed, in the bot's zone
    status: str = PENDING
    decided_at: str = ""
    person: str = ""  # whom the bot was answering when it proposed (a person id; "" if unknown)


class Proposals:
    """The proposals file of one identity folder."""

    def __init__(self, folder: IdentityFolder, max_pending: int = MAX_PENDING, tz: tzinfo | None = None):
        self.folder = folder
        self.tz = tz or timezone.utc  # the zone an approved change's section is dated in
        self.path = folder.root / PROPOSALS_FILE
        self.max_pending = max_pending

    def _now(self, now: datetime | None) -> str:
        """The time as ISO text in the bot's zone (its first ten characters: the bot's date)."""
        return aware(now or now_utc()).astimezone(self.tz).isoformat()

    def _load(self) -> tuple[int, list[Proposal]]:
        if not self.path.exists():
            return 1, []
        try:
            data: dict[str, Any] = json.loads(self.path.read_text("utf-8"))
            return int(data.get("next_id", 1)), [Proposal(**p) for p in data.get("items", [])]
        except (OSError, ValueError, TypeError, AttributeError) as e:  # bad JSON, missing keys, not a dict
            raise InvalidInputError(f"identity/proposals.json cannot be read ({type(e).__name__}: {e}); "
                                    "nothing was changed: fix or move the file",
                                    code="proposals_unreadable") from e

    def _save(self, next_id: int, items: list[Proposal]) -> None:
        atomic_write(self.path, json.dumps({"next_id": next_id, "items": [asdict(p) for p in items]},
                                           ensure_ascii=False, indent=1))

    def all(self) -> list[Proposal]:
        return self._load()[1]

    def pending(self) -> list[Proposal]:
        return [p for p in self.all() if p.status == PENDING]

    def propose(self, change: str, reason: str, place: str, now: datetime | None = None, *,
                person: str = "") -> Proposal:
        """Add a proposal; raises InvalidInputError for an empty or too long one, ProposalFlood when full."""
        # a lone surrogate (a broken emoji from the platform, or the model) cannot be written as UTF-8
        change, reason = (" ".join(clean(str(x)).split()) for x in (change, reason))
        place, person = clean(str(place)), clean(str(person))
        if not change:
            raise InvalidInputError("a proposal needs the change itself", code="proposal_empty")
        if len(change) > MAX_CHANGE or len(reason) > MAX_REASON:
            raise InvalidInputError(f"a proposal is at most {MAX_CHANGE} characters, its reason {MAX_REASON}",
                                    code="proposal_too_long", change=MAX_CHANGE, reason=MAX_REASON)
        with locked(self.path):  # the bot and the command line: neither loses the other's change
            next_id, items = self._load()
            if sum(p.status == PENDING for p in items) >= self.max_pending:
                log.warning("Engram: identity proposal refused: %d already wait for the owner",
                            self.max_pending)
                raise ProposalFlood(f"{self.max_pending} proposals already wait for the owner; "
                                    "no new one is taken until they are decided", code="proposal_flood",
                                    n=self.max_pending)
            p = Proposal(next_id, change, reason, place, self._now(now), person=person)
            self._save(next_id + 1, [*items, p])
            return p

    def _decide(self, pid: int, status: str, now: datetime | None) -> tuple[Proposal, int, list[Proposal]]:
        next_id, items = self._load()
        for i, p in enumerate(items):
            if p.id == pid:
                if p.status != PENDING:
                    raise InvalidInputError(f"proposal #{pid} was already {p.status}",
                                            code="proposal_decided", id=pid, status=p.status)
                items[i] = replace(p, status=status, decided_at=self._now(now))
                return items[i], next_id, items
        raise UnknownIdError(f"no proposal #{pid}", code="no_proposal", id=pid)

    def approve(self, pid: int, now: datetime | None = None) -> Proposal:
        """Append the change to ``self.md`` under a dated section (old version kept); mark it approved."""
        with locked(self.path):
            p, next_id, items = self._decide(pid, APPROVED, now)
            core = self.folder.core()
            if core.problem:  # never overwrite a file that could not be read whole
                raise InvalidInputError(f"not approved: {core.problem}", code="not_approved")
            if f"(approved proposal #{p.id})\n\n{p.change}" not in core.text:  # not already: a kill
                # after the file was written, before the mark; dated in the bot's zone
                day = self._now(now)[:10]
                text = f"{core.text}\n\n## {day} (approved proposal #{p.id})\n\n{p.change}\n".lstrip()
                self.folder.replace(self.folder.self_path, text, now)
            self._save(next_id, items)
            return p

    def reject(self, pid: int, now: datetime | None = None) -> Proposal:
        with locked(self.path):
            p, next_id, items = self._decide(pid, REJECTED, now)
            self._save(next_id, items)
            return p

    def drop(self, ids: list[int]) -> list[Proposal]:
        """Remove the proposals ``ids`` whatever their status (a hard forget reached them); returns
        them. Ids are never given out again."""
        if not ids:
            return []
        with locked(self.path):
            next_id, items = self._load()
            gone = [p for p in items if p.id in set(ids)]
            if gone:
                self._save(next_id, [p for p in items if p.id not in set(ids)])
            return gone
