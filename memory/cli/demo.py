"""``make demo``: a bundled sample recorded into a fresh store, then one question, several audiences.

No API key, no server: the bundled local model embeds (``fast=True`` uses keywords only). The
same question is asked in the group and in each private chat; the answers differ, and the demo
checks that no chat's secrets turn up anywhere else.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from ..embedders import Embedder, LocalE5, NoEmbedder
from ..engram import Engram
from ..model import SELF, Audience, Episode, Hit, Memory
from ..scopes import place_scope
from .main import clip, pad

SAMPLE = Path(__file__).resolve().parents[1] / "samples" / "demo.json"
LEFT, RIGHT, TOP = 18, 82, 3  # column widths and hits shown per audience


@dataclass
class DemoResult:
    """What the demo asked and what each chat recalled, plus the secrets that leaked (none)."""

    answers: dict[str, dict[str, list[Hit]]] = field(default_factory=dict)  # question -> chat -> hits
    leaks: list[str] = field(default_factory=list)


def load_sample(path: Path = SAMPLE) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def audiences(sample: dict[str, Any]) -> dict[str, Audience]:
    """One audience per chat of the sample, keyed like the sample's chats."""
    people = sample["people"]
    return {key: Audience(c["space"], tuple(people[p]["id"] for p in c["people"]),
                          owner_private=bool(c.get("owner")))
            for key, c in sample["chats"].items()}


def episodes(sample: dict[str, Any], today: datetime) -> list[Episode]:
    """The sample's lines as episodes, dated relative to ``today`` in the sample's time zone."""
    tz = timezone(timedelta(hours=sample["timezone_hours"]))
    base = today.astimezone(tz).replace(hour=0, minute=0, second=0, microsecond=0)
    out = []
    for chat, day, hhmm, who, text in sample["lines"]:
        hour, minute = map(int, hhmm.split(":"))
        person = sample["people"][who]
        out.append(Episode(place=sample["chats"][chat]["space"], content=text, actor=person["id"],
                           actor_name=person["name"], source="demo",
                           kind="message_out" if person["id"] == SELF else "message_in",
                           time=base + timedelta(days=day, hours=hour, minutes=minute)))
    return out


def memories(sample: dict[str, Any]) -> list[Memory]:
    """The sample's memories; ``in`` names the chat they were learned in and stay in."""
    out = []
    for m in sample["memories"]:
        scope = m.get("scope") or place_scope(sample["chats"][m["in"]]["space"])
        subjects = tuple(sample["people"][p]["id"] for p in m.get("about", ()))
        out.append(Memory(text=m["text"], scope=scope, kind=m["kind"], subjects=subjects))
    return out


async def fill(e: Engram, sample: dict[str, Any], say: Callable[[str], None]) -> None:
    """Record the sample, add its memories, and wait until everything is embedded."""
    t0 = time.perf_counter()
    await e.record_many(episodes(sample, datetime.now(timezone.utc)))
    for m in memories(sample):
        await e.add_memory(m)
    n = await e.embed_pending()
    how = f"embedded {n} items with {e.embedder.name}" if n else "keywords only (no embedder)"
    say(f"Recorded {len(sample['lines'])} messages in {len(sample['chats'])} chats and "
        f"{len(sample['memories'])} memories; {how} in {time.perf_counter() - t0:.1f} s.\n")


def hit_line(n: int, h: Hit) -> str:
    """One recalled item: its key, then a memory's scope or an episode's speaker, then the text."""
    if isinstance(h.item, Episode):
        return clip(f"{n}. {h.key} {h.item.actor_name}: {h.text}", RIGHT)
    scope = "this chat" if h.item.scope.startswith("space:") else h.item.scope
    return clip(f"{n}. {h.key} [{scope}] {h.text}", RIGHT)


def table(question: str, titles: dict[str, str], answers: dict[str, list[Hit]]) -> str:
    """A small text table: one row per chat, its best hits beside it."""
    rule = "-" * (LEFT + RIGHT + 3)
    rows = [f"Q: {question}", rule]
    for chat, hits in answers.items():
        lines = [hit_line(i, h) for i, h in enumerate(hits[:TOP], 1)] or ["(nothing this chat may see)"]
        for j, line in enumerate(lines):
            rows.append(f"{pad(titles[chat] if j == 0 else '', LEFT)} | {line}")
        rows.append(rule)
    return "\n".join(rows)


def leaks(sample: dict[str, Any], result: DemoResult) -> list[str]:
    """Every secret of one chat that shows up in another chat's answers."""
    found = []
    for question, per_chat in result.answers.items():
        for chat, hits in per_chat.items():
            for home, secrets in sample["secrets"].items():
                for s in secrets:
                    if home != chat and any(s.lower() in h.text.lower() for h in hits):
                        found.append(f"{s!r} from the {home} chat appeared in {chat} for {question!r}")
    return found


async def run_demo(fast: bool = False, say: Callable[[str], None] = print,
                   embedder: Embedder | None = None, k: int = 5) -> DemoResult:
    """Run the whole demo in a temporary folder; returns what was recalled."""
    sample = load_sample()
    emb = embedder or (NoEmbedder() if fast else LocalE5())
    auds = audiences(sample)
    titles = {key: c["title"] for key, c in sample["chats"].items()}
    result = DemoResult()
    with tempfile.TemporaryDirectory(prefix="engram-demo-") as folder:
        say(f"Engram demo: a fresh store in {folder}")
        e = await Engram.open(Path(folder) / "demo.db", emb, background=False)
        try:
            await fill(e, sample, say)
            say("Each question is asked in every chat; each row shows what that chat recalls (best first).\n"
                "e12 is an episode (a message), m3 a memory with its scope.\n")
            for q in sample["questions"]:
                result.answers[q] = {chat: await e.recall(q, aud, k=k) for chat, aud in auds.items()}
                say(table(q, titles, result.answers[q]) + "\n")
        finally:
            await e.close()
    result.leaks = leaks(sample, result)
    n_secrets = sum(len(s) for s in sample["secrets"].values())
    say(f"Leak check: {n_secrets} secrets of the private chats, looked for in every other chat's "
        f"top {k}: " + ("none appeared." if not result.leaks else "LEAKED:\n  " + "\n  ".join(result.leaks)))
    return result
