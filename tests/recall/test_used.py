"""Implicit feedback: a reply marks the injected note it drew on, not the ones it ignored, in
English and Chinese."""

from __future__ import annotations

import numpy as np
import pytest

from astrbot_plugin_engram.memory.recall.features import COLUMNS
from astrbot_plugin_engram.memory.recall.feedback import FeedbackLog
from astrbot_plugin_engram.memory.recall.used import used

CASES = [
    (["Maya's grandmother taught her to bake rye bread.", "Maya is training for a triathlon in August.",
      "Maya's laptop screen cracked on the train."],
     "Good luck with the triathlon training! August will come quickly, so pace yourself.", [1]),
    (["Kenji keeps bees on his roof in Osaka.", "Kenji's daughter started violin lessons.",
      "Kenji is afraid of flying."],
     "That sounds like a lovely weekend. What are you cooking tonight?", []),
    (["小林在屋顶上养了一箱蜜蜂。", "小林的女儿开始学小提琴了。", "小林很怕坐飞机。"],
     "女儿学小提琴多久了？刚开始练琴都会有点吵，慢慢就好了。", [1]),
    (["阿明下个月要去云南旅行。", "阿明的电脑屏幕摔坏了。", "阿明每天早上跑五公里。"],
     "今天天气真好，适合出去走走。", []),
]


@pytest.mark.parametrize(("notes", "reply", "drawn_on"), CASES)
def test_a_reply_marks_the_note_it_used_and_not_the_others(notes: list[str], reply: str,
                                                            drawn_on: list[int]) -> None:
    assert used(reply, notes) == [i in drawn_on for i in range(len(notes))]
    log = FeedbackLog()
    keys = [f"m{i}" for i in range(len(notes))] + ["m99"]
    rid = log.record("qq:private:7", keys, np.zeros((len(COLUMNS), len(keys))), injected=len(notes))
    marked = log.used(rid, [k for k, u in zip(keys, used(reply, notes)) if u])
    pairs = marked.pairs()
    # only what went in is judged (m99 was held back)
    assert pairs is not None and pairs[0].shape[1] == len(notes)
    assert marked.used == [i in drawn_on for i in range(len(notes))]
