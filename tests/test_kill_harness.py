"""Crash safety at scale: the real write path (chats recording through the plugin's queue, the
indexer, consolidation with a scripted model, a forget, online backups) killed with SIGKILL twenty
times at random moments on one file; after every kill nothing acknowledged is lost, nothing is
half-applied, nothing forgotten is back, in the file or in its newest backup restored
(``tests/kill_harness.py`` says what is checked; ``bench/kills.py`` kills 200 times).
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from .fake_openai import FakeOpenAI, contract_answer
from .kill_harness import kill_rounds

KILLS = 20


def test_twenty_kills_at_random_moments_lose_and_half_apply_nothing(tmp_path: Path,
                                                                    fake_openai: FakeOpenAI) -> None:
    fake_openai.default_reply = partial(contract_answer, per=1)  # type: ignore[assignment]
    seen = kill_rounds(tmp_path / "engram.db", fake_openai.base_url, KILLS, most=1.5)
    # the kills landed amid real work, not on an idle file
    assert len(seen.acked) > 200, f"only {len(seen.acked)} episodes were acknowledged in {KILLS} rounds"
    assert seen.memories > 0 and seen.consolidations > 0, "consolidation never committed a batch"
    assert seen.forgotten, "no forget returned before its kill in any round"
    assert seen.backups > 0 and seen.restores > 0, "no backup was finished, checked and restored"
