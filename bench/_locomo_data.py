"""Read LoCoMo-format files: conversations as dated turns, questions with normalised evidence."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

TURN_STEP = timedelta(seconds=30)  # turns of one session are spaced this far apart, in order


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    time: datetime
    has_image: bool


@dataclass(frozen=True)
class Question:
    text: str
    evidence: frozenset[str]
    category: int


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    turns: list[Turn]
    questions: list[Question]

    @property
    def end(self) -> datetime:
        return max(t.time for t in self.turns)


def session_time(text: str) -> datetime:
    """'1:56 pm on 8 May, 2023' as a UTC datetime."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)


def _turns(conv: dict) -> list[Turn]:
    out: list[Turn] = []
    n = 1
    while f"session_{n}" in conv:
        start = session_time(conv[f"session_{n}_date_time"])
        for i, t in enumerate(conv[f"session_{n}"]):
            text = t["text"]
            if t.get("blip_caption"):
                text = f"{text} [image: {t['blip_caption']}]"
            out.append(Turn(t["dia_id"], t["speaker"], text, start + i * TURN_STEP,
                            bool(t.get("blip_caption"))))
        n += 1
    return out


_ID = re.compile(r"D:?(\d+):0*(\d+)")


def normalise_evidence(raw: list[str], known: set[str]) -> frozenset[str]:
    """Evidence ids split on ';', ',' and spaces, fixed ('D:11:26', 'D30:05'), unknown ones dropped."""
    out = set()
    for item in raw:
        for part in re.split(r"[;,\s]+", item):
            m = _ID.fullmatch(part.strip())
            if m and f"D{m[1]}:{m[2]}" in known:
                out.add(f"D{m[1]}:{m[2]}")
    return frozenset(out)


def load(path: str | Path) -> list[Conversation]:
    """Every conversation of a LoCoMo-format file."""
    convs = []
    for c in json.loads(Path(path).read_text(encoding="utf-8")):
        turns = _turns(c["conversation"])
        known = {t.dia_id for t in turns}
        qs = [Question(q["question"], normalise_evidence(q.get("evidence", []), known), int(q["category"]))
              for q in c["qa"]]
        convs.append(Conversation(c["sample_id"], turns, [q for q in qs if q.evidence]))
    return convs
