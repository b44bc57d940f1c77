"""Run a job as soon as a place has K new episodes (counted as they are recorded)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable


class NewEpisodeTrigger:
    """Counts new episodes per place; at ``threshold`` in one place it calls ``fire`` and starts over."""

    def __init__(self, threshold: int, fire: Callable[[], object]):
        self.threshold = threshold
        self._fire = fire
        self._new: Counter[str] = Counter()

    def saw(self, place: str, n: int = 1) -> bool:
        """Count ``n`` new episodes in ``space``; True when that fired the job."""
        self._new[place] += n
        if self.threshold <= 0 or self._new[place] < self.threshold:
            return False
        self._new[place] = 0
        self._fire()
        return True
