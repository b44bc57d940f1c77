"""bench/block.py on a tiny group: the request is AstrBot's own shape, the block is measured as injected."""

from __future__ import annotations

import importlib.util
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from ._astrbot_root import use_temp_astrbot_root
from .conftest import HashEmbedder

use_temp_astrbot_root("engram-bench-block-tests-")

from astrbot.core.agent.message import TextPart  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
T0 = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def block() -> ModuleType:
    """bench/block.py (its bench-folder imports resolved as when run from the command line)."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        spec = importlib.util.spec_from_file_location("bench_block", ROOT / "bench" / "block.py")
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.modules["bench_block"] = module
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(ROOT / "bench"))


def conversation(block: ModuleType) -> Any:
    """Two friends' lines and two questions about them, in the LoCoMo shape."""
    data = sys.modules["_locomo_data"]  # the bench's reader, loaded with the bench
    said = [("Caroline", "My cat is called Mochi and she sleeps on the piano."),
            ("Melanie", "I went swimming at the lake last Wednesday."),
            ("Caroline", "I started a pottery class downtown."),
            ("Melanie", "haha nice"),
            ("Caroline", "My brother Tom moved to Berlin for a job at a bakery.")]
    turns = [data.Turn(f"D1:{i + 1}", who, text, T0 + i * timedelta(seconds=30), False)
             for i, (who, text) in enumerate(said)]
    questions = [data.Question("What is Caroline's cat called?", frozenset({"D1:1"}), 4),
                 data.Question("Where did Caroline's brother move?", frozenset({"D1:5"}), 4)]
    return data.Conversation("conv-t", turns, questions)


async def test_the_question_finds_its_evidence_in_the_injected_block(block: ModuleType,
                                                                     tmp_path: Path) -> None:
    conv = conversation(block)
    replay = block.Replay(conv, "en", False, HashEmbedder(), tmp_path)
    await replay.record_data()
    results = await replay.run(conv.questions, "first", "reminder", seed=1)
    assert [r.block_recall for r in results] == [1.0, 1.0]
    assert "My cat is called Mochi" in results[0].block
    assert "Berlin" in results[1].block and results[1].notes >= 1
    assert results[0].tokens > 0 and results[0].chars == len(results[0].block)


async def test_the_third_turn_carries_astrbots_reminders_and_the_asking_stays_in_the_group(
        block: ModuleType, tmp_path: Path) -> None:
    conv = conversation(block)
    replay = block.Replay(conv, "en", False, HashEmbedder(), tmp_path)
    await replay.record_data()
    third = await replay.run(conv.questions, "third", "reminder", seed=1)
    # the earlier turns come back from AstrBot's stored history with their reminders (finding 1), and
    # the plugin's query holds none of them: only what people said
    assert "<system_reminder>" not in third[0].query and "Current datetime:" not in third[0].query
    assert "Nickname: Sam" not in third[0].query and "Weekday:" not in third[0].query
    assert "<engram-memory>" not in third[0].query  # the plugin's temporary block is not saved
    assert third[0].query.startswith("What is Caroline's cat called?")
    # the first question, its small talk and the bot's replies were recorded in the group before the
    # second question: the second block may hold them, and the bench counts them as asking lines
    asked = {*block.SMALL_TALK["en"], *block.REPLIES["en"], conv.questions[0].text}
    assert any(n in asked for n in third[1].free_notes + third[1].kept_notes) == (third[1].asking > 0)
    quiet = await replay.run(conv.questions, "third", "no-datetime", seed=1)
    assert "<system_reminder>" not in quiet[0].query and "Current datetime:" not in quiet[0].query


async def test_the_stored_turn_is_astrbots_history_shape(block: ModuleType) -> None:
    ev = block.group_event("hello", "sam", "Sam", "g1", "Friends")
    req = block.ProviderRequest(prompt="hello", contexts=[])
    block._append_system_reminders(ev, req, block.VARIANTS["reminder"], block.TZ)
    req.extra_user_content_parts.append(TextPart(text="<engram-memory>x</engram-memory>").mark_as_temp())
    user, bot = await block.stored_turn(req, "Hi!")
    assert user["role"] == "user" and (bot["role"], bot["content"]) == ("assistant", "Hi!")
    texts = [p["text"] for p in user["content"]]
    assert texts[0] == "hello" and texts[1].startswith("<system_reminder>User ID: sam, Nickname: Sam")
    assert len(texts) == 2  # the temporary part is gone, as AstrBot drops it when it saves


@pytest.mark.parametrize("text", ["Got it, thanks for telling me!", "haha ok", "👍", "lol", "I'm back",
                                  "anyone here?", "好的，我知道了！", "哈哈哈", "谢谢！", "早上好！",
                                  "Here is what I was told:", "Tool said: Memories:"])
def test_acknowledgements_emoji_and_echo_residue_are_content_free(block: ModuleType, text: str) -> None:
    assert block.content_free(text)


@pytest.mark.parametrize("text", ["My cat is called Mochi.", "I went swimming on Wednesday",
                                  "what do you remember about my cat?", "我对海鲜过敏。",
                                  "晚饭吃了妈妈做的红烧肉。",
                                  "just got home from work", "Thanks, the pottery class was great!"])
def test_a_note_with_one_content_word_is_not_content_free(block: ModuleType, text: str) -> None:
    assert not block.content_free(text)


def test_the_summary_counts_what_the_budget_cut(block: ModuleType) -> None:
    conv = conversation(block)
    q = conv.questions[0]
    r = block.Result(q, 0.0, 1.0, True, 4, 1, 2, 1000, 300, 250, 400, 8, 2, "q", "b")
    s = block.summarise([r, block.Result(q, 1.0, 1.0, False, 6, 0, 0, 1200, 400, 330, 400, 8, 0, "q", "b")])
    assert s["block_recall"] == 0.5 and s["hits_recall"] == 1.0
    assert s["cut_share"] == 0.5 and s["cut_share_of_recalled"] == 0.5
    assert s["content_free_share"] == round(1 / 10, 4) and s["asking_share"] == 0.2
    assert s["date_matched_share"] == round(2 / 16, 4)
    assert "| t | first | reminder | 2 | 0.500 |" in block.table({"t": {"first/reminder": s}})
