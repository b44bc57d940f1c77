#!/usr/bin/env python
"""Consolidation cost: model calls and tokens per 100 episodes, and prompt size as the store grows.

MemoryBank's Chinese chats (15 users x 10 days) are recorded as episodes, and consolidation runs as
the plugin runs it (after K new lines in a place, and on a timer for places whose conversation
paused), against the fake OpenAI-compatible server answering in the contract's format (one memory
per four lines) through the real ``openai`` client. Token counts are the server's estimate (one
token per CJK character or four other characters). Three ways of replaying the chats:

- ``busy``: each user's ten days said in one go, a line a minute (a busy chat);
- ``dated``: each line at its real date (about ten lines a day: a quiet chat);
- ``backlog``: everything recorded first, then consolidated at once (the best batching can do).

Then the size of one batch's prompt with 1,000 and 100,000 memories stored (keywords only: the
related memories shown are bounded by ``related`` however they are found).

    .venv/bin/python bench/consolidation.py [--sizes 1000,100000] [--json OUT]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from functools import partial
from pathlib import Path
from typing import Any

from astrbot_plugin_engram.memory import SELF, Engram, Episode, Memory, NoEmbedder, place_scope
from astrbot_plugin_engram.memory.chat import OpenAIChat
from astrbot_plugin_engram.memory.consolidation import ConsolidationSettings, Consolidator, Report

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.fake_openai import FakeOpenAI, contract_answer  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "memorybank" / "memory_bank_cn.json"
K = 30  # the plugin's default consolidate_after_episodes
TICK = timedelta(minutes=30)  # the plugin's default consolidate_every_minutes
BOT = "AI伴侣"


def chats(mode: str) -> list[Episode]:
    """Every user's lines as episodes of their private chat, in time order."""
    users = json.loads(DATA.read_text("utf-8"))
    out = []
    for n, (name, user) in enumerate(users.items()):
        place, actor = f"mb:private:{n}", f"mb:{n}"
        start = datetime(2023, 4, 27, 8, tzinfo=timezone.utc) + timedelta(minutes=7 * n)
        i = 0
        for day, pairs in sorted(user["history"].items()):
            d = datetime.fromisoformat(day).replace(hour=20, tzinfo=timezone.utc) + timedelta(minutes=n)
            lines = [(who, text, kind) for p in pairs for who, text, kind in
                     ((actor, p["query"], "message_in"), (SELF, p["response"], "message_out"))]
            for j, (who, text, kind) in enumerate(lines):
                t = start + timedelta(minutes=i) if mode == "busy" else d + timedelta(minutes=j)
                out.append(Episode(place, text, actor=who, actor_name=name if who != SELF else BOT,
                                   kind=kind, time=t))
                i += 1
    return sorted(out, key=lambda e: e.time or 0)


def add(total: dict[str, int], report: Report) -> None:
    for k, v in report.stats().items():
        total[k] = total.get(k, 0) + v


async def replay(mode: str, server: FakeOpenAI, folder: Path, max_wait_hours: float) -> dict[str, Any]:
    """Record the chats and consolidate as the plugin would; returns the counts."""
    eng = await Engram.open(folder / f"{mode}.db", NoEmbedder(), background=False)
    eps = chats(mode)
    clock = [eps[0].time.timestamp()]  # type: ignore[union-attr]
    chat = OpenAIChat("bench", server.base_url)
    settings = ConsolidationSettings(min_new=K, backoff_seconds=0, max_wait_seconds=max_wait_hours * 3600)
    con = Consolidator(eng, chat, settings, clock=lambda: clock[0])
    total: dict[str, int] = {}
    started = time.perf_counter()
    if mode == "backlog":
        await eng.record_many(eps)
        clock[0] = eps[-1].time.timestamp() + 86400  # type: ignore[union-attr]
        while (r := await con.run(force=True)).calls:
            add(total, r)
    else:
        new: dict[str, int] = {}
        next_tick = clock[0] + TICK.total_seconds()
        for ep in eps:
            t = ep.time.timestamp()  # type: ignore[union-attr]
            while next_tick <= t:  # the timer fired while nobody spoke
                clock[0] = next_tick
                add(total, await con.run())
                next_tick += TICK.total_seconds()
            clock[0] = t
            await eng.record(ep)
            new[ep.place] = new.get(ep.place, 0) + 1
            if new[ep.place] >= K:  # the K-new-lines trigger
                new[ep.place] = 0
                add(total, await con.run())
        for _ in range(48):  # the timer goes on after the last line: a day of ticks
            clock[0] += TICK.total_seconds()
            add(total, await con.run())
    took = time.perf_counter() - started
    await chat.close()
    left = sum(n for _, n, *_ in await eng.store.episode_backlog(
        {k.split(":", 1)[1]: v for k, v in (await eng.store.cursors("consolidate:")).items()}))
    await eng.close()
    n = len(eps)
    return {"mode": mode, "max_wait_hours": max_wait_hours, "episodes": n, "left_unconsolidated": left,
            "seconds": round(took, 1),
            "calls": total.get("calls", 0), "calls_per_100": round(100 * total.get("calls", 0) / n, 2),
            "prompt_tokens_per_100": round(100 * total.get("prompt_tokens", 0) / n),
            "completion_tokens_per_100": round(100 * total.get("completion_tokens", 0) / n),
            "added": total.get("added", 0)}


async def prompt_size(size: int, server: FakeOpenAI, folder: Path) -> dict[str, Any]:
    """The tokens of one 60-line batch's prompt with ``size`` memories stored (a tenth in its place)."""
    eng = await Engram.open(folder / f"grow{size}.db", NoEmbedder(), background=False)
    texts = [e.content for e in chats("busy")]
    place = "mb:private:0"
    started = time.perf_counter()
    for start in range(0, size, 2000):
        batch = [(Memory(text=texts[i % len(texts)][:120] + f" #{i}",
                         scope=place_scope(place if i % 10 == 0 else f"mb:private:{i % 97 + 1}")), None)
                 for i in range(start, min(size, start + 2000))]
        await eng.commit_memories(batch, {})
    fill = time.perf_counter() - started
    await eng.record_many([e for e in chats("busy") if e.place == place][:60])
    before = len(server.chat_requests())
    chat = OpenAIChat("bench", server.base_url)
    started = time.perf_counter()
    report = await Consolidator(eng, chat, ConsolidationSettings(batch_episodes=60)).run(force=True)
    took = time.perf_counter() - started
    await chat.close()
    await eng.close()
    sent = server.chat_requests()[before:]
    chars = sum(len(m["content"]) for b in sent for m in b["messages"])
    return {"memories": size, "calls": report.calls, "prompt_tokens": report.prompt_tokens,
            "prompt_chars": chars, "run_seconds": round(took, 2), "fill_seconds": round(fill, 1)}


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000,100000", help="stored memories for the prompt size ('': none)")
    ap.add_argument("--modes", default="busy,dated,backlog")
    ap.add_argument("--max-wait-hours", default="24", help="comma-separated: each mode is run with each")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    server = FakeOpenAI(default_reply=partial(contract_answer, per=4)).start()  # type: ignore[arg-type]
    out: dict[str, Any] = {"replay": [], "prompt": []}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for mode in args.modes.split(","):
                for hours in (float(h) for h in args.max_wait_hours.split(",")):
                    row = await replay(mode, server, Path(tmp), hours)
                    out["replay"].append(row)
                    print(json.dumps(row, ensure_ascii=False), flush=True)
            for size in (int(s) for s in args.sizes.split(",") if s):
                row = await prompt_size(size, server, Path(tmp))
                out["prompt"].append(row)
                print(json.dumps(row), flush=True)
    finally:
        server.stop()
    if args.json:
        args.json.write_text(json.dumps(out, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    asyncio.run(main())
