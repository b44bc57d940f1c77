"""Synthetic but realistic load for bench/perf.py: real chat text spread over a skewed set of spaces.

Texts are LoCoMo turns (English) and MemoryBank chats (Chinese and English), varied by swapping
names and sometimes joining two turns. Spaces follow a Zipf law (s = 1): 60 groups carry 80 % of
the traffic, 240 private chats the other 20 %, so the largest group holds ~17 % of all episodes —
a busy group a companion bot lives in. Queries are LoCoMo questions and MemoryBank probing questions.

At a million (``scale_items``, issue 33) the spread is wider: 1,000 places (250 groups, 750 private
chats) on a Zipf law whose exponent (~1.14) gives the largest place 20 % of the episodes (200k of
1M), and memories are 10 % on top of the episodes. The place of the median episode (the 9th, ~16k
episodes) is the "typical" place: where a typical message is answered.
"""

from __future__ import annotations

import json
import random
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from astrbot_plugin_engram.memory import Episode, Memory, place_scope

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
if not DATA.exists():  # the checkout may live elsewhere; the shared data sits beside it
    DATA = Path("/work/shared/data")

GROUPS, PRIVATES = 60, 240
GROUP_SHARE = 0.8
MEMORY_SHARE = 0.05  # of all items, readable memories (facts), the rest episodes
NAMES = ("Caroline Melanie Jon Gina John Maria Joanna Nate Tim Audrey Andrew Evan Sam Deborah Jolene "
         "Calvin Dave Tom Lily Ava Noah Mia Leo Zoe Kai Nina Omar Ivy Ethan Chloe").split()
NAMES_ZH = "张曼婷 王峰 李雪 赵磊 陈静 刘洋 杨帆 黄敏 周杰 吴倩 徐鹏 孙悦 马超 朱琳 胡斌".split()


@dataclass(frozen=True)
class Line:
    speaker: str
    text: str


def _texts() -> list[Line]:
    lines: list[Line] = []
    for conv in json.loads((DATA / "locomo-dev.json").read_text()):
        c = conv["conversation"]
        n = 1
        while f"session_{n}" in c:
            lines += [Line(t["speaker"], t["text"]) for t in c[f"session_{n}"] if t.get("text")]
            n += 1
    for lang in ("cn", "en"):
        users = json.loads((DATA / "memorybank" / f"memory_bank_{lang}.json").read_text())
        for name, user in users.items():
            for day in user["history"].values():
                for pair in day:
                    if pair.get("query"):
                        lines.append(Line(name, pair["query"]))
                    if pair.get("response"):
                        lines.append(Line("bot", pair["response"]))
    return lines


def queries(n: int, seed: int = 7) -> list[str]:
    """``n`` varied questions in English and Chinese."""
    qs = [q["question"] for conv in json.loads((DATA / "locomo-dev.json").read_text())
          for q in conv["qa"]]
    for lang in ("cn", "en"):
        for line in (DATA / "memorybank" / f"probing_questions_{lang}.jsonl").read_text().splitlines():
            if line.strip():
                for v in json.loads(line).values():
                    qs += v
    rng = random.Random(seed)
    rng.shuffle(qs)
    return qs[:n]


def conversation_windows(n: int, turns: int = 4, seed: int = 11) -> list[tuple[str, list[str]]]:
    """``n`` (latest message, the ``turns`` turns before it) from the corpus' conversations, as the
    plugin sees a chat when it asks recall: a question, and what was said just before it."""
    lines = _texts()
    qs = queries(n, seed)
    rng = random.Random(seed)
    out = []
    for q in qs:
        at = rng.randrange(turns, len(lines))
        out.append((q, [line.text for line in lines[at - turns : at]]))
    return out


def dialogue_queries(n: int, seed: int = 7) -> list[str]:
    """``n`` queries of the shape the plugin sends before a reply (``memory.compose.recall_query``):
    a latest message with the turns before it, from LoCoMo sessions and MemoryBank chats (English
    and Chinese), about as long as the plugin makes them."""
    from astrbot_plugin_engram.memory.compose import recall_query
    from astrbot_plugin_engram.plugin.hooks.query import QUERY_TURNS  # no AstrBot import

    lines = _texts()
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        at = rng.randrange(QUERY_TURNS, len(lines))
        out.append(recall_query(lines[at].text, [t.text for t in lines[at - QUERY_TURNS : at]]))
    return out


def places() -> tuple[list[str], list[float]]:
    """Every space with its share of the traffic (largest first within groups and privates)."""
    names = [f"qq:group:{1000 + i}" for i in range(GROUPS)]
    names += [f"qq:private:{5000 + i}" for i in range(PRIVATES)]
    g = [1 / (i + 1) for i in range(GROUPS)]
    p = [1 / (i + 1) for i in range(PRIVATES)]
    weights = [GROUP_SHARE * w / sum(g) for w in g] + [(1 - GROUP_SHARE) * w / sum(p) for w in p]
    return names, weights


SCALE_PLACES, SCALE_GROUPS, SCALE_LARGEST = 1000, 250, 0.2


def scale_places() -> tuple[list[str], list[float]]:
    """The million's places and their cumulative shares: Zipf, the exponent set so the largest
    place holds ``SCALE_LARGEST`` of the episodes."""
    names = [f"qq:group:{1000 + i}" for i in range(SCALE_GROUPS)]
    names += [f"qq:private:{5000 + i}" for i in range(SCALE_PLACES - SCALE_GROUPS)]
    lo, hi = 0.5, 2.0
    for _ in range(60):  # bisection: the largest share grows with the exponent
        s = (lo + hi) / 2
        lo, hi = (s, hi) if 1 / sum(k ** -s for k in range(1, SCALE_PLACES + 1)) < SCALE_LARGEST else (lo, s)
    w = [k ** -lo for k in range(1, SCALE_PLACES + 1)]
    total, cum = sum(w), list[float]()
    for x in w:
        cum.append((cum[-1] if cum else 0.0) + x / total)
    return names, cum


def scale_items(episodes: int, seed: int = 1) -> Iterator[Episode | Memory]:
    """About ``episodes`` episodes over the million's 1,000 places and a tenth as many memories, in
    time order (~one message every 2 s overall: a million is ~3 weeks of a busy bot)."""
    rng = random.Random(seed)
    pool = _texts()
    names, cum = scale_places()
    t = datetime(2024, 1, 1, tzinfo=timezone.utc)
    for _ in range(episodes + episodes // 10):
        t += timedelta(seconds=rng.expovariate(1 / 2))
        place = rng.choices(names, cum_weights=cum)[0]
        line = pool[rng.randrange(len(pool))]
        if rng.random() < 1 / 11:
            scope = rng.choice(("public", "self", "owner", place_scope(place), place_scope(place)))
            yield Memory(text=_vary(rng, line, pool), scope=scope, created_at=t)
            continue
        bot = line.speaker == "bot"
        actor = "self" if bot else f"qq:{zlib.crc32((place + line.speaker).encode())}"
        yield Episode(place=place, content=_vary(rng, line, pool), actor=actor,
                      actor_name="" if bot else line.speaker, time=t,
                      kind="message_out" if bot else "message_in")


def _vary(rng: random.Random, line: Line, pool: list[Line]) -> str:
    text = line.text
    if rng.random() < 0.5:
        for name in NAMES + NAMES_ZH:
            if name in text:
                text = text.replace(name, rng.choice(NAMES_ZH if name in NAMES_ZH else NAMES))
    if rng.random() < 0.15:
        text += " " + rng.choice(pool).text
    return text


def items(n: int, one_place: str | None = None, seed: int = 1) -> Iterator[Episode | Memory]:
    """``n`` items in time order: ~95 % episodes over the skewed spaces, ~5 % memories."""
    rng = random.Random(seed)
    pool = _texts()
    names, weights = places()
    t = datetime(2024, 1, 1, tzinfo=timezone.utc)
    for _ in range(n):
        t += timedelta(seconds=rng.expovariate(1 / 120))  # ~one message every two minutes overall
        place = one_place or rng.choices(names, weights)[0]
        line = pool[rng.randrange(len(pool))]
        if rng.random() < MEMORY_SHARE:
            scope = rng.choice(("public", "self", "owner", place_scope(place), place_scope(place)))
            yield Memory(text=_vary(rng, line, pool), scope=scope, created_at=t)
            continue
        bot = line.speaker == "bot"
        actor = "self" if bot else f"qq:{zlib.crc32((place + line.speaker).encode())}"
        yield Episode(place=place, content=_vary(rng, line, pool), actor=actor,
                      actor_name="" if bot else line.speaker, time=t,
                      kind="message_out" if bot else "message_in")
