#!/usr/bin/env python
"""The injected block against its budget in a real tokenizer: `bench/inject_budget.py`.

For texts in six languages (English, Chinese, emoji, Korean, Japanese, Russian), 60 recalled lines
are rendered into the block at budgets 200, 600 and 2000, and the block is counted in Qwen's
tokenizer (dashscope's bundled vocabulary, which AstrBot brings; no download). Printed per row: the
notes that fit, the block's tokens by the budget estimate (``text.budget_tokens``), by the older
``text.approx_tokens``, and in Qwen's tokens.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

from dashscope.tokenizers.tokenizer import get_tokenizer

from astrbot_plugin_engram.memory import Episode, Hit
from astrbot_plugin_engram.memory.render import build_block, note, time_line
from astrbot_plugin_engram.memory.text.words import approx_tokens, budget_tokens

NOW = datetime(2026, 11, 29, 12, tzinfo=timezone.utc)
TEXTS = json.loads((Path(__file__).parent / "data" / "six-languages.json").read_text("utf-8"))


def main() -> None:
    qwen = get_tokenizer("qwen-turbo")
    print(f"{'lang':<6} {'budget':>6} {'notes':>5} {'estimate':>8} {'approx':>6} {'qwen':>5}")
    for lang, texts in TEXTS.items():
        eps = [Episode(place="s", content=f"{texts[i % len(texts)]} {i}", actor="qq:1", actor_name="小明",
                       time=NOW - timedelta(days=i)) for i in range(60)]
        notes = [note(Hit("episode", 1, e.content, 1.0, {}, e), {}, NOW, timezone.utc) for e in eps]
        time = time_line(NOW, NOW - timedelta(hours=2), timezone.utc)
        for budget in (200, 600, 2000):
            text, taken = build_block(notes, time, "", budget)
            print(f"{lang:<6} {budget:>6} {len(taken):>5} {budget_tokens(text):>8} {approx_tokens(text):>6} "
                  f"{len(qwen.encode(text)):>5}")


if __name__ == "__main__":
    main()
