"""The job that lets the ranking learn (issue 32), off the reply path: the "used" detector on the
replies since its last run, the learner's steps, what it learned kept in the store, and recall then
served the weights the learner judges better (else the shipped ones). ``memory/recall/ranking.py``
says how; ``ranking_learn`` switches it off."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from ...scheduler.registry import Job
from ..service import EngramService

RANKING = "ranking"
EVERY = timedelta(minutes=10)  # a reply's lesson waits at most this long; a run takes milliseconds


def ranking_job(service: EngramService) -> Job:
    async def run(**_: Any) -> dict[str, int]:
        mem = await service.memory()
        if service.ranking is None:
            return {}
        stats = await service.ranking.learn(mem.ranking_store())
        service.serve_ranking(mem)
        return stats

    return Job(RANKING, run, EVERY, catch_up=False, summary="the ranking learns from what replies used")
