"""What each injection showed and what the reply then used: the learner's only input, kept bounded.

Every recall that fills a block is recorded under a new recall id with the features of the notes
it injected and of a few it held back (the next ones below the cut), per place, the last ``keep``
of each place only, and ``cap`` in all (a bot in a thousand groups keeps a few megabytes, not
hundreds). Feedback names a recall id: implicit (which injected notes the reply used) or the owner's
``good`` / ``bad`` on the whole injection (kept apart: the owner's word, when given, is what the
recall teaches). Feedback for an id the log does not hold (never recorded, or pushed out since) is
refused. The learner takes the judged recalls off the log in a job, never on the reply path.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict, deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InvalidInputError, UnknownIdError
from .features import COLUMNS
from .learner import Learner

KEEP = 20  # recalls kept per place
CAP = 1000  # recalls kept in all (the oldest go first)


@dataclass
class Recorded:
    """One injection: its notes' keys and features (``COLUMNS`` x notes), the injected first, then
    those held back; what the reply used of the injected (None: not judged yet), and the owner's word
    on the whole injection (None: not given)."""

    id: str
    place: str
    keys: list[str]
    features: np.ndarray
    injected: int  # how many of ``keys`` went into the block
    used: list[bool] | None = None
    learned: bool = False
    judged: bool | None = None  # /mem good (True) or /mem bad (False)
    tool: bool = False  # a memory_recall answer, not a block (``/mem good`` judges blocks)

    def pairs(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(features, preferred) for the learner: explicit feedback compares the injected with the
        held back notes, implicit feedback the injected notes among themselves."""
        if self.judged is not None:
            went_in = np.arange(len(self.keys)) < self.injected
            return self.features, went_in if self.judged else ~went_in
        if self.used is None:
            return None
        return self.features[:, : self.injected], np.array(self.used, bool)


class FeedbackLog:
    """The last ``keep`` recorded injections of each place, by recall id."""

    def __init__(self, keep: int = KEEP, cap: int = CAP):
        self.keep, self.cap = keep, cap
        self._by_id: OrderedDict[str, Recorded] = OrderedDict()
        self._of_place: dict[str, deque[str]] = {}
        self._count = itertools.count(1)

    def record(self, place: str, keys: Sequence[str], features: np.ndarray, injected: int, *,
               tool: bool = False) -> str:
        """Record an injection (``features``: ``COLUMNS`` x ``keys``; the first ``injected`` went
        in); returns its recall id. The place's oldest is dropped past ``keep``."""
        x = np.asarray(features, np.float64)
        if x.shape != (len(COLUMNS), len(keys)) or not 0 <= injected <= len(keys):
            raise InvalidInputError(f"an injection wants {len(COLUMNS)} features for each of "
                                    f"{len(keys)} notes",
                                    code="feedback_shape")
        rid = f"r{next(self._count)}"
        self._add(Recorded(rid, place, list(keys), x, injected, tool=tool))
        return rid

    def _add(self, r: Recorded) -> None:
        self._by_id[r.id] = r
        mine = self._of_place.setdefault(r.place, deque())
        mine.append(r.id)
        while len(mine) > self.keep:
            self._by_id.pop(mine.popleft(), None)
        while len(self._by_id) > self.cap:
            old = self._by_id.popitem(last=False)[1]
            place = self._of_place[old.place]
            place.remove(old.id)
            if not place:
                del self._of_place[old.place]

    def records(self) -> list[Recorded]:
        """Every kept recall, oldest first."""
        return list(self._by_id.values())

    def get(self, recall_id: str) -> Recorded:
        r = self._by_id.get(recall_id)
        if r is None:
            raise UnknownIdError(f"no recent injection has the recall id {recall_id!r}",
                                 code="unknown_recall", recall=recall_id)
        return r

    def last(self, place: str) -> Recorded | None:
        """The place's latest injection, a block (what ``/mem good`` and ``/mem bad`` judge)."""
        return next((r for r in reversed(self._by_id.values()) if r.place == place and not r.tool), None)

    def used(self, recall_id: str, used_keys: Sequence[str]) -> Recorded:
        """Implicit feedback: the reply used the injected notes ``used_keys`` and ignored the rest."""
        r = self.get(recall_id)
        shown = r.keys[: r.injected]
        if unknown := set(used_keys) - set(shown):
            raise InvalidInputError(f"{sorted(unknown)} were not injected by {recall_id}",
                                    code="feedback_not_injected", recall=recall_id)
        r.used = [k in set(used_keys) for k in shown]
        r.learned = False
        return r

    def judged(self, recall_id: str, good: bool) -> Recorded:
        """Explicit feedback on a whole injection: good puts what went in above what was held back,
        bad the other way round."""
        r = self.get(recall_id)
        if r.injected == len(r.keys):
            raise InvalidInputError(f"{recall_id} held nothing back to compare with",
                                    code="feedback_nothing_held", recall=recall_id)
        r.judged, r.learned = bool(good), False
        return r

    def learn(self, learner: Learner) -> int:
        """Teach ``learner`` every judged injection it has not learned from; returns how many."""
        n = 0
        for r in self._by_id.values():
            p = r.pairs()
            if p is not None and not r.learned:
                learner.learn(*p)
                r.learned = True
                n += 1
        return n

    def state(self) -> dict[str, Any]:
        return {"recalls": [{"id": r.id, "place": r.place, "keys": r.keys, "injected": r.injected,
                             "features": r.features.tolist(), "used": r.used, "learned": r.learned,
                             "judged": r.judged, "tool": r.tool}
                            for r in self._by_id.values()]}

    @classmethod
    def from_state(cls, state: Mapping[str, Any], keep: int = KEEP, cap: int = CAP) -> FeedbackLog:
        """A log from ``state()`` (or the store's rows); a feature this version no longer has, or a new
        one, makes the saved features unusable: such a recall is dropped, the rest kept."""
        out = cls(keep, cap)
        try:
            for d in state.get("recalls", []):
                keys = [str(k) for k in d["keys"]]
                x = np.array(d["features"], np.float64)
                if x.shape != (len(COLUMNS), len(keys)):
                    continue
                used = None if d["used"] is None else [bool(u) for u in d["used"]]
                judged = d.get("judged")
                out._add(Recorded(str(d["id"]), str(d["place"]), keys, x, int(d["injected"]), used,
                                  bool(d["learned"]), None if judged is None else bool(judged),
                                  bool(d.get("tool", False))))
        except (KeyError, TypeError, ValueError) as e:
            raise InvalidInputError(f"saved feedback is not readable: {e}", code="feedback_unreadable") from e
        top = max((int(i[1:]) for i in out._by_id if i[1:].isdigit()), default=0)
        out._count = itertools.count(top + 1)
        return out
