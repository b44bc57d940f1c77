"""Child process of test_json_file_lock: adds N entries, one read-modify-write each, to a JSON file
beside the store, as the bot or the command line would, once the parent's start file exists.

Run as ``python -m tests._json_file_child KIND FOLDER START N`` from the repository root; KIND is
``proposals`` (one proposal each, ``identity/proposals.json``) or ``rewrites`` (one day each, its
first day START days after 2000-01-01, ``diary/.rewrite-pending.json``).
"""

from __future__ import annotations

import sys
import time
from datetime import date, timedelta
from pathlib import Path

from astrbot_plugin_engram.memory.self.diary_files import rewrite_later
from astrbot_plugin_engram.memory.self.identity import IdentityFolder
from astrbot_plugin_engram.memory.self.proposals import Proposals


def main() -> None:
    kind, folder, start, n = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    go = folder / "go"
    while not go.exists():
        time.sleep(0.001)
    proposals = Proposals(IdentityFolder(folder), max_pending=10_000)
    for i in range(start, start + n):
        if kind == "proposals":
            proposals.propose(f"change {i}", "reason", "qq:group:1")
        else:
            rewrite_later(folder, [date(2000, 1, 1) + timedelta(days=i)])


if __name__ == "__main__":
    main()
