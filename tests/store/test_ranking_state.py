"""``RankingState``: what the learned ranking keeps (its named state, the recent recalls' feedback rows),
written through the one write door, a place's rows erased with the place.
Run on every backend (``conftest.BACKENDS``)."""

from __future__ import annotations

from astrbot_plugin_engram.memory.store import Store


async def test_the_state_and_the_recalls_are_kept_replaced_and_dropped(store: Store) -> None:
    assert await store.ranking_state("learner") is None and await store.recall_feedback() == []
    async with store.transaction() as tx:
        await tx.save_ranking("learner", {"weights": {"kw": 1.5}, "steps": 3},
                              [(1, "qq:group:1", {"keys": ["e1"], "used": None}),
                               (2, "qq:group:2", {"keys": ["m4"], "used": None})])
    async with store.transaction() as tx:
        await tx.save_ranking("learner", {"weights": {"kw": 2.0}, "steps": 4},
                              [(2, "qq:group:2", {"keys": ["m4"], "used": [True]})], dropped=[1])
    assert await store.ranking_state("learner") == {"weights": {"kw": 2.0}, "steps": 4}
    assert await store.recall_feedback() == [(2, "qq:group:2", {"keys": ["m4"], "used": [True]})]
    async with store.transaction() as tx:
        await tx.save_ranking("learner", None)
    assert await store.ranking_state("learner") is None
    assert len(await store.recall_feedback()) == 1  # only the state went


async def test_a_forgotten_place_takes_its_recalls_with_it(store: Store) -> None:
    async with store.transaction() as tx:
        await tx.save_ranking("learner", {}, [(1, "qq:group:1", {"k": 1}), (2, "qq:group:2", {"k": 2}),
                                              (3, "qq:group:1", {"k": 3})])
    async with store.transaction() as tx:
        await tx.erase([], [], places=["qq:group:1"])
    assert await store.recall_feedback() == [(2, "qq:group:2", {"k": 2})]
