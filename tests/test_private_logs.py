"""What was refused for carrying private details says what kind of thing it was, never the thing, in
every log (issue 28, defect 5): AstrBot keeps its log and shows it in its WebUI."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from astrbot_plugin_engram.memory import Engram
from astrbot_plugin_engram.memory.consolidation import run as consolidation_run
from astrbot_plugin_engram.memory.self.day_end import DaySettings, end_days
from astrbot_plugin_engram.memory.self.diary import write_diary
from astrbot_plugin_engram.memory.self.self_image import write_self_image

from .fake_openai import FakeOpenAI
from .scripted_chat import ScriptedChat
from .test_consolidation import add
from .test_consolidation_bad_input import GOOD, consolidate_once
from .test_diary import DAY, SH, at, entry, live_a_day


@pytest.fixture
def every_log(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """Every record of every logger from INFO up, and Engram's own at every level. (Libraries' DEBUG
    lines are left out: aiosqlite's echo every SQL parameter and openai's every request, as they do for
    any program that uses them; AstrBot runs at INFO.)"""
    caplog.set_level(logging.INFO)
    for name in ("engram", "engram.plugin", "astrbot_plugin_engram"):
        caplog.set_level(logging.DEBUG, logger=name)
    yield caplog


def logged(caplog: pytest.LogCaptureFixture) -> str:
    """All that was logged: the messages, their arguments and any traceback."""
    out = []
    for r in caplog.records:
        out += [r.getMessage(), repr(r.args), r.exc_text or ""]
        if r.exc_info and r.exc_info[1] is not None:
            out.append(repr(r.exc_info[1]))
    return "\n".join(out)


async def test_a_refused_self_image_logs_the_kind_not_the_detail(engram: Engram, tmp_path: Path,
                                                                 every_log: pytest.LogCaptureFixture) -> None:
    await live_a_day(engram)
    await write_diary(engram, ScriptedChat(entry("Alice asked me to water her plants.")), DAY, tz=SH,
                      folder=tmp_path)
    leaky = "I remember: my door code is 4417, water the plants please. Alice trusts me."
    r = await write_self_image(engram, ScriptedChat(json.dumps({"self_image": leaky})), folder=tmp_path)
    assert r.status == "refused"
    text = logged(every_log)
    assert "self-image was refused" in text and "number" in text  # the kind of detail is said
    for detail in ("4417", "door code", "water the plants", "Alice"):
        assert detail not in text, detail


async def test_a_refused_mood_logs_the_kind_not_the_detail(engram: Engram, tmp_path: Path,
                                                           every_log: pytest.LogCaptureFixture) -> None:
    await live_a_day(engram)
    mood = json.dumps({"mood": "missing Alice and her code 4417", "valence": 0.1, "energy": 0.5})
    report = await end_days(engram, ScriptedChat(entry("a day"), mood), DaySettings(tz=SH), folder=tmp_path,
                            now=at(5, 0, DAY + timedelta(days=1)))
    assert report.failed["inner_state"] == 1
    text = logged(every_log)
    assert "inner state was not updated" in text and "name" in text
    assert "Alice" not in text and "4417" not in text


SECRET = "Mallory's bank PIN is 90210 and she hides it under the blue vase"


@pytest.mark.parametrize("action", [
    {"op": SECRET},  # an unknown op
    {**GOOD, "sources": [SECRET]},  # a source that is no key
    {**GOOD, "importance": SECRET},
    {**GOOD, "scope": "owner", "text": SECRET, "about": []},  # scope hint logged before
    {**GOOD, "scope": SECRET},
], ids=["op", "source", "importance", "owner-scope", "scope"])
async def test_a_refused_consolidation_action_logs_no_text_of_the_model(
        engram: Engram, fake_openai: FakeOpenAI, every_log: pytest.LogCaptureFixture,
        action: dict[str, Any]) -> None:
    await consolidate_once(engram, fake_openai, json.dumps({"actions": [action, GOOD]}))
    text = logged(every_log)
    assert "90210" not in text and "blue vase" not in text


async def test_an_unforeseen_failure_logs_where_not_the_text(engram: Engram, fake_openai: FakeOpenAI,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             every_log: pytest.LogCaptureFixture) -> None:
    def people(about: Any, names: dict[str, str]) -> tuple[str, ...]:
        raise ValueError(f"cannot read {about!r}")

    monkeypatch.setattr(consolidation_run, "_people", people)
    report = await consolidate_once(engram, fake_openai,
                                    json.dumps({"actions": [add(SECRET, ["e1"], about=[SECRET])]}))
    assert report.refused == {"unforeseen": 1}
    text = logged(every_log)
    assert "ValueError" in text and "90210" not in text and "blue vase" not in text
