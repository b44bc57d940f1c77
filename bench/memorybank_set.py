#!/usr/bin/env python
"""Build a small labelled Chinese recall set in the LoCoMo format from MemoryBank's Chinese chats.

Each labelled user becomes one conversation (a session per day: the user's message, then the
bot's reply); the questions and their evidence turns were labelled by hand by reading the chats
(bench/data/memorybank-cn-labels.json: [user, question, ["<date>#<pair><q|r>", ...]]).

    .venv/bin/python bench/memorybank_set.py  # writes bench/data/memorybank-cn.json
    .venv/bin/python bench/locomo.py --data bench/data/memorybank-cn.json
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parent.parent / "shared" / "data" / "memorybank" / "memory_bank_cn.json"
BOT = "AI伴侣"


def conversation(name: str, user: dict, labels: list[tuple[str, list[str]]]) -> dict:
    """One user's chats as a LoCoMo conversation with its labelled questions."""
    conv: dict = {"speaker_a": name, "speaker_b": BOT}
    where: dict[str, str] = {}
    for n, (day, pairs) in enumerate(sorted(user["history"].items()), start=1):
        d = date.fromisoformat(day)
        conv[f"session_{n}_date_time"] = f"8:00 pm on {d.day} {d:%B}, {d.year}"
        turns: list[dict] = []
        for i, p in enumerate(pairs):
            for side, speaker, text in (("q", name, p["query"]), ("r", BOT, p["response"])):
                dia = f"D{n}:{len(turns) + 1}"
                where[f"{day}#{i}{side}"] = dia
                turns.append({"speaker": speaker, "dia_id": dia, "text": text})
        conv[f"session_{n}"] = turns
    qa = [{"question": q, "answer": "", "evidence": [where[e] for e in ev],
           "category": 4 if len(ev) == 1 else 1} for q, ev in labels]
    return {"sample_id": f"mb-{name}", "conversation": conv, "qa": qa}


def main() -> None:
    users = json.loads(SOURCE.read_text(encoding="utf-8"))
    labels: dict[str, list[tuple[str, list[str]]]] = {}
    for name, q, ev in json.loads((HERE / "data" / "memorybank-cn-labels.json").read_text(encoding="utf-8")):
        labels.setdefault(name, []).append((q, ev))
    out = [conversation(name, users[name], qs) for name, qs in labels.items()]
    path = HERE / "data" / "memorybank-cn.json"
    path.write_text(json.dumps(out, ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"wrote {path}: {len(out)} conversations, {sum(len(c['qa']) for c in out)} questions")


if __name__ == "__main__":
    main()
