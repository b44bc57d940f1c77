"""One bot's ranking that learns from what its replies used (issue 32): injections recorded, feedback
taken, the learner run and kept in the store, the weights served — each step where it belongs.

The reply path only *records*: ``record`` (the injected and held-back notes' features under a new
recall id) and ``replied`` (the reply's text, kept in memory until the job). Everything else runs in
the background job (``learn``): the "used" detector (``used.py``) on each reply, the learner's steps
(``learner.py``: champion and challenger, so the learned weights are served only while they judge new
feedback better than the shipped ones), and one transaction that keeps the learner's state and the
recalls added or changed since (the last ``keep`` of each place; a place's go with its forget).

Scopes are decided before ranking (``scopes.visibility`` gathers the candidates): the weights only
order what a place may already see, so no feedback from one place changes what another may see.

``ranking_view`` reads what was kept (weights now against the shipped ones, how much feedback moved
them, whether they are served): for ``/mem ranking`` and a dashboard page (the store opened read-only).
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from ..errors import InvalidInputError, UnknownIdError
from ..model import Hit
from .features import COLUMNS
from .feedback import KEEP, FeedbackLog, Recorded
from .learner import Learner, LearnSettings
from .ranker import LinearRanker
from .used import used

STATE = "learner"  # the name of the learner's state in the store
PENDING = 500  # replies waiting for the job at most (the oldest dropped: a lost lesson, nothing else)


class RankingReads(Protocol):
    """What ``ranking_view`` reads (``store.RankingState``; a read-only store has it too)."""

    async def ranking_state(self, name: str) -> dict[str, Any] | None: ...
    async def recall_feedback(self) -> list[tuple[int, str, dict[str, Any]]]: ...


class RankingStore(RankingReads, Protocol):
    """What ``learn`` and ``load`` need of the store: its reads and its one write door."""

    def transaction(self) -> Any: ...


@dataclass
class Counts:
    """Feedback taken since the last reset: replies judged by the detector, the owner's good and bad."""

    replies: int = 0
    used: int = 0  # notes the replies used
    good: int = 0
    bad: int = 0

    def as_dict(self) -> dict[str, int]:
        return {"replies": self.replies, "used": self.used, "good": self.good, "bad": self.bad}


@dataclass
class LearnedRanking:
    """A bot's learner, its feedback log and what waits for the job."""

    settings: LearnSettings = field(default_factory=LearnSettings)
    keep: int = KEEP
    learner: Learner = field(init=False)
    log: FeedbackLog = field(init=False)
    counts: Counts = field(default_factory=Counts)
    _replies: OrderedDict[str, tuple[str, dict[str, str]]] = field(default_factory=OrderedDict)
    _changed: set[str] = field(default_factory=set)
    _saved: set[str] = field(default_factory=set)
    _explored: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.learner = Learner(self.settings)
        self.log = FeedbackLog(self.keep)

    # ---- the reply path: recording only ------------------------------------------------------
    def explore(self, place: str) -> bool:
        """Whether this recall's last injected slot goes to the first note held back: one recall in
        ``1 / explore`` of each place, counted (no randomness: a test sees the same block twice)."""
        if self.settings.explore <= 0:
            return False
        n = self._explored.get(place, 0) + 1
        self._explored[place] = n
        return n % max(1, round(1 / self.settings.explore)) == 0

    def record(self, place: str, injected: Sequence[Hit], held: Sequence[Hit], *,
               injection: bool = True) -> str:
        """Record what the model was handed (the notes, then a few held back); returns its recall id.
        ``injection``: a block (what ``/mem good`` judges), not a memory_recall answer."""
        notes = [*injected, *held]
        x = np.array([[h.features.get(c, 0.0) for h in notes] for c in COLUMNS], np.float64)
        rid = self.log.record(place, [h.key for h in notes], x.reshape(len(COLUMNS), len(notes)),
                              len(injected), tool=not injection)
        self._changed.add(rid)
        return rid

    def replied(self, recall_id: str, reply: str, notes: Mapping[str, str]) -> None:
        """The reply to an injection (``notes``: key -> the text it was handed), kept for the job's
        detector. An unknown recall id is refused."""
        self.log.get(recall_id)
        self._replies[recall_id] = (reply, dict(notes))
        while len(self._replies) > PENDING:
            self._replies.popitem(last=False)

    # ---- the owner's word ----------------------------------------------------------------------
    def judge_last(self, place: str, good: bool) -> Recorded:
        """``/mem good`` or ``/mem bad`` on the place's latest injection (a block); none is refused."""
        last = self.log.last(place)
        if last is None:
            raise InvalidInputError("no injection in this chat to judge yet", code="feedback_no_injection")
        return self.judge(last.id, good)

    def judge(self, recall_id: str, good: bool) -> Recorded:
        r = self.log.judged(recall_id, good)
        self._replies.pop(recall_id, None)  # the owner's word stands over the detector's
        self._changed.add(recall_id)
        if good:
            self.counts.good += 1
        else:
            self.counts.bad += 1
        return r

    def forget_replies(self) -> None:
        """Drop the replies waiting for the job (after a forget: their text may hold what went)."""
        self._replies.clear()

    # ---- what recall uses ----------------------------------------------------------------------
    def ranker(self) -> LinearRanker:
        return self.learner.ranker()

    # ---- the job -------------------------------------------------------------------------------
    def take_replies(self) -> int:
        """The detector on every waiting reply: which injected notes it used. Returns how many."""
        n = 0
        while self._replies:
            rid, (reply, notes) = self._replies.popitem(last=False)
            try:
                r = self.log.get(rid)
            except UnknownIdError:
                continue  # pushed out of its place's log since
            shown = r.keys[: r.injected]
            texts = [notes.get(k, "") for k in shown]
            flags = used(reply, texts)
            self.log.used(rid, [k for k, u in zip(shown, flags) if u])
            self._changed.add(rid)
            self.counts.replies += 1
            self.counts.used += sum(flags)
            n += 1
        return n

    async def learn(self, store: RankingStore) -> dict[str, int]:
        """The job: detect, learn, keep (one transaction). Returns what it did."""
        replies = self.take_replies()
        taught = self.log.learn(self.learner)
        await self.save(store)
        return {"replies": replies, "learned": taught, "serving": int(self.learner.serving)}

    async def save(self, store: RankingStore) -> None:
        now = {r.id for r in self.log.records()}
        rows = [(int(r.id[1:]), r.place, _record_row(r)) for r in self.log.records() if r.id in self._changed]
        dropped = [int(i[1:]) for i in self._saved - now]
        async with store.transaction() as tx:
            await tx.save_ranking(STATE, self.state(), rows, dropped)
        self._saved, self._changed = now, set()

    async def load(self, store: RankingStore) -> None:
        """What was kept: the learner's state and the recent recalls (nothing kept: the shipped weights)."""
        state = await store.ranking_state(STATE)
        if state is not None:
            self.learner = Learner.from_state(state.get("learner") or {}, self.settings)
            c = dict(state.get("counts") or {})
            self.counts = Counts(*(int(c.get(k, 0)) for k in ("replies", "used", "good", "bad")))
        rows = await store.recall_feedback()
        self.log = FeedbackLog.from_state(
            {"recalls": [{**rec, "id": f"r{i}", "place": place} for i, place, rec in rows]}, self.keep)
        self._saved = {f"r{i}" for i, _, _ in rows}
        self._changed = set()

    async def reset(self, store: RankingStore) -> None:
        """Back to the shipped weights (``/mem ranking reset``): the learner and the counts start
        again; the recalls already learned from are not learned from again."""
        self.learner.reset()
        self.counts = Counts()
        self._replies.clear()
        for r in self.log.records():
            r.learned = True
            self._changed.add(r.id)
        await self.save(store)

    def state(self) -> dict[str, Any]:
        return {"learner": self.learner.state(), "counts": self.counts.as_dict(),
                "serving": self.learner.serving}

    def view(self) -> dict[str, Any]:
        """``ranking_view`` of this learner as it is now (not only as last kept)."""
        return view_of(self.state(), len(self.log.records()), self.settings)


def _record_row(r: Recorded) -> dict[str, Any]:
    """A recall as kept (features rounded: four digits order the notes as well as sixteen)."""
    return {"keys": r.keys, "injected": r.injected, "features": np.round(r.features, 4).tolist(),
            "used": r.used, "judged": r.judged, "learned": r.learned, "tool": r.tool}


def view_of(state: Mapping[str, Any] | None, recalls: int, settings: LearnSettings | None = None
            ) -> dict[str, Any]:
    """Weights now against the shipped ones (name -> (shipped, now), largest move first), how far
    feedback moved them (the largest move, and the root of the mean squared move), the feedback
    counts, the learner's judged gain, and whether the learned weights are served."""
    learner = (Learner.from_state(state.get("learner") or {}, settings) if state
               else Learner(settings or LearnSettings()))
    moved = learner.moved()
    d = learner.weights - learner.shipped
    counts = dict((state or {}).get("counts") or Counts().as_dict())
    return {
        "serving": learner.serving,
        "steps": learner.steps,
        "judged": learner.judged.recalls,
        "gain": round(learner.judged.gain(), 4),
        "moved": {k: (round(a, 3), round(b, 3)) for k, (a, b) in moved.items()},
        "largest_move": round(float(np.abs(d).max(initial=0.0)), 3),
        "rms_move": round(math.sqrt(float(np.mean(d * d))), 3) if len(d) else 0.0,
        "counts": counts,
        "recalls_kept": recalls,
    }


async def ranking_view(store: RankingReads) -> dict[str, Any]:
    """``view_of`` what the store keeps: for a dashboard page (``ranking_view(await engram.browser())``,
    read-only) or the command line."""
    return view_of(await store.ranking_state(STATE), len(await store.recall_feedback()))
