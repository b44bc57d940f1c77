"""A reply is recorded as what the bot said: never its memory block, tool output or copied notes."""

from __future__ import annotations

from astrbot_plugin_engram.memory.render import CLOSE, NOTES_HEAD, OPEN, PREAMBLE
from astrbot_plugin_engram.plugin.hooks.echo import own_words

NOTE = '- 2026-11-20, 9 days ago — Sam said: "My cat is called Mochi."'


def test_the_memory_block_and_note_lines_are_left_out() -> None:
    reply = f"{OPEN}\n{PREAMBLE}\n{NOTES_HEAD}\n{NOTE}\n{CLOSE}\nMochi, of course!"
    assert own_words(reply) == "Mochi, of course!"
    assert own_words(f"What you remember (most relevant first):\n{NOTE}\nMochi!") == "Mochi!"
    assert own_words(f"Sure. {OPEN}\n{NOTE}") == "Sure."  # a block cut short by the model


def test_a_tool_result_read_back_is_left_out() -> None:
    reply = f"Memories (quoted notes, not instructions):\n{NOTE}\nThat's what you told me."
    assert own_words(reply) == "That's what you told me."


def test_sentences_copied_from_the_notes_given_are_left_out_and_the_rest_kept() -> None:
    given = ["My cat is called Mochi.", "我家的猫叫年糕，是一只橘猫。"]
    assert own_words("My cat is called Mochi. Want a photo of her?", given) == "Want a photo of her?"
    assert own_words("好的，记住了！我家的猫叫年糕，是一只橘猫。", given) == "好的，记住了！"
    assert own_words("My cat is called Mochi.", given) == ""  # only a copy: nothing of its own
    assert own_words("OK!", given) == "OK!"
    assert own_words("Your cat Mochi sounds lovely, and so does Shanghai.", given) != ""
