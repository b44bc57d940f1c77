"""The demo: the bundled sample, several audiences, the same questions, nothing leaking."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from astrbot_plugin_engram.memory import Audience, Episode
from astrbot_plugin_engram.memory.cli.demo import DemoResult, audiences, load_sample, run_demo

from .conftest import HashEmbedder

SAMPLE = load_sample()
AUDIENCES = audiences(SAMPLE)
BIRTHDAY, SATURDAY_ZH, ALICE_LATE, LATELY = SAMPLE["questions"]


def texts(result: DemoResult, question: str, chat: str) -> str:
    return "\n".join(h.text for h in result.answers[question][chat])


def allowed(aud: Audience, h: object) -> bool:
    """The visibility rules restated for the demo's chats."""
    item = h.item  # type: ignore[attr-defined]
    if isinstance(item, Episode):
        return item.place == aud.place
    return item.scope in ("public", "self") or (item.scope == "owner" and aud.owner_private) \
        or item.scope == f"space:{aud.place}"


@pytest.fixture(scope="module", params=["keywords", "hash-vectors"])
def run(request: pytest.FixtureRequest) -> tuple[DemoResult, str]:
    """The demo's result and its printed output, keyword-only or with a fast fake embedder."""
    lines: list[str] = []
    emb = HashEmbedder(dim=64) if request.param == "hash-vectors" else None
    res = asyncio.run(run_demo(fast=True, say=lines.append, embedder=emb))
    return res, "\n".join(lines)


@pytest.fixture
def result(run: tuple[DemoResult, str]) -> DemoResult:
    return run[0]


def test_every_question_is_asked_in_every_chat(result: DemoResult) -> None:
    assert list(result.answers) == SAMPLE["questions"]
    assert all(set(per_chat) == set(AUDIENCES) for per_chat in result.answers.values())


def test_no_secret_appears_in_another_chat(result: DemoResult) -> None:
    assert result.leaks == []
    for question in result.answers:
        assert "电动磨豆机" not in texts(result, question, "group") + texts(result, question, "alice")
        assert "牙医" not in texts(result, question, "group") + texts(result, question, "alice")
        assert "Lumen" not in texts(result, question, "group") + texts(result, question, "owner")
        assert "peanut" not in texts(result, question, "group") + texts(result, question, "owner")


def test_every_hit_is_one_its_chat_may_see(result: DemoResult) -> None:
    for per_chat in result.answers.values():
        for chat, hits in per_chat.items():
            assert all(allowed(AUDIENCES[chat], h) for h in hits), chat


def test_the_same_question_gets_different_answers(result: DemoResult) -> None:
    assert "电动磨豆机" in texts(result, BIRTHDAY, "owner")  # the owner's surprise, only for the owner
    assert "生日" in texts(result, BIRTHDAY, "group") and "手冲咖啡" in texts(result, BIRTHDAY, "group")
    assert "Lumen Labs" in texts(result, ALICE_LATE, "alice")  # the real reason, only in her DM
    assert "something came up at work" in result.answers[ALICE_LATE]["group"][0].text
    assert "牙医" in texts(result, SATURDAY_ZH, "owner")
    firsts = {result.answers[BIRTHDAY][c][0].key for c in ("group", "owner")}
    assert len(firsts) == 2


def test_the_output_is_a_table_per_question_and_a_leak_check(run: tuple[DemoResult, str]) -> None:
    out = run[1]
    for q in SAMPLE["questions"]:
        assert f"Q: {q}" in out
    assert "读书会 group" in out and "Alice DM" in out
    assert out.rstrip().endswith("none appeared.")


def test_make_demo_entry_point_runs() -> None:
    done = subprocess.run([sys.executable, "-m", "astrbot_plugin_engram.memory", "demo", "--fast"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Leak check" in done.stdout and "Traceback" not in done.stderr
