#!/usr/bin/env python
"""Recall on a new user's first week: facts told once among the bot's "OK, noted"s, asked later.

``bench/data/firstweek.json`` (written for issue 16, English and Chinese): each conversation is one
private chat recorded as the plugin records it (the user's lines, the bot's replies as its own
lines), and each question is recalled a week after the first line with that chat's audience, as
the plugin's query for a new conversation (the question alone). Prints evidence recall@k per
language, and how often a bot line that is not the answer sits in the top 3 (``bot@3``).

    .venv/bin/python bench/firstweek.py [--embedder local|none] [--show]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from astrbot_plugin_engram.memory import SELF, Audience, Embedder, Engram, Episode, Hit, LocalE5, NoEmbedder

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "firstweek.json"
START = datetime(2026, 11, 2, tzinfo=timezone.utc)  # day 0 of every conversation
KS = (1, 3, 5, 8)


@dataclass
class Answer:
    """One question's recall: the turn index of each hit (-1: not a turn) and its evidence."""

    conv: str
    lang: str
    question: str
    evidence: list[int]
    turns: list[int]
    bot: list[bool]  # each hit is a bot line
    hits: list[Hit]

    def recall(self, k: int) -> float:
        return len(set(self.turns[:k]) & set(self.evidence)) / len(self.evidence)

    def bot_noise(self, k: int) -> float:
        """Share of the top ``k`` that are the bot's own lines without the answer."""
        top = list(zip(self.turns, self.bot))[:k]
        return sum(1 for t, b in top if b and t not in self.evidence) / max(1, len(top))


def load(path: Path = DATA) -> dict[str, Any]:
    return dict(json.loads(path.read_text("utf-8")))


def episodes(conv: dict[str, Any], chatter: list[list[Any]]) -> list[Episode]:
    place = f"firstweek:private:{conv['id']}"
    out = []
    for day, hhmm, who, text in [*conv["turns"], *chatter]:
        h, m = map(int, hhmm.split(":"))
        t = START + timedelta(days=day, hours=h, minutes=m)
        bot = who == "bot"
        out.append(Episode(place=place, content=text, time=t,
                           actor=SELF if bot else f"firstweek:{conv['id']}",
                           actor_name="" if bot else conv["user"],
                           kind="message_out" if bot else "message_in"))
    return out


async def run(engram: Engram, data: dict[str, Any], k: int = 8) -> list[Answer]:
    """Record every conversation into ``engram`` and recall each question."""
    now = START + timedelta(days=data["asked_on_day"], hours=12)
    out = []
    for conv in data["conversations"]:
        ids = await engram.record_many(episodes(conv, data.get("chatter", {}).get(conv["lang"], [])))
        await engram.embed_pending()
        where = {i: n for n, i in enumerate(ids)}
        audience = Audience(place=f"firstweek:private:{conv['id']}", people=(f"firstweek:{conv['id']}",))
        for q in conv["questions"]:
            hits = await engram.recall(q["q"], audience, k=k, now=now)
            turns = [where.get(h.id, -1) if h.kind == "episode" else -1 for h in hits]
            bot = [isinstance(h.item, Episode) and h.item.actor == SELF for h in hits]
            out.append(Answer(conv["id"], conv["lang"], q["q"], q["evidence"], turns, bot, hits))
    return out


def table(answers: list[Answer]) -> str:
    """recall@k and bot@3 per language and overall, as a markdown table."""
    head = "| set | questions | " + " | ".join(f"R@{k}" for k in KS) + " | bot@3 |"
    lines = [head, "|" + "---|" * (len(KS) + 3)]
    for name, group in (("en", [a for a in answers if a.lang == "en"]),
                        ("zh", [a for a in answers if a.lang == "zh"]), ("all", answers)):
        if not group:
            continue
        cells = [f"{sum(a.recall(k) for a in group) / len(group):.3f}" for k in KS]
        noise = sum(a.bot_noise(3) for a in group) / len(group)
        lines.append(f"| {name} | {len(group)} | " + " | ".join(cells) + f" | {noise:.3f} |")
    return "\n".join(lines)


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--embedder", choices=("local", "none"), default="local")
    ap.add_argument("--show", action="store_true", help="print each question's top 3")
    args = ap.parse_args()
    embedder: Embedder = LocalE5() if args.embedder == "local" else NoEmbedder()
    with tempfile.TemporaryDirectory() as tmp:
        engram = await Engram.open(Path(tmp) / "fw.db", embedder, background=False)
        try:
            answers = await run(engram, load())
        finally:
            await engram.close()
    if args.show:
        for a in answers:
            print(f"{a.conv} {a.question} evidence {a.evidence}")
            for t, h in zip(a.turns[:3], a.hits[:3]):
                print(f"   {'*' if t in a.evidence else ' '} {t:>3} {h.score:6.2f} {h.text[:70]}")
    print(f"embedder: {embedder.name}")
    print(table(answers))


if __name__ == "__main__":
    asyncio.run(main())
