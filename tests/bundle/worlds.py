"""Stores to export: built through the real API (recording, memories, new versions, scope moves,
merges, forgets, pairs kept apart, cursors, job runs, documents), from a list of steps hypothesis
generates or a fixed one."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from hypothesis import strategies as st

from astrbot_plugin_engram.memory import Engram, Episode, Memory
from astrbot_plugin_engram.memory.errors import EngramError

PLACES = ["qq:group:1", "qq:group:2", "qq:private:7", "web", "奇怪 的:地方/../x"]
PEOPLE = [("qq:1", "Ann"), ("qq:2", "Bob"), ("qq:3", "小明"), ("", "")]
WORDS = ["tea", "coffee", "birthday", "猫", "咖啡", "Lumen", "peanut", "salary", "hike", "emoji 🐱"]
SCOPES = ["public", "self", "owner", "space:qq:group:1", "space:qq:group:2", "space:qq:private:7"]
START = datetime(2026, 1, 30, 22, 0, tzinfo=timezone(timedelta(hours=8)))


@dataclass(frozen=True)
class Step:
    op: str  # line, memory, update, scope, merge, forget_memory, forget_line, apart, cursor, job
    place: int = 0
    person: int = 0
    words: tuple[str, ...] = ()
    scope: int = 0
    pick: int = 0  # which earlier item (modulo how many there are)
    hours: int = 1  # time since the step before (a line)


steps = st.lists(st.builds(
    Step,
    op=st.sampled_from(["line"] * 6 + ["memory"] * 3 + ["update", "scope", "merge", "forget_memory",
                                                        "forget_line", "apart", "cursor", "job"]),
    place=st.integers(0, len(PLACES) - 1), person=st.integers(0, len(PEOPLE) - 1),
    words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(tuple),
    scope=st.integers(0, len(SCOPES) - 1), pick=st.integers(0, 1000), hours=st.integers(0, 24 * 40)),
    min_size=10, max_size=45)


async def build(e: Engram, plan: list[Step]) -> None:
    """Apply ``plan`` to ``e`` (a step that cannot apply, e.g. an update of nothing, is skipped)."""
    t = START
    lines: list[int] = []
    for n, s in enumerate(plan):
        text = " ".join(s.words) + f" #{n}"
        active = [m.id for m in (await e.list_memories(None, limit=1000))[0] if m.id is not None]
        try:
            if s.op == "line":
                t += timedelta(hours=s.hours, microseconds=n * 37)
                actor, name = PEOPLE[s.person]
                meta = {"image": "x.png"} if s.pick % 7 == 0 else {}
                lines += await e.record_many([Episode(
                    place=PLACES[s.place], content=text, actor=actor, actor_name=name, time=t, meta=meta,
                    kind="message_out" if s.pick % 5 == 0 else "message_in", source="test",
                    place_title=f"Group {s.place}" if s.pick % 3 == 0 else "")])
            elif s.op == "memory":
                cited = tuple(sorted({lines[s.pick % len(lines)]})) if lines and s.pick % 2 else ()
                await e.add_memory(Memory(text=text, scope=SCOPES[s.scope], kind="fact", sources=cited,
                                          subjects=("qq:1",) if s.pick % 4 == 0 else (),
                                          importance=round(s.pick / 1000, 3), valid_from=t))
            elif s.op == "update" and active:
                await e.update(active[s.pick % len(active)], text)
            elif s.op == "scope" and active:
                await e.set_scope(active[s.pick % len(active)], SCOPES[s.scope])
            elif s.op == "merge" and len(active) >= 2:
                a = active[s.pick % len(active)]
                got = await e.memories([a])
                same = [m.id for m in (await e.list_memories(None, scope=got[a].scope, limit=1000))[0]
                        if m.id is not None]
                if len(same) >= 2:
                    await e.merge(Memory(text=text, scope=got[a].scope), same[:2])
            elif s.op == "forget_memory" and active:
                await e.forget([active[s.pick % len(active)]])
            elif s.op == "forget_line" and lines:
                gone = lines.pop(s.pick % len(lines))
                await e.forget_episodes([gone])
            elif s.op == "apart" and len(active) >= 2:
                async with e.store.transaction() as tx:
                    await tx.keep_apart([active[s.pick % len(active)], active[(s.pick + 1) % len(active)]])
            elif s.op == "cursor":
                async with e.store.transaction() as tx:
                    await tx.set_cursor(f"consolidate:{PLACES[s.place]}", s.pick)
            elif s.op == "job":
                await e.store.save_job_run(f"job{s.scope}", {"status": "ok", "n": s.pick, "note": text})
        except EngramError:
            pass  # e.g. an episode forgotten that an active memory needed: the forget reached it


def write_documents(folder: Path) -> None:
    """The bot's documents beside its store, as the self package writes them."""
    (folder / "identity" / "history").mkdir(parents=True, exist_ok=True)
    (folder / "diary").mkdir(exist_ok=True)
    (folder / "identity" / "self.md").write_text("# 我是 Lumen\nA quiet bot.\n", "utf-8")
    (folder / "identity" / "self-image.md").write_text("I like mornings.\n", "utf-8")
    (folder / "identity" / "history" / "self-image.20260101T000000000000Z.md").write_text("old\n", "utf-8")
    (folder / "identity" / "inner-state.json").write_text('{"mood": "calm"}\n', "utf-8")
    (folder / "identity" / "proposals.json").write_text('{"next_id": 1, "items": []}\n', "utf-8")
    (folder / "identity" / ".proposals.json.lock").write_text("", "utf-8")
    (folder / "diary" / "2026-01-31.md").write_text("今天很安静。\n", "utf-8")
    (folder / "diary" / ".days.json").write_text('{"tz": "Asia/Shanghai", "boundary_hour": 4}\n', "utf-8")
