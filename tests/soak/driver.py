"""The soak driver: months of a bot's life in minutes.

The memory core and the scheduler's jobs (consolidation, fading, merging, the diary with the inner
state, the self-image) driven hour by hour over simulated days on a controllable clock, with a real
SQLite file and the real ``openai`` client talking to the fake OpenAI-compatible server, scripted to
answer each job with plausible JSON. Daily traffic comes from the MemoryBank companion chats in four
places (a group, two private chats, the owner's private chat); some days are silent; facts are
planted early and forgotten later. After each day the driver measures what should stay flat or grow
only with what was said (``Day``); ``tests/soak/test_soak.py`` asserts on them and ``bench/soak.py``
prints them per month.

Nothing sleeps in real time: every module's ``now_utc`` reads the simulated clock while it runs, and
the scheduler and the consolidator are given its clock.
"""

from __future__ import annotations

import gc
import json
import logging
import math
import os
import re
import sys
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from astrbot_plugin_engram.memory import SELF, Audience, Embedder, Engram, Episode
from astrbot_plugin_engram.memory.chat import OpenAIChat
from astrbot_plugin_engram.memory.clock import day_bounds, day_of
from astrbot_plugin_engram.memory.consolidation import ConsolidationSettings, Consolidator
from astrbot_plugin_engram.memory.recall import RecallSettings
from astrbot_plugin_engram.memory.self.day_end import DaySettings, end_days
from astrbot_plugin_engram.memory.self.diary import diary_of
from astrbot_plugin_engram.memory.self.self_image import write_self_image
from astrbot_plugin_engram.memory.store.sqlite.store import SQLiteStore
from astrbot_plugin_engram.scheduler import (
    CONSOLIDATE,
    FADE,
    MERGE,
    JobRegistry,
    NewEpisodeTrigger,
    Scheduler,
    consolidation_job,
    fade_job,
    merge_job,
)
from astrbot_plugin_engram.scheduler.self_jobs import DIARY, SELF_IMAGE, diary_job, self_image_job

from ..fake_openai import FakeOpenAI, batch_lines

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "memorybank"
PACKAGE = "astrbot_plugin_engram"
TZ = timezone(timedelta(hours=8))
START = datetime(2027, 1, 4, 0, 0, tzinfo=TZ)  # a Monday, local midnight

GROUP, ALICE, BOB, OWNER = "qq:group:100", "qq:private:201", "qq:private:202", "qq:private:900"
PLACES = (GROUP, ALICE, BOB, OWNER)
OWNER_ID = "qq:900"
# planted on day 0 in the owner's chat, asked at the end
EARLY_FACT = "By the way, my cat is called Mochi and she only eats salmon."
EARLY_QUESTION = "what is my cat called and what does she eat"
MOCHI_AGAIN = "Mochi turned three today, we had a little salmon cake for her."  # on SoakSettings.mochi_day
# said on day 3 in Bob's chat, forgotten (the line) on FORGET_LINE_DAY
SECRET_LINE = "My locker code at the gym is 4417-KESTREL, keep it safe."
SECRET_MARKS = ("4417-KESTREL",)
# a person in the group, forgotten on FORGET_PERSON_DAY
ZED, ZED_NAME = "qq:777", "Zedekiah Quorn"
ZED_LINES = ("I just moved to Brambleton and started at the harbour office.",
             "Zedekiah here again: the harbour office gave me the night shift.")
ZED_MARKS = ("Zedekiah", "Quorn", "Brambleton")


class SimClock:
    """The simulated time (aware, UTC inside)."""

    def __init__(self, start: datetime):
        self.now = start.astimezone(timezone.utc)

    def __call__(self) -> datetime:
        return self.now

    def ts(self) -> float:
        return self.now.timestamp()

    def advance(self, delta: timedelta) -> None:
        self.now += delta


def patch_now(clock: SimClock) -> Callable[[], None]:
    """Every loaded module of the package that imported ``now_utc`` reads ``clock`` instead; returns
    the undo."""
    from astrbot_plugin_engram.memory import model

    real = model.now_utc
    patched = []
    for name, module in list(sys.modules.items()):
        if name.startswith(PACKAGE) and getattr(module, "now_utc", None) is real:
            module.now_utc = clock  # type: ignore[attr-defined]
            patched.append(module)

    def undo() -> None:
        for module in patched:
            module.now_utc = real  # type: ignore[attr-defined]

    return undo


# ---- the traffic -------------------------------------------------------------------------------
@dataclass(frozen=True)
class User:
    uid: str
    name: str
    days: list[list[tuple[str, str]]]  # each day: (query, response) pairs


def load_users(langs: tuple[str, ...] = ("en", "cn")) -> list[User]:
    """The MemoryBank users (English, Chinese), each with their days of (query, response)."""
    users = []
    for lang in langs:
        raw = json.loads((DATA / f"memory_bank_{lang}.json").read_text("utf-8"))
        for i, (key, u) in enumerate(raw.items()):
            days = [[(p["query"], p["response"]) for p in pairs] for _, pairs in sorted(u["history"].items())]
            users.append(User(f"qq:{lang}{i}", str(u.get("name") or key), [d for d in days if d]))
    return users


def day_traffic(users: list[User], day: int, silent: bool, mochi_day: int = -1
                ) -> list[tuple[str, str, str, str]]:
    """(place, actor, name, text) of one day, in order; the bot's replies are actor ``self``."""
    if silent:
        return []
    out: list[tuple[str, str, str, str]] = []

    def pairs(u: User, k: int, place: str, who: str | None = None, name: str | None = None) -> None:
        for q, r in u.days[k % len(u.days)]:
            out.append((place, who or u.uid, name or u.name, q))
            out.append((place, SELF, "", r))

    n = len(users)
    # the group: three members a day, rotating; a private chat may be quiet on some days
    for j in range(3):
        u = users[(day * 3 + j) % n]
        pairs(u, day // 2 + j, GROUP)
    if day % 5 != 2:
        pairs(users[day % n], day, ALICE, "qq:201", "Alice")
    if day % 7 != 4:
        pairs(users[(day + 7) % n], day + 3, BOB, "qq:202", "Bob")
    if day % 3 != 1:
        pairs(users[(day + 11) % n], day + 5, OWNER, OWNER_ID, "Owner")
    if day == 0:
        out.append((OWNER, OWNER_ID, "Owner", EARLY_FACT))
        out.append((OWNER, SELF, "", "Mochi and salmon, noted!"))
    if day == mochi_day:
        out.append((OWNER, OWNER_ID, "Owner", MOCHI_AGAIN))
        out.append((OWNER, SELF, "", "Happy birthday, Mochi!"))
    if day == 3:
        out.append((BOB, "qq:202", "Bob", SECRET_LINE))
        out.append((BOB, SELF, "", "Got it, I'll keep that safe."))
    if day in (5, 9):
        out.append((GROUP, ZED, ZED_NAME, ZED_LINES[day == 9]))
        out.append((GROUP, SELF, "", "Welcome, Zedekiah Quorn!"))
    return out


# ---- the scripted model ------------------------------------------------------------------------
_MEMORY = re.compile(r"^m(\d+) \[[^\]]*\] (.*)$", re.M)
_DIARY_LINE = re.compile(r"^e\d+ \[[^\]]*\] [^:：]+[:：] (.*)$", re.M)


class Model:
    """Plausible JSON answers for every job, told apart by the key their prompt asks for."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.prompt_chars: dict[str, int] = {}  # the largest prompt of each kind since the last reset

    def __call__(self, body: dict[str, Any]) -> str:
        system = body["messages"][0]["content"]
        user = body["messages"][-1]["content"]
        kind = next(k for k in ("actions", "entry", "self_image", "mood", "same") if f'"{k}"' in system)
        self.calls[kind] += 1
        size = sum(len(m["content"]) for m in body["messages"])
        self.prompt_chars[kind] = max(self.prompt_chars.get(kind, 0), size)
        return getattr(self, f"_{kind}")(body, user)

    def _actions(self, body: dict[str, Any], user: str) -> str:
        lines = batch_lines(body)
        actions: list[dict[str, Any]] = []
        for k in range(0, len(lines), 6):
            chunk = [(i, who, text) for i, who, text in lines[k:k + 6] if not who.startswith(("you", "你"))]
            if chunk:  # what is about the cat first (the text is cut)
                chunk.sort(key=lambda line: "Mochi" not in line[2])
                actions.append({"op": "add", "text": " / ".join(t for _, _, t in chunk)[:240], "kind": "fact",
                                "about": [chunk[0][1]], "importance": 0.5, "scope": None,
                                "sources": [f"e{i}" for i, _, _ in chunk], "when": None})
        related = _MEMORY.findall(user)
        mochi = [(i, t) for i, _, t in lines if "Mochi" in t]
        known = [m for m, text in related if "Mochi" in text]
        if mochi and known:  # the owner's cat again: what is known of her is brought up to date
            actions.append({"op": "update", "id": f"m{known[0]}", "text": "The owner's cat Mochi eats only "
                            "salmon; she turned three.", "sources": [f"e{mochi[0][0]}"]})
        elif related and lines and self.calls["actions"] % 4 == 0:  # now and then a memory is updated
            actions.append({"op": "update", "id": f"m{related[0][0]}",
                            "text": f"(updated) {lines[0][2]}"[:240], "sources": [f"e{lines[0][0]}"]})
        return json.dumps({"actions": actions or [{"op": "none"}]}, ensure_ascii=False)

    def _entry(self, body: dict[str, Any], user: str) -> str:
        said = _DIARY_LINE.findall(user)
        return json.dumps({"entry": "Today I talked with a few people. " + " ".join(said[:4])[:800]},
                          ensure_ascii=False)

    def _self_image(self, body: dict[str, Any], user: str) -> str:
        return json.dumps({"self_image": "I am a patient, curious companion; I like long quiet talks and "
                           "I have grown calmer lately."})

    def _mood(self, body: dict[str, Any], user: str) -> str:
        return json.dumps({"mood": "content", "valence": 0.3, "energy": 0.6,
                           "on_mind": "the week's conversations"})

    def _same(self, body: dict[str, Any], user: str) -> str:
        return json.dumps({"same": False})


# ---- what is measured --------------------------------------------------------------------------
class LogCount(logging.Handler):
    """Log records of the package by (logger, message template), per simulated day."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.today: Counter[tuple[str, str]] = Counter()

    def emit(self, record: logging.LogRecord) -> None:
        self.today[(record.name, str(record.msg)[:80])] += 1


@dataclass
class Day:
    """One simulated day's measurements, taken at its end."""

    day: int
    said: int  # lines recorded that day
    lines: int  # episodes in the store
    text_bytes: int  # characters recorded so far (all days)
    file_bytes: int  # the store file
    wal_bytes: int  # its write-ahead log
    active: int
    archived: int
    superseded: int
    diaries: int
    backlog: int  # lines recorded but not consolidated yet, all places
    objects: int  # Python objects alive after a collection (-1: not counted that day)
    fds: int
    threads: int  # besides the event loop's default executor (``asyncio_N``, which grows to its cap)
    executor: int  # the default executor's threads
    log_lines: int
    top_log: tuple[str, int]  # the most repeated log message of the day
    rewritten: int  # diary days written again after a forget that day (each says so in the log)
    prompt_chars: int  # the largest consolidation prompt of the day
    job_runs: dict[str, int] = field(default_factory=dict)
    held: dict[str, int] = field(default_factory=dict)  # sizes of in-process dicts and caches
    rows: dict[str, int] = field(default_factory=dict)  # rows of the store's tables
    archived_early: list[int] = field(default_factory=list)  # archived before they could have faded


def fds() -> int:
    """Open files, after a collection: a connection let go of in a cycle is closed only by the collector
    (bounded, not a leak); counted before it, two months drifted by four now and then."""
    gc.collect()
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:  # not Linux
        return -1


# ---- the soak ----------------------------------------------------------------------------------
@dataclass
class SoakSettings:
    days: int = 180
    tick: timedelta = timedelta(hours=1)  # how often the timers are looked at
    forget_line_day: int = 40
    forget_person_day: int = 100
    strength_days: float = 30.0  # a memory's strength halves in this many days unrecalled (the default)
    restarts: tuple[int, ...] = ()  # days the bot is restarted on (a plugin reload, an update)
    down: tuple[int, ...] = ()  # days it is off: nothing heard, no job run; restarted the day after
    measure_objects: int = 1  # every this many days: Python objects alive (a full collection, slow)
    silent: Callable[[int], bool] = lambda day: day % 11 == 10 or 60 <= day < 63  # a quiet day, a trip
    touch_every: int = 20  # days between recalls of the early fact in the owner's chat,
    touch_until: int = 60  # until this day
    mochi_day: int = 70  # the owner speaks of the cat again: her memory is updated
    langs: tuple[str, ...] = ("en", "cn")  # the MemoryBank chats used ("cn": the leak check's
    # Chinese name tagger runs in a child process, a second or two a day on a loaded machine)


class Soak:
    """One bot's memory lived day by day; ``await run()``; ``days`` holds what was measured."""

    def __init__(self, folder: Path, embedder: Embedder, settings: SoakSettings | None = None,
                 on_day: Callable[[Day], None] | None = None):
        self.folder = folder
        self.embedder = embedder
        self.s = settings or SoakSettings()
        self.on_day = on_day
        self.clock = SimClock(START)
        self.model = Model()
        self.users = load_users(self.s.langs)
        self.days: list[Day] = []
        self.logs = LogCount()
        self.rewritten = 0
        self.text_bytes = 0
        self.early_ids: list[int] = []
        self.secret_ids: list[int] = []
        self.touched: set[int] = set()  # memories the early fact's recalls strengthened
        self.forgotten: list[str] = []  # marks that must be nowhere once forgotten
        self.diary_days: set[date] = set()  # days with lines, finished
        self.day_settings = DaySettings(tz=TZ, boundary_hour=4, is_public=lambda place: False)

    def recall_settings(self) -> RecallSettings:
        return RecallSettings(strength_days=self.s.strength_days)

    async def run(self) -> None:
        server = FakeOpenAI(replies=[])
        server.default_reply = self.model  # type: ignore[assignment]  # the server takes a callable too
        server.start()
        undo = patch_now(self.clock)
        logger = logging.getLogger("engram")
        logger.addHandler(self.logs)
        old_level = logger.level
        logger.setLevel(logging.INFO)
        self.chat = chat = OpenAIChat("soak-model", server.base_url)
        await self._open()
        try:
            for day in range(self.s.days):
                if day in self.s.restarts or (day - 1 in self.s.down and day not in self.s.down):
                    await self._close()
                    await self._open(start=True)
                await self._live(day, server, down=day in self.s.down)
            await self.scheduler.idle()
        finally:
            await self._close()
            await chat.close()
            logger.removeHandler(self.logs)
            logger.setLevel(old_level)
            undo()
            server.stop()

    async def _open(self, start: bool = False) -> None:
        """The bot starts: its memory opened, its jobs registered; ``start``: the scheduler started as
        the plugin starts it (missed runs caught up at once; its own timers never fire in a run)."""
        self.engram = e = await Engram.open(self.folder / "engram.db", self.embedder, background=True,
                                            settings=self.recall_settings())
        e.toucher.clock = self.clock.ts
        self.scheduler = self._scheduler(e, self.chat)
        if start:
            await self.scheduler.start()
            await self.scheduler.idle()

    async def _close(self) -> None:
        await self.scheduler.idle()
        await self.scheduler.shutdown()
        await self.engram.close()

    def _scheduler(self, e: Engram, chat: OpenAIChat) -> Scheduler:
        owner = Audience(OWNER, owner_private=True)

        async def consolidator() -> Consolidator:
            settings = ConsolidationSettings(public_spaces=(), min_new=20)
            return Consolidator(e, chat, settings, tz=TZ, clock=self.clock.ts,
                                audience_for=lambda place: owner if place == OWNER else Audience(place))

        async def engram() -> Engram:
            return e

        async def diary(**_: Any) -> Any:  # as plugin/self_jobs.SelfJobs.end_days
            report = await end_days(e, chat, self.day_settings, folder=self.folder, now=self.clock())
            if report.written:
                self.scheduler.trigger(SELF_IMAGE)
            return report

        async def self_image(**_: Any) -> Any:
            return await write_self_image(e, chat, folder=self.folder, now=self.clock())

        registry = JobRegistry()
        registry.add(consolidation_job(consolidator, 60))
        registry.add(fade_job(engram))
        registry.add(merge_job(engram, lambda: chat))
        registry.add(diary_job(diary))
        registry.add(self_image_job(self_image))

        async def records() -> Any:
            return e.job_records()

        sched = Scheduler(registry, records, key=f"soak:{self.folder}", clock=self.clock.ts)
        self.trigger = NewEpisodeTrigger(20, lambda: sched.trigger(CONSOLIDATE))
        return sched

    async def _due_jobs(self) -> None:
        """What the interval timers would start now (each job whose interval passed since its last start)."""
        status = await self.scheduler.status()
        now = self.clock.ts()
        for job in self.scheduler.registry:
            last = status.get(job.name, {}).get("last_started")
            if job.every is not None and (last is None or now - last >= job.every.total_seconds() - 1):
                self.scheduler.trigger(job.name)
        await self.scheduler.idle()

    async def _live(self, day: int, server: FakeOpenAI, down: bool = False) -> None:
        e = self.engram
        self.logs.today.clear()
        self.rewritten = 0
        self.model.prompt_chars.clear()
        if down:
            self.clock.advance(timedelta(days=1))
            await self._measure(day, 0)
            return
        traffic = day_traffic(self.users, day, self.s.silent(day), self.s.mochi_day)
        start = self.clock.now
        # the day's lines spread from 9:00 to 21:00 local, the timers looked at every tick
        spacing = timedelta(hours=12) / max(1, len(traffic))
        t = start + timedelta(hours=9)
        next_line = 0
        end = start + timedelta(days=1)
        while self.clock.now < end:
            last_tick = self.clock.now + self.s.tick >= end  # what is left of the day is said now
            while next_line < len(traffic) and (t <= self.clock.now or last_tick):
                place, actor, name, text = traffic[next_line]
                if text == MOCHI_AGAIN:  # the owner's /mem consolidate: what came before is done
                    await self.scheduler.run_now(CONSOLIDATE, places=[OWNER], force=True)
                ids = await e.record_many([Episode(
                    place=place, content=text, actor=actor, actor_name=name,
                    kind="message_out" if actor == SELF else "message_in", time=t)])
                self.text_bytes += len(text.encode())
                self._note(day, text, ids)
                self.trigger.saw(place)
                next_line += 1
                t += spacing
            await self.scheduler.idle()
            await self._due_jobs()
            self.clock.advance(self.s.tick)
        if day == self.s.mochi_day:  # ... and the news about the cat, on its own
            await self.scheduler.run_now(CONSOLIDATE, places=[OWNER], force=True)
        await self._events(day)
        await e.toucher.flush()
        await e.embed_pending()
        server.requests.clear()  # the fake server keeps every request: not the bot's memory
        await self._measure(day, len(traffic))

    def _note(self, day: int, text: str, ids: list[int]) -> None:
        if text == EARLY_FACT:
            self.early_ids += ids
        if text == SECRET_LINE:
            self.secret_ids += ids

    async def _events(self, day: int) -> None:
        """The owner's doings: recalling the early fact now and then, forgetting a line, a person."""
        e = self.engram
        # recalled for a reply, as the plugin does with what it injects
        if day and day % self.s.touch_every == 0 and day <= self.s.touch_until:
            hits = await e.recall(EARLY_QUESTION, Audience(OWNER, owner_private=True), k=8, now=self.clock())
            e.touch(h.key for h in hits)
            self.touched |= {h.id for h in hits if h.kind == "memory"}
        if day == self.s.forget_line_day and self.secret_ids:
            plan = await e.forget_episodes(self.secret_ids)
            await self._after_forget(plan)
            self.forgotten += SECRET_MARKS
        if day == self.s.forget_person_day:
            plan = await e.forget_person(ZED)
            await self._after_forget(plan)
            self.forgotten += ZED_MARKS

    async def _after_forget(self, plan: Any) -> None:
        """As plugin/self_jobs.SelfJobs.rewrite_after_forget: the diaries and self-image written again."""
        if plan.diary_days:
            self.rewritten += len(plan.diary_days)
            await end_days(self.engram, self.chat, self.day_settings, folder=self.folder,
                           now=self.clock(), days=list(plan.diary_days))
        if plan.self_image:
            await write_self_image(self.engram, self.chat, folder=self.folder, now=self.clock())

    def _sql(self) -> Any:
        """The SQLite store's read connection: the soak counts rows the store's reads do not give."""
        assert isinstance(self.engram.store, SQLiteStore)
        return self.engram.store._reader

    async def _archived_early(self) -> list[int]:
        """Archived memories made or recalled less than log2(1 / threshold) half-lives ago: a memory
        at full strength then could not have faded below the threshold yet."""
        e = self.engram
        lives = math.log2(1 / e.metabolism.archive_below) * self.s.strength_days * 86400 - 86400
        rows = await self._sql().execute_fetchall(
            "SELECT id, max(coalesce(last_recalled, 0), created_at) FROM memories WHERE status = 'archived'")
        return [i for i, since in rows if self.clock.ts() - since < lives]

    async def _measure(self, day: int, said: int) -> None:
        e = self.engram
        counts = await e.counts()
        cursors = await e.store.cursors("consolidate:")
        backlog = 0
        for _place, n, *_ in await e.store.episode_backlog(
                {k[len("consolidate:"):]: v for k, v in cursors.items()}):
            backlog += n
        finished = day_of(self.clock(), TZ, 4) - timedelta(days=1)
        diaries = len(await e.store.memory_ids_of_kind("diary"))
        status = await self.scheduler.status()
        objects = -1
        if day % self.s.measure_objects == 0 or day == self.s.days - 1:
            gc.collect()  # less the driver's own records of the days before
            objects = len(gc.get_objects()) - sum(1 + sum(gc.is_tracked(v) for v in vars(d).values())
                                                  for d in self.days)
        path = self.folder / "engram.db"
        wal = path.with_name(path.name + "-wal")
        size = path.stat().st_size
        wal_size = wal.stat().st_size if wal.exists() else 0
        top = self.logs.today.most_common(1)
        early = await self._archived_early()
        rows = {}
        for table in ("sources", "cursors", "vectors", "kept_apart", "job_runs", "talk_pairs", "episode_days",
                      "aliases", "memories_fts", "episodes_fts", "talk_pairs_later", "speaker_counts_later"):
            rows[table] = (await self._sql().execute_fetchall(f"SELECT count(*) FROM {table}"))[0][0]
        m = Day(day=day, said=said, lines=counts["episodes"], text_bytes=self.text_bytes,
                file_bytes=size, wal_bytes=wal_size,
                active=counts["memories"], archived=counts["archived"], superseded=counts["superseded"],
                diaries=diaries, backlog=backlog, objects=objects, fds=fds(),
                threads=sum(1 for t in threading.enumerate() if not t.name.startswith("asyncio_")),
                executor=sum(1 for t in threading.enumerate() if t.name.startswith("asyncio_")),
                log_lines=sum(self.logs.today.values()),
                top_log=(" ".join(top[0][0]), top[0][1]) if top else ("", 0), rewritten=self.rewritten,
                prompt_chars=self.model.prompt_chars.get("actions", 0),
                job_runs={k: v.get("runs", 0) for k, v in status.items()},
                held=held(self), rows=rows, archived_early=early)
        m.held["finished_day"] = finished.toordinal()
        self.days.append(m)
        if self.on_day:
            self.on_day(m)


def held(soak: Soak) -> dict[str, int]:
    """Sizes of what the process holds between runs: dicts keyed by place, day or person, caches."""
    from astrbot_plugin_engram.memory.self import inner_state
    from astrbot_plugin_engram.memory.text import words as text
    from astrbot_plugin_engram.scheduler import runner

    e, sched = soak.engram, soak.scheduler
    out = {"touch_pending": len(e.toucher._pending), "sched_status": len(sched._status),
           "sched_locks": len(sched._locks), "sched_tasks": len(sched._tasks), "live": len(runner.LIVE),
           "trigger": len(soak.trigger._new), "inner_reported": len(inner_state._reported),
           "word_set": text.word_set.cache_info().currsize, "after_forget": len(e.after_forget)}
    return out


# ---- the checks at the end ---------------------------------------------------------------------
async def problems(soak: Soak) -> list[str]:
    """What drifted, in words (empty: nothing). Run after ``run()``; opens the store again."""
    out: list[str] = []
    days = soak.days
    out += _flat(days)
    out += await _forgotten_nowhere(soak)
    if not soak.touched and min(soak.s.touch_until, len(days) - 1) >= soak.s.touch_every:
        out.append("the early fact's recall touched no memory")
    e = await Engram.open(soak.folder / "engram.db", soak.embedder, background=False,
                          settings=soak.recall_settings())
    undo = patch_now(soak.clock)
    try:
        out += await _diaries(soak, e)
        out += await _self_image(soak, e)
        out += await _early_fact(soak, e)
        out += await _fading(soak, e)
    finally:
        undo()
        await e.close()
    return out


def _flat(days: list[Day]) -> list[str]:
    out = []
    settled = days[min(7, len(days) - 1):]
    first, last = settled[0], days[-1]
    third = max(1, len(settled) // 3)
    for name, slack in (("fds", 3), ("threads", 1)):  # a connection more or less in the client's pool
        before = [getattr(d, name) for d in settled[:third]]
        after = [getattr(d, name) for d in settled[-third:]]
        # the floor of the last third against the ceiling of the first: a leak raises the floor; a
        # connection of a job still under way when a loaded day is measured is one day's peak
        if min(after) > max(before) + slack:
            out.append(f"{name} grew: at most {max(before)} in the first third, at least {min(after)} "
                       "in the last")
    if max(d.executor for d in days) > min(32, (os.cpu_count() or 1) + 4):  # ThreadPoolExecutor's cap
        out.append(f"the default executor has {max(d.executor for d in days)} threads")
    counted = [d for d in settled if d.objects >= 0]
    if counted[-1].objects > counted[0].objects * 1.05 + 2000:
        out.append(f"objects alive grew: {counted[0].objects} on day {counted[0].day} -> "
                   f"{counted[-1].objects}")
    for key, value in last.held.items():
        if key != "finished_day" and value > max(first.held.get(key, 0), 8):
            out.append(f"{key} held {value} (day {first.day}: {first.held.get(key, 0)})")
    for d in days:
        if d.archived_early:
            out.append(f"day {d.day}: archived before they could have faded: {d.archived_early}")
        if d.log_lines > 20 + d.rewritten or d.top_log[1] > 4 + d.rewritten:
            out.append(f"day {d.day}: {d.log_lines} log lines, {d.top_log[1]}x {d.top_log[0]!r}")
        if d.backlog > 120:
            out.append(f"day {d.day}: {d.backlog} lines not consolidated")
    month = [d.prompt_chars for d in days[:30]]
    if max(d.prompt_chars for d in days) > 1.6 * max(month):
        out.append(f"consolidation prompts grew: {max(month)} chars in the first month, "
                   f"{max(d.prompt_chars for d in days)} at most")
    grew = (last.file_bytes - first.file_bytes) / max(1, last.text_bytes - first.text_bytes)
    early = first.file_bytes / max(1, first.text_bytes)
    if grew > 2 * early:
        out.append(f"the file grew {grew:.1f} bytes per byte said after day {first.day} "
                   f"({early:.1f} before)")
    for table, n in last.rows.items():
        per_line = n / max(1, last.lines)
        was = first.rows.get(table, 0) / max(1, first.lines)
        if table not in ("cursors", "episode_days") and per_line > 2 * was + 1:
            out.append(f"{table}: {n} rows for {last.lines} lines ({was:.1f} a line on day {first.day})")
    return out


async def _forgotten_nowhere(soak: Soak) -> list[str]:
    out = []
    files = [p for p in soak.folder.rglob("*") if p.is_file()]
    for mark in soak.forgotten:
        for p in files:
            if mark.encode() in p.read_bytes():
                out.append(f"forgotten {mark!r} still in {p.relative_to(soak.folder)}")
    return out


async def _diaries(soak: Soak, e: Engram) -> list[str]:
    out = []
    said_days = {START.date() + timedelta(days=d.day) for d in soak.days if d.said}
    finished = day_of(soak.clock(), TZ, 4)
    wanted = {d for d in said_days if d < finished}
    ids = await e.store.memory_ids_of_kind("diary")
    found = await e.memories(ids)
    by_day: Counter[date] = Counter()
    for m in found.values():
        assert m.valid_from is not None
        by_day[day_of(m.valid_from, TZ, 4)] += 1
        if m.valid_from != day_bounds(day_of(m.valid_from, TZ, 4), TZ, 4)[0]:
            out.append(f"diary m{m.id} starts at {m.valid_from}, not at its day's start")
    if set(by_day) != wanted:
        out.append(f"diaries of {len(by_day)} days, {len(wanted)} days had lines; missing "
                   f"{sorted(wanted - set(by_day))[:5]}, extra {sorted(set(by_day) - wanted)[:5]}")
    out += [f"{n} diaries of {d}" for d, n in by_day.items() if n > 1]
    on_file = {p.stem for p in (soak.folder / "diary").glob("*.md")}
    if on_file != {d.isoformat() for d in wanted}:
        out.append(f"diary files: {len(on_file)} for {len(wanted)} days")
    for d in sorted(wanted)[:3] + sorted(wanted)[-3:]:
        if await diary_of(e, d, TZ, 4) is None:
            out.append(f"no diary found for {d}")
    status = await e.store.job_runs()
    for name, record in status.items():
        if record.get("failures") or record.get("status") != "ok":
            out.append(f"job {name}: {record.get('status')}, {record.get('failures')} failures "
                       f"({record.get('error')})")
    n = len(soak.days) - len(soak.s.down)  # the days the bot was up
    if status.get(FADE, {}).get("runs") != n:
        out.append(f"fade ran {status.get(FADE, {}).get('runs')} times in {n} days up")
    merges = status.get(MERGE, {}).get("runs", 0)
    if not n // 7 <= merges <= (n + 6) // 7 + len(soak.s.down) // 7 + 1:  # again on waking after a week off
        out.append(f"merge ran {merges} times in {n} days up")
    refused = status.get(SELF_IMAGE, {}).get("totals", {}).get("refused", 0)
    if refused:  # the scripted self-image names no one: a refusal is the leak check's false alarm
        out.append(f"{refused} self-images refused")
    if status.get(DIARY, {}).get("stats", {}).get("failed.diary"):
        out.append("the last diary run failed")
    return out


async def _self_image(soak: Soak, e: Engram) -> list[str]:
    """Its history bounded (the last 30 days' versions, then one a month) and only its current
    version citing lines (each line was cited by seven versions besides its diary)."""
    out = []
    history = list((soak.folder / "identity" / "history").glob("self-image.*.md"))
    if len(history) > 30 + len(soak.days) // 28 + 2:
        out.append(f"{len(history)} earlier self-images kept after {len(soak.days)} days")
    ids = await e.store.memory_ids_of_kind("reflection")
    if ids:
        earlier = [i for i in await e.store.all_versions(ids) if i not in ids]
        cited = await e.store.source_ids(earlier)
        if cited:
            out.append(f"{len(cited)} source rows of {len(earlier)} earlier self-images")
    return out


async def _early_fact(soak: Soak, e: Engram) -> list[str]:
    hits = await e.recall(EARLY_QUESTION, Audience(OWNER, owner_private=True), k=5, now=soak.clock())
    if not any("Mochi" in h.text for h in hits):
        return [f"the early fact is not recalled at the end: {[h.text[:60] for h in hits]}"]
    return []


async def _fading(soak: Soak, e: Engram) -> list[str]:
    """Every active memory that may fade is at least at the threshold; those recalled on the way
    (the early fact's) are active."""
    from astrbot_plugin_engram.memory.metabolism.fading import NEVER_ARCHIVED
    from astrbot_plugin_engram.memory.strength import faded

    out = []
    now, days = soak.clock.ts(), e.settings.strength_days
    rows = await e.store.strength_rows(0, 10**6)
    active = {r[0] for r in rows}
    last = await e.memories(sorted(soak.touched))
    gone = [i for i, m in last.items() if m.status != "superseded" and i not in active
            and m.last_recalled is not None
            and soak.clock.ts() - m.last_recalled.timestamp() < soak.s.strength_days * 86400]
    if gone:
        out.append(f"memories recalled within a half-life were archived: {gone}")
    weak = [r for r in rows if r[4] not in NEVER_ARCHIVED and r[3] < e.metabolism.protected_importance
            and float(faded(r[1], r[2], now, days)) < e.metabolism.archive_below * 0.5]
    if weak:
        out.append(f"{len(weak)} active memories faded far below the threshold (fade missed them)")
    return out
