"""The ranking that learns, in the plugin (issue 32): every block and memory_recall answer gets a recall
id; the reply marks the notes it used (in the job, off the reply path), in English and Chinese; the
owner's /mem good and /mem bad; what was learned is kept, served, shown and reset; one place's feedback
never changes what another may see; a place's forget takes its recalls with it."""

from __future__ import annotations

import numpy as np
import pytest

from astrbot_plugin_engram.memory.errors import UnknownIdError
from astrbot_plugin_engram.memory.recall.features import COLUMNS
from astrbot_plugin_engram.memory.recall.learner import Judged
from astrbot_plugin_engram.memory.recall.ranker import DEFAULT_WEIGHTS, LinearRanker
from astrbot_plugin_engram.memory.recall.ranking import ranking_view
from astrbot_plugin_engram.plugin.config import Settings
from astrbot_plugin_engram.plugin.jobs.ranking import ranking_job
from astrbot_plugin_engram.plugin.service import EngramService
from astrbot_plugin_engram.plugin.tools import memory_recall

from .conftest import OWNER, MakeService, event
from .test_commands import mem
from .test_inject import ask


def weights(memory: object) -> dict[str, float]:
    """The weights a memory ranks by (the plugin's memory ranks with a ``LinearRanker``)."""
    ranker = getattr(memory, "ranker", None)
    assert isinstance(ranker, LinearRanker)
    return ranker.weights

FACTS = {
    "en": ["My cat Miso is three years old and sleeps on the piano",
           "I work as a nurse at the night shift in the city hospital",
           "My sister Lena moved to Berlin to study architecture"],
    "zh": ["我的猫米索今年三岁，喜欢睡在钢琴上",
           "我在市医院当护士，常常上夜班",
           "我妹妹莉娜搬到柏林去学建筑了"],
}
ASKED = {"en": "what do you remember about my cat, my work and my sister?",
         "zh": "你还记得我的猫、我的工作和我妹妹吗？"}
REPLY = {"en": "Your cat Miso is three years old and loves sleeping on the piano!",
         "zh": "你的猫米索今年三岁了，最喜欢睡在钢琴上！"}


async def learn(svc: EngramService) -> dict[str, int]:
    """One run of the background job, as the scheduler would run it."""
    return await ranking_job(svc).run()


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_a_reply_marks_the_note_it_used_and_not_the_ones_it_ignored(service: EngramService,
                                                                          lang: str) -> None:
    for fact in FACTS[lang]:
        service.record_message(event(fact, "alice"))
    ev, _, inj = await ask(service, ASKED[lang], "alice")
    assert inj is not None and len(inj.injected) >= 3
    service.record_reply(ev, REPLY[lang])
    ranking = service.ranking
    assert ranking is not None
    r = ranking.log.last(inj.place)
    assert r is not None and r.used is None  # the reply path only kept the reply: the job judges
    assert await learn(service) == {"replies": 1, "learned": 1, "serving": 0}
    flags: list[bool] = r.used or []
    used = {k for k, u in zip(r.keys, flags) if u}
    cat = next(h.key for h in inj.injected if h.text == FACTS[lang][0])
    assert used == {cat}
    assert ranking.counts.replies == 1 and ranking.counts.used == 1


async def test_feedback_for_an_unknown_recall_is_refused(service: EngramService) -> None:
    await service.memory()
    assert service.ranking is not None
    with pytest.raises(UnknownIdError):
        service.ranking.replied("r999", "a reply", {"e1": "a note"})


async def test_the_owner_judges_the_last_injection_in_this_chat(service: EngramService) -> None:
    assert "no injection in this chat" in await mem(service, "mem good")
    for fact in FACTS["en"]:
        service.record_message(event(fact, OWNER))
    for i in range(12):  # more lines, so some are held back below the cut
        service.record_message(event(f"note {i}: my cat Miso chased a moth number {i}", OWNER))
    _, _, inj = await ask(service, "tell me about my cat Miso", OWNER)
    assert inj is not None
    said = await mem(service, "mem bad")
    assert "were wrong" in said
    r = service.ranking.log.last(inj.place)  # type: ignore[union-attr]
    assert r is not None and r.judged is False
    assert "were right" in await mem(service, "mem good")
    assert r.judged is True and service.ranking.counts.good == 1  # type: ignore[union-attr]
    # another chat has its own last injection: none yet
    assert "no injection in this chat" in await mem(service, "mem bad", group="g7")


async def test_what_was_learned_is_kept_served_shown_and_reset(make_service: MakeService, tmp_path) -> None:
    svc = make_service()
    mem_ = await svc.memory()
    ranking = svc.ranking
    assert ranking is not None and "shipped weights are in use" in await mem(svc, "mem ranking")
    # a learner whose weights moved and which judged them better (as consistent feedback leaves it)
    at = COLUMNS.index("has_image")
    ranking.learner.weights[at] += 2.5
    ranking.learner.judged = Judged([0.2, 0.3] * 15)
    await learn(svc)
    assert weights(mem_)["has_image"] == pytest.approx(DEFAULT_WEIGHTS["has_image"] + 2.5)
    shown = await mem(svc, "mem ranking")
    assert "learned weights are in use" in shown and "has_image: +0.13 -> +2.63" in shown
    await svc.close()

    again = make_service(data_dir=tmp_path / "data")  # a restart: served from the start
    mem2 = await again.memory()
    assert again.ranking is not None and again.ranking.learner.serving
    assert weights(mem2)["has_image"] == pytest.approx(DEFAULT_WEIGHTS["has_image"] + 2.5)
    view = await ranking_view(await mem2.browser())  # what a dashboard page reads (read-only)
    assert view["serving"] and view["moved"]["has_image"][1] == pytest.approx(2.628, abs=1e-3)

    assert "back to the shipped weights" in await mem(again, "mem ranking reset")
    assert weights(mem2) == DEFAULT_WEIGHTS
    assert "No weight has moved" in await mem(again, "mem ranking")
    assert not (await ranking_view(await mem2.browser()))["moved"]


async def test_a_places_feedback_never_changes_what_another_place_may_see(service: EngramService) -> None:
    for i in range(14):  # more than a block holds: some are held back
        service.record_message(event(f"the g1 picnic plan {i}: bring lemonade and a kite", "bob", "g1"))
        service.record_message(event(f"the g2 picnic plan {i}: bring cake and a blanket", "carol", "g2"))
        service.record_message(event(f"my private picnic plan {i}: bring a secret map", "alice"))
    await service.flush()
    ranking = service.ranking
    assert ranking is not None
    for _ in range(5):  # g1's owner says every block there was wrong, again and again
        await ask(service, "what is the picnic plan?", OWNER, "g1")
        ranking.judge_last("qq:group:g1", good=False)
    await learn(service)
    # and the learned weights, however wild, are served
    ranking.learner.weights = ranking.learner.shipped + np.where(np.arange(len(COLUMNS)) % 2, 3.0, -3.0)
    ranking.learner.judged = Judged([0.5] * 30)
    mem_ = await service.memory()
    service.serve_ranking(mem_)
    assert weights(mem_) != DEFAULT_WEIGHTS
    _, req, inj = await ask(service, "what is the picnic plan?", "carol", "g2")
    g2 = service.audience(event("x", "carol", "g2"))
    learned = await service.recall(g2, "picnic plan", 40)
    mem_.ranker = LinearRanker()
    shipped = await service.recall(g2, "picnic plan", 40)
    assert {h.key for h in learned} == {h.key for h in shipped}  # the order may change, who sees what never
    assert [h.key for h in learned] != [h.key for h in shipped]
    assert all(getattr(h.item, "place", None) == "qq:group:g2" for h in learned)
    assert inj is not None and all("g2" in h.text for h in inj.injected)


async def test_a_memory_recall_answer_the_reply_cites_counts_as_used(service: EngramService) -> None:
    for fact in FACTS["en"]:
        service.record_message(event(fact, "alice"))
    await service.flush()
    ev = event("do you remember my sister?", "alice")
    answer = await memory_recall(service, ev, "sister Lena", 5)
    assert "Berlin" in answer
    service.record_reply(ev, "Yes! Your sister Lena moved to Berlin to study architecture.")
    await learn(service)
    r = service.ranking.log.records()[-1]  # type: ignore[union-attr]
    used = {k for k, u in zip(r.keys, r.used or []) if u}
    assert len(used) == 1 and r.keys[r.used.index(True)].startswith("e")  # type: ignore[union-attr]
    # not an injection: /mem good has nothing to judge in that chat
    assert "no injection in this chat" in await mem(service, "mem good", sender="alice")


async def test_forgetting_a_place_takes_its_recalls_with_it(service: EngramService) -> None:
    for fact in FACTS["en"]:
        service.record_message(event(fact, "bob", "g1"))
        service.record_message(event(fact, "carol", "g2"))
    await ask(service, ASKED["en"], "bob", "g1")
    await ask(service, ASKED["en"], "carol", "g2")
    await learn(service)
    mem_ = await service.memory()
    assert {p for _, p, _ in await mem_.store.recall_feedback()} == {"qq:group:g1", "qq:group:g2"}
    await mem_.forget_place("qq:group:g1")
    assert {p for _, p, _ in await mem_.store.recall_feedback()} == {"qq:group:g2"}


async def test_off_records_nothing_and_ranks_with_the_shipped_weights(make_service: MakeService) -> None:
    svc = make_service(Settings(owner_ids=(OWNER,), ranking_learn=False))
    svc.record_message(event(FACTS["en"][0], "alice"))
    ev, _, inj = await ask(svc, "my cat?", "alice")
    assert inj is not None and inj.injected and svc.ranking is None
    svc.record_reply(ev, REPLY["en"])
    assert weights(await svc.memory()) == DEFAULT_WEIGHTS
    assert "does not learn" in await mem(svc, "mem ranking")
