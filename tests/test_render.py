"""Notes as the model reads them: dates people would say, quoted lines, a block within its budget."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from astrbot_plugin_engram.memory import SELF, Episode, Hit, Memory
from astrbot_plugin_engram.memory.render import CLOSE, OPEN, ago, build_block, note, time_line, when
from astrbot_plugin_engram.memory.text.words import budget_tokens

NOW = datetime(2026, 11, 29, 12, tzinfo=timezone.utc)


def test_dates_read_like_a_person_would_say_them() -> None:
    now = datetime(2026, 11, 29, 12, tzinfo=timezone.utc)
    then = datetime(2026, 11, 20, 12, tzinfo=timezone.utc)
    assert when(then, now, timezone.utc) == "2026-11-20, 9 days ago"
    assert ago(now - timedelta(seconds=20), now) == "just now"
    assert ago(now - timedelta(minutes=1), now) == "1 minute ago"
    assert ago(now - timedelta(days=400), now) == "1 year ago"


def hit(item: Episode | Memory) -> Hit:
    text = item.content if isinstance(item, Episode) else item.text
    return Hit("episode" if isinstance(item, Episode) else "memory", 1, text, 1.0, {}, item)


def test_a_note_names_the_speaker_and_quotes_the_text_on_one_line() -> None:
    said = Episode(place="s", content='he said "go"\nnow', actor="qq:1", time=NOW - timedelta(days=2))
    assert note(hit(said), {"qq:1": "Ann"}, NOW, timezone.utc) == \
        "- 2026-11-27, 2 days ago — Ann said: \"he said 'go' now\""
    mine = Episode(place="s", content="on my way", actor=SELF, time=NOW)
    assert "— you said:" in note(hit(mine), {}, NOW, timezone.utc)
    about = Memory("likes tea", "self", subjects=("qq:1",), created_at=NOW)
    assert note(hit(about), {"qq:1": "Ann"}, NOW, timezone.utc).endswith('— about Ann: "likes tea"')


def test_the_block_keeps_its_budget_and_never_cuts_a_note() -> None:
    notes = [f"- note {n} " + "word " * 20 for n in range(10)]
    text, taken = build_block(notes, time_line(NOW, None, timezone.utc), "", 200)
    assert text.startswith(OPEN) and text.endswith(CLOSE) and budget_tokens(text) <= 200
    assert taken and all(notes[i] in text for i in taken) and notes[taken[-1] + 1] not in text


# sample lines in six languages, shared with bench/inject_budget.py
SAMPLES = Path(__file__).parents[1] / "bench" / "data" / "six-languages.json"
QWEN_TEXTS = json.loads(SAMPLES.read_text("utf-8"))


@pytest.fixture(scope="module")
def qwen() -> Any:
    """Qwen's tokenizer as AstrBot brings it (dashscope's bundled vocabulary; no download)."""
    from dashscope.tokenizers.tokenizer import get_tokenizer
    return get_tokenizer("qwen-turbo")


@pytest.mark.parametrize("lang", sorted(QWEN_TEXTS))
@pytest.mark.parametrize("budget", [200, 600])
def test_the_block_holds_its_budget_in_a_real_tokenizer(qwen: Any, lang: str, budget: int) -> None:
    """``inject_budget_tokens`` is the most tokens the block may take: so in a real model's tokens
    (numbers cut into digits, emoji and Korean several tokens a character), not only in the estimate."""
    texts = QWEN_TEXTS[lang]
    notes = [note(hit(Episode(place="s", content=f"{texts[i % len(texts)]} {i}", actor="qq:1",
                              actor_name="小明", time=NOW - timedelta(days=i))), {}, NOW, timezone.utc)
             for i in range(60)]
    text, taken = build_block(notes, time_line(NOW, NOW - timedelta(hours=2), timezone.utc), "", budget)
    assert len(qwen.encode(text)) <= budget
    assert len(taken) >= budget // 100 - 1  # and it still holds notes (the head takes ~100 tokens)


def test_one_huge_note_does_not_starve_the_others() -> None:
    """The best hit is a pasted article (16,000 characters): it is left out whole and the notes after
    it still fill the block."""
    huge = Episode(place="s", content="tea " * 4000, actor="qq:1", actor_name="Ann", time=NOW)
    small = [Episode(place="s", content=f"green tea fact {i}", actor="qq:1", actor_name="Ann", time=NOW)
             for i in range(5)]
    notes = [note(hit(e), {}, NOW, timezone.utc) for e in [huge, *small]]
    text, taken = build_block(notes, time_line(NOW, None, timezone.utc), "", 600)
    assert taken == [1, 2, 3, 4, 5] and budget_tokens(text) <= 600


@pytest.mark.parametrize("budget", range(60, 200, 7))
def test_an_identity_cut_to_its_share_never_splits_an_emoji_or_an_accent(budget: int) -> None:
    """The identity's beginning was cut at any code point: a family emoji cut after its first joiner
    showed other people, "é" written as e + accent lost its accent."""
    from astrbot_plugin_engram.memory.render import fit_identity

    family, accented = "\U0001F469\u200d\U0001F469\u200d\U0001F467", "e\u0301"
    identity = "我是小助手" + (family + accented) * 300  # no line or sentence end to cut at
    body = fit_identity(identity, budget)
    assert body.endswith("…") and identity.startswith(body[:-1])
    kept = body[:-1]
    assert kept == "我是小助手" or kept.endswith((family, accented)), repr(kept[-6:])
