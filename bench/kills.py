"""Crash safety at scale: the real write path killed with SIGKILL 200 times at random moments.

    .venv/bin/python bench/kills.py [--kills 200] [--seed N]

Each round starts ``tests/_kill_child.py`` on the same file (twelve chats recording through the
plugin's recording queue, the background indexer, consolidation against a fake OpenAI server with a
scripted model, a person forgotten, online backups at random moments), kills it at a random moment up
to ``--most`` seconds after the store opened, and checks the file (``tests/kill_harness.py``: every
acknowledged episode there, ``PRAGMA integrity_check`` ok, keyword index and vector cursors equal to
the rows, no consolidation batch or forget half-applied, nothing forgotten back; the newest backup
whole, and restored with the erase list, nothing forgotten back); every fifth round it is also opened
as the plugin opens it and the indexer fills in the vectors the kills cut off. The first failed check
stops the run with its assertion. Prints one table.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fake_openai import FakeOpenAI, contract_answer  # noqa: E402
from tests.kill_harness import kill_rounds  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kills", type=int, default=200)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--most", type=float, default=2.0, help="latest kill, seconds after the store opened")
    args = ap.parse_args()
    server = FakeOpenAI().start()
    server.default_reply = partial(contract_answer, per=1)  # type: ignore[assignment]
    started = time.monotonic()
    try:
        with tempfile.TemporaryDirectory(prefix="engram-kills-") as tmp:
            seen = kill_rounds(Path(tmp) / "engram.db", server.base_url, args.kills, seed=args.seed,
                               most=args.most, progress=True)
    finally:
        server.stop()
    took = time.monotonic() - started
    forgets = sum(1 for eps, _ in seen.forgotten.values() if eps)
    print("| figure | value |\n|---|---|")
    for name, value in (("kills (SIGKILL at a random moment)", args.kills),
                        ("failed checks", 0),
                        ("episodes acknowledged, all present after every kill", len(seen.acked)),
                        ("episodes / memories in the file at the end", f"{seen.episodes} / {seen.memories}"),
                        ("consolidation runs finished before their kill (batches commit one by one)",
                         seen.consolidations),
                        ("forgets returned before their kill (nothing of them came back)", forgets),
                        ("forgets cut off by the kill (all or nothing each)", seen.kills_mid_forget),
                        ("backups finished before their kill", seen.backups),
                        ("newest backups checked whole and restored (nothing forgotten back)", seen.restores),
                        ("wall time", f"{took:.0f} s")):
        print(f"| {name} | {value} |")


if __name__ == "__main__":
    main()
