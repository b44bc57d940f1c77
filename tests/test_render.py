"""Notes as the model reads them: dates people would say, quoted lines, a block within its budget."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from astrbot_plugin_engram.memory import SELF, Episode, Hit, Memory
from astrbot_plugin_engram.memory.render import CLOSE, OPEN, ago, build_block, note, time_line, when
from astrbot_plugin_engram.memory.text import approx_tokens

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
    said = Episode(space="s", content='he said "go"\nnow', actor="qq:1", time=NOW - timedelta(days=2))
    assert note(hit(said), {"qq:1": "Ann"}, NOW, timezone.utc) == \
        "- 2026-11-27, 2 days ago — Ann said: \"he said 'go' now\""
    mine = Episode(space="s", content="on my way", actor=SELF, time=NOW)
    assert "— you said:" in note(hit(mine), {}, NOW, timezone.utc)
    about = Memory("likes tea", "self", subjects=("qq:1",), created_at=NOW)
    assert note(hit(about), {"qq:1": "Ann"}, NOW, timezone.utc).endswith('— about Ann: "likes tea"')


def test_the_block_keeps_its_budget_and_never_cuts_a_note() -> None:
    notes = [f"- note {n} " + "word " * 20 for n in range(10)]
    text, taken = build_block(notes, time_line(NOW, None, timezone.utc), "", 120)
    assert text.startswith(OPEN) and text.endswith(CLOSE) and approx_tokens(text) <= 120
    assert taken and all(notes[i] in text for i in taken) and notes[taken[-1] + 1] not in text
