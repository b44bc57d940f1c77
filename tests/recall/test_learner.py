"""The ranking that learns from feedback (issue 32): it learns what is clearly right, stays bounded
whatever it is told, refuses feedback it cannot place, resets, and never widens what a place sees."""

from __future__ import annotations

import math

import numpy as np
import pytest

from astrbot_plugin_engram.memory import Audience, Engram, Episode
from astrbot_plugin_engram.memory.errors import InvalidInputError, UnknownIdError
from astrbot_plugin_engram.memory.recall.features import COLUMNS
from astrbot_plugin_engram.memory.recall.feedback import FeedbackLog
from astrbot_plugin_engram.memory.recall.learner import SHIPPED, Learner, LearnSettings
from astrbot_plugin_engram.memory.recall.ranker import DEFAULT_WEIGHTS, LinearRanker

from .test_recall import FILLER, chat

IMAGE = COLUMNS.index("has_image")


def pool(rng: np.random.Generator, n: int = 12) -> tuple[np.ndarray, int]:
    """Random features in [0, 1]; the one right candidate is the only one with an image."""
    x = rng.random((len(COLUMNS), n))
    x[IMAGE] = 0.0
    right = int(rng.integers(n))
    x[IMAGE, right] = 1.0
    return x, right


def top1(weights: np.ndarray, x: np.ndarray) -> int:
    return int(np.argmax(weights @ x))


def test_learns_the_one_feature_that_is_right() -> None:
    rng = np.random.default_rng(1)
    # no pull back: the shipped weights of the other (here meaningless) features may shrink too
    learner = Learner(LearnSettings(rate=0.5, bound=5.0, pull=0.0, explore=0.3))
    test = [pool(rng) for _ in range(200)]
    before = np.mean([top1(learner.served(), x) == r for x, r in test])
    for _ in range(400):
        x, right = pool(rng)
        shown = learner.explore(np.argsort(-(learner.served() @ x), kind="stable"), 8, rng)
        learner.learn(x[:, shown], shown == right)
    after = np.mean([top1(learner.served(), x) == r for x, r in test])
    assert learner.serving  # it judged its weights better than the shipped ones, and uses them
    assert learner.weights[IMAGE] > SHIPPED["has_image"] + 2.0
    assert before < 0.4 and after > 0.9


def test_feedback_that_says_nothing_consistent_leaves_the_shipped_ranking() -> None:
    rng = np.random.default_rng(2)
    learner = Learner()
    for _ in range(500):
        x, _ = pool(rng)
        learner.learn(x[:, :8], rng.random(8) < 0.3)  # used at random
    assert not learner.serving
    assert learner.ranker().weights == DEFAULT_WEIGHTS


@pytest.mark.parametrize("feedback", ["all_bad", "alternating", "huge"])
def test_weights_stay_finite_and_bounded_under_adversarial_feedback(feedback: str) -> None:
    rng = np.random.default_rng(3)
    s = LearnSettings(rate=5.0, bound=1.0)
    learner, log = Learner(s), FeedbackLog()
    for i in range(300):
        x = rng.random((len(COLUMNS), 10)) * (1e6 if feedback == "huge" else 1.0)
        rid = log.record("qq:group:1", [f"e:{j}" for j in range(10)], x, injected=8)
        if feedback == "all_bad":
            log.judged(rid, good=False)
        elif feedback == "alternating":
            log.judged(rid, good=i % 2 == 0)
        else:
            log.used(rid, [f"e:{j}" for j in range(8) if rng.random() < 0.5])
        log.learn(learner)
    d = learner.weights - learner.shipped
    assert np.isfinite(learner.weights).all()
    assert np.abs(d).max() <= s.bound + 1e-12
    assert learner.steps > 100


def test_feedback_for_an_unknown_recall_is_refused() -> None:
    log, x = FeedbackLog(keep=2), np.zeros((len(COLUMNS), 3))
    ids = [log.record("qq:group:1", ["e:1", "e:2", "e:3"], x, injected=2) for _ in range(3)]
    with pytest.raises(UnknownIdError):
        log.used("r999", [])
    with pytest.raises(UnknownIdError):  # pushed out: only the place's last two are kept
        log.judged(ids[0], good=True)
    with pytest.raises(InvalidInputError):  # a note that was only held back was not used
        log.used(ids[2], ["e:3"])
    assert log.used(ids[2], ["e:1"]).used == [True, False]
    last = log.last("qq:group:1")
    assert last is not None and last.id == ids[2] and log.last("qq:group:2") is None


def test_bad_features_are_refused() -> None:
    learner = Learner()
    with pytest.raises(InvalidInputError):
        learner.learn(np.zeros((3, 2)), np.array([True, False]))
    x = np.zeros((len(COLUMNS), 2))
    x[0, 0] = math.nan
    with pytest.raises(InvalidInputError):
        learner.learn(x, np.array([True, False]))
    assert (learner.weights == learner.shipped).all()


def test_reset_restores_the_shipped_weights_and_state_round_trips() -> None:
    rng = np.random.default_rng(4)
    learner = Learner(LearnSettings(rate=0.5, bound=5.0, explore=0.3))
    for _ in range(200):
        x, right = pool(rng)
        learner.learn(x[:, :8], np.arange(8) == right)
    assert learner.moved() and "has_image" in learner.moved()
    again = Learner.from_state(learner.state(), learner.settings)
    assert (again.weights == learner.weights).all() and again.serving == learner.serving
    learner.reset()
    assert (learner.weights == learner.shipped).all() and not learner.serving and learner.moved() == {}
    assert learner.ranker().weights == DEFAULT_WEIGHTS
    with pytest.raises(InvalidInputError):
        Learner.from_state({"weights": {"cos": "lots"}})
    with pytest.raises(InvalidInputError):
        Learner.from_state({"weights": {"cos": math.inf}})


async def test_a_places_feedback_never_changes_what_another_place_sees(engram: Engram) -> None:
    await chat(engram, [*FILLER, "Our raid on Friday needs a healer.", "The healer quit the guild."],
               place="qq:group:1")
    await chat(engram, [*FILLER, "My healer potion recipe uses mint.", "Mint grows by the door."],
               place="qq:group:2")
    await engram.embed_pending()
    query, two = "who is the healer", Audience("qq:group:2")
    before = await engram.recall(query, two, k=50)
    learner, log = Learner(LearnSettings(rate=5.0, bound=3.0)), FeedbackLog()
    for h in await engram.recall(query, Audience("qq:group:1"), k=50):  # group 1 teaches odd things
        x = np.array([[h.features[c] for c in COLUMNS]]).T
        rid = log.record("qq:group:1", [h.key, "held"], np.hstack([x, 1.0 - x]), injected=1)
        log.judged(rid, good=False)
    log.learn(learner)
    assert learner.moved()
    engram.ranker = LinearRanker(dict(zip(COLUMNS, learner.weights.tolist())))  # served or not
    after = await engram.recall(query, two, k=50)
    assert {h.key for h in after} == {h.key for h in before}  # the order may change, never who sees what
    assert all(isinstance(h.item, Episode) and h.item.place == "qq:group:2" for h in after)


def test_each_place_keeps_its_own_last_injections_and_the_log_round_trips() -> None:
    log, x = FeedbackLog(keep=3), np.ones((len(COLUMNS), 2))
    quiet = log.record("qq:private:7", ["m1", "m2"], x, injected=1)
    busy = [log.record("qq:group:1", ["e1", "e2"], x, injected=1) for _ in range(10)]
    assert log.get(quiet).place == "qq:private:7"  # a busy group never pushes out a quiet chat's
    with pytest.raises(UnknownIdError):
        log.get(busy[6])
    log.judged(busy[-1], good=True)
    again = FeedbackLog.from_state(log.state(), keep=3)
    assert again.get(busy[-1]).used == [True, False] and again.get(quiet).used is None
    assert again.record("qq:private:7", ["m3"], np.ones((len(COLUMNS), 1)), injected=1) not in busy
    learner = Learner()
    assert again.learn(learner) == 1 and again.learn(learner) == 0  # each judged injection teaches once
    with pytest.raises(InvalidInputError):
        FeedbackLog.from_state({"recalls": [{"id": "r1", "place": "p", "keys": ["e1"]}]})
