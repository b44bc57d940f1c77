"""Recall as one pipeline: gather candidates -> features -> rank -> load the hits.

``candidates`` gathers the pool (keyword and vector routes, then neighbours) with the audience's
visibility applied before ranking; ``features`` works out every candidate's features from one
registry; a ``ranker`` scores them; only the best are read from the store, checked once more
against the audience, and returned as hits with the features behind them. Fitting a ranker is
offline work (``training``), never on this path.
"""

from __future__ import annotations

from datetime import datetime

import numpy as np

from ..index import Indexes
from ..model import Hit
from ..scopes import Visibility
from ..store import Store
from .candidates import RecallSettings, gather_candidates, load_hits
from .features import featurize
from .ranker import Ranker, best_candidates, hits

__all__ = ["RecallSettings", "recall"]


async def recall(store: Store, indexes: Indexes, ranker: Ranker, settings: RecallSettings, query: str,
                 qvec: np.ndarray | None, vis: Visibility, k: int, include_archived: bool,
                 now: datetime) -> list[Hit]:
    """The ``k`` best hits ``vis`` may see for ``query`` (``qvec``: its vector, None for keywords only)."""
    pool = await gather_candidates(store, indexes, query, qvec, vis, settings, include_archived)
    feats = featurize(pool, query, now, settings)
    best = best_candidates(feats, ranker, k)
    shown = set(await load_hits(store, pool, [j for j, _ in best], vis))  # read from the file
    return hits(feats, [b for b in best if b[0] in shown])
