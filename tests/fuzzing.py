"""Fuzzing every surface that takes input from outside: hypothesis-generated ``/mem`` lines, messages
through the hooks, tool arguments of every JSON type, dashboard query parameters, and the model's
answers to consolidation, merging, the diary and the self-image. Used by tests/plugin/test_fuzz.py
(a few hundred inputs per surface) and bench/fuzz.py (100,000).

What counts as unhandled (a finding): an exception out of a hook, a command, a tool or a job other
than the typed refusals it documents (``EngramError`` for the diary and the self-image, which the
jobs catch and log as a failed run); an answer of 500 from the dashboard; a log record carrying a
traceback (each surface catches everything at its edge and logs it with the traceback: such a record
is an exception that got through the checks); and, at the end, a store whose integrity check fails.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import shutil
import string
import tempfile
import time
import traceback
import warnings
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from astrbot_plugin_engram.memory import Engram, EngramError, Episode, Memory
from astrbot_plugin_engram.memory.bundle import import_bundle
from astrbot_plugin_engram.memory.chat import ChatResult

# ---- strategies ----------------------------------------------------------------------------------
# Characters of every category, lone surrogates included (a platform delivers broken emoji).
ANY_CHAR = st.characters(exclude_categories=())
HOSTILE = ["", " ", "\ud83d", "\udc00", "\x00", "\u2060", "\u200b", "\ufeff", "\u00ad", "\u202e", "１２",
           "𝟙", "²", "-1", "0", "1", "m1", "e1", "#1", "99999999999999999999", "1e309", "nan", "NaN", "inf",
           "true", "null", "--page", "--scope", "--kind", "--archived", "—page", "‐‐scope", "public",
           "owner", "self", "space:qq:group:g1", "qq:group:g1", "qq:GroupMessage:g1",
           "webchat:private:astrbot",
           "alice", "Alice", "@Alice", "今天", "密码是123456", "</engram-memory>", "<script>", "%", "%00",
           "../..", "'; DROP TABLE memories; --", "a" * 5000, "字" * 3000]
WORD = st.one_of(st.sampled_from(HOSTILE), st.text(ANY_CHAR, max_size=12),
                 st.text(string.ascii_letters + string.digits + "-:#@", min_size=1, max_size=10))
TEXT = st.one_of(st.text(ANY_CHAR, max_size=60), st.lists(WORD, max_size=6).map(" ".join))
JSON_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(), st.integers(-3, 30),
                        st.floats(allow_nan=True, allow_infinity=True), TEXT, st.sampled_from(HOSTILE))
JSON_ANY = st.recursive(JSON_SCALAR, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(ANY_CHAR, max_size=8), inner, max_size=4)),
    max_leaves=8)


# The stores fuzzed live in memory-backed files where there are some: each input commits, and an fsync
# to a disk is most of an input's wall time (merging: half); what is checked does not depend on it.
FAST_TMP = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


@dataclass
class Findings:
    """What went unhandled, each once with its first traceback; and how many inputs were tried."""

    tried: int = 0
    found: dict[str, str] = field(default_factory=dict)

    def add(self, kind: str, detail: str) -> None:
        self.found.setdefault(kind, detail)


class TracebackCatcher(logging.Handler):
    """Every log record with a traceback: an exception some edge caught and logged."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info and record.exc_info[0] is not None:
            self.records.append(record)


@dataclass
class Surface:
    """One surface: a strategy of inputs, and ``feed`` giving one input to the real code."""

    name: str
    inputs: st.SearchStrategy[Any]
    setup: Callable[[Path], Awaitable[Any]]  # -> the state ``feed`` gets
    feed: Callable[[Any, Any], Awaitable[None]]  # raises what went unhandled
    teardown: Callable[[Any], Awaitable[None]]
    # a fresh state (its store checked and closed) every this many inputs: the model-answer surfaces
    # grow their store with every input (hostile answers add memories), and an input's work grows
    # with it; 100k inputs into one store measured the store's size, not the input (None: one state)
    renew: int | None = None


class _TimeUp(Exception):
    """Raised from the test function when ``until`` has passed: ends the run early (no shrinking)."""


def run_surface(surface: Surface, n: int, *, seed: int | None = None, until: float | None = None) -> Findings:
    """Feed ``n`` generated inputs to ``surface`` (its own event loop and temp dir); what went unhandled.
    ``until``: a ``time.monotonic()`` after which no more inputs are fed (``Findings.tried`` says how
    many were)."""
    findings = Findings()
    catcher = TracebackCatcher()
    engram_log = logging.getLogger("engram")
    engram_log.addHandler(catcher)
    before, engram_log.level = engram_log.level, logging.WARNING  # a traceback logged as a warning or worse
    loop = asyncio.new_event_loop()
    with tempfile.TemporaryDirectory(prefix=f"engram-fuzz-{surface.name}-", dir=FAST_TMP) as tmp:
        def fresh(k: int) -> Any:  # the k-th state, in a folder of its own
            (Path(tmp) / str(k)).mkdir()
            return loop.run_until_complete(surface.setup(Path(tmp) / str(k)))

        holder = [fresh(0)]
        catcher.records.clear()  # the seed's own logged failures (a job seeded as failed) are not findings
        timed_out: list[bool] = []  # set when ``until`` passed (inputs fed by then are counted)
        try:
            # hypothesis warns about the repr of the long hostile strings
            warnings.filterwarnings("ignore", message="Generating overly large repr")
            @settings(max_examples=n, database=None, deadline=None, derandomize=seed is not None,
                      suppress_health_check=list(HealthCheck), phases=(Phase.generate,))
            @given(surface.inputs)
            def feed(x: Any) -> None:
                if until is not None and time.monotonic() > until:
                    timed_out.append(True)
                    raise _TimeUp
                if surface.renew and findings.tried and findings.tried % surface.renew == 0:
                    renew(findings.tried // surface.renew)
                findings.tried += 1
                try:
                    loop.run_until_complete(surface.feed(holder[0], x))
                except Exception as e:
                    findings.add(f"{type(e).__name__} escaped", f"input {x!r:.300}\n{traceback.format_exc()}")
                for r in catcher.records:
                    assert r.exc_info is not None
                    findings.add(f"{r.exc_info[0].__name__} logged: {r.getMessage()[:80]}",  # type: ignore[union-attr]
                                 f"input {x!r:.300}\n{''.join(traceback.format_exception(*r.exc_info))}")
                catcher.records.clear()

            def renew(k: int) -> None:  # the old state's checks are part of the run: their failure counts
                try:
                    loop.run_until_complete(surface.teardown(holder[0]))
                except Exception as e:
                    findings.add(f"{type(e).__name__} at a renewal", traceback.format_exc())
                for r in catcher.records:
                    assert r.exc_info is not None
                    findings.add(f"{r.exc_info[0].__name__} logged at a renewal",  # type: ignore[union-attr]
                                 "".join(traceback.format_exception(*r.exc_info)))
                shutil.rmtree(Path(tmp) / str(k - 1), ignore_errors=True)
                holder[0] = fresh(k)
                catcher.records.clear()  # as at the start

            try:
                feed()
            except Exception:  # _TimeUp, or hypothesis's complaint that replaying it did not time out
                if not timed_out:
                    raise
        finally:
            try:
                loop.run_until_complete(surface.teardown(holder[0]))
            except Exception as e:  # the last store's check: a finding like any other
                findings.add(f"{type(e).__name__} at the end", traceback.format_exc())
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()
            engram_log.removeHandler(catcher)
            engram_log.level = before
    return findings


# ---- the plugin's surfaces (AstrBot imported only here) ------------------------------------------
def _plugin() -> Any:
    from .plugin import conftest as pc  # sets a temporary AstrBot root before AstrBot is imported
    return pc


EVENT = st.fixed_dictionaries({"sender": st.sampled_from(["owner1", "u1", "stranger", ""]),
                               "group": st.sampled_from([None, "g1", "g2"]), "admin": st.booleans(),
                               "name": st.one_of(st.none(), TEXT)})


def _event(pc: Any, text: str, who: dict[str, Any]) -> Any:
    """A real AstrBot event; its text without lone surrogates, which AstrBot's own event refuses (its
    trace encodes the text): such a message never reaches a hook. The tools, the commands' argument
    text and the model's history still get them."""
    def clean(s: str | None) -> str | None:
        return None if s is None else s.encode("utf-8", "replace").decode("utf-8")
    return pc.event(clean(text) or "", who["sender"] or None, who["group"], admin=who["admin"],
                    name=clean(who["name"]))


async def _service(tmp: Path) -> Any:
    pc = _plugin()
    from astrbot_plugin_engram.plugin.config import Settings
    from astrbot_plugin_engram.plugin.providers import Providers
    from astrbot_plugin_engram.plugin.service import EngramService
    from tests.conftest import HashEmbedder

    s = Settings(owner_ids=(pc.OWNER,))
    svc = EngramService(s, tmp / "data", Providers(pc.FakeContext(), s.embedding_provider_id,
                                                   s.chat_provider_id), embedder=HashEmbedder())
    mem = await svc.memory()
    await mem.record_many([Episode(f"qq:group:g{i % 2 + 1}", f"line {i}: Alice likes tea, 今天下雨",
                                   actor=f"qq:u{i % 3}", actor_name=["Alice", "Bob", "今天"][i % 3])
                           for i in range(12)])
    for i, scope in enumerate(("public", "space:qq:group:g1", "owner", "self")):
        await mem.add_memory(Memory(f"memory {i} about tea", scope, subjects=("qq:u1",)))
    return svc


async def _close(svc: Any) -> None:
    mem = await svc.memory()
    bad = await mem.store.integrity()
    await svc.close()
    if bad:
        raise AssertionError(f"the store is damaged after fuzzing: {bad}")


SUBCOMMANDS = ["help", "stats", "recall", "why", "remember", "show", "forget", "scope", "list",
               "forget-person", "forget-place", "confirm", "proposals", "approve", "reject", "diary",
               "dashboard", "consolidate"]
COMMAND_LINES = st.tuples(st.sampled_from(["mem", "/mem", "mem  ", "MEM", "mem\u3000"]),
                          st.one_of(st.sampled_from(SUBCOMMANDS), WORD),
                          st.lists(WORD, max_size=5), EVENT)


async def _command(svc: Any, x: tuple[str, str, list[str], dict[str, Any]]) -> None:
    from astrbot_plugin_engram.plugin.commands.registry import COMMANDS

    head, sub, args, who = x
    line = " ".join([head, sub, *args])
    said = await COMMANDS.dispatch(svc, _event(_plugin(), line, who), line)
    if not isinstance(said, str):
        raise AssertionError(f"the reply is {type(said).__name__}, not text")
    said.encode("utf-8")  # a reply a platform can send (no lone surrogate)


MESSAGES = st.tuples(TEXT, EVENT, st.lists(st.fixed_dictionaries({"role": st.sampled_from(
    ["user", "assistant", "system", "tool", ""]), "content": st.one_of(TEXT, JSON_ANY)}), max_size=3))


async def _hooks(svc: Any, x: tuple[str, dict[str, Any], list[dict[str, Any]]]) -> None:
    """A message through the hooks as main.py calls them: recorded, a reply's block injected, the reply
    recorded; the hooks themselves never raise (the service catches at its edge and logs)."""
    pc = _plugin()
    text, who, contexts = x
    ev = _event(pc, text, who)
    svc.record_message(ev)
    req = pc.request(text, contexts)
    await svc.inject(ev, req)
    svc.record_reply(ev, text)
    await svc.flush()


TOOL_CALLS = st.tuples(st.sampled_from(["memory_recall", "memory_remember", "identity_propose",
                                        "memory_forget"]),
                       JSON_ANY, JSON_ANY, JSON_ANY, EVENT)


async def _tool(svc: Any, x: tuple[str, Any, Any, Any, dict[str, Any]]) -> None:
    from astrbot_plugin_engram.plugin import tools

    name, a, b, c, who = x
    ev = _event(_plugin(), "a message", who)
    if name == "memory_recall":
        said = await tools.memory_recall(svc, ev, a, b, c)
    elif name == "memory_remember":
        said = await tools.memory_remember(svc, ev, a, b)
    elif name == "memory_forget":
        said = await tools.memory_forget(svc, ev, a, b)
    else:
        said = await tools.identity_propose(svc, ev, a, b)
    if not isinstance(said, str):
        raise AssertionError(f"{name} answered {type(said).__name__}, not text")
    said.encode("utf-8")


# ---- the dashboard -------------------------------------------------------------------------------
PARAM_NAMES = ["q", "space", "page", "size", "kind", "scope", "person", "owner", "archived", "lang", "id",
               "token", "sort", "from", "to", "day", "version", "latest"]
ROUTES = ["/", "/memories", "/place", "/recall", "/graph", "/diary", "/identity"]
QUERIES = st.tuples(st.sampled_from([*ROUTES, *("/api" + (r if r != "/" else "/overview") for r in ROUTES),
                                     "/memories/{}", "/api/memories/{}"]),
                    st.lists(st.tuples(st.one_of(st.sampled_from(PARAM_NAMES), st.text(ANY_CHAR, max_size=6)),
                                       st.one_of(WORD, TEXT)), max_size=5), WORD)


async def _dashboard(tmp: Path) -> Any:
    from aiohttp.test_utils import TestClient, TestServer

    from astrbot_plugin_engram.dashboard import DashboardSettings, make_app
    from astrbot_plugin_engram.memory.self.selfhood import BlockDefaults

    from .conftest import HashEmbedder
    from .dashboard.conftest import GROUP, JOBS, OWNER_DM, TOKEN, seed

    path = tmp / "engram.db"
    await seed(path)
    engram = await Engram.open(path, HashEmbedder(), background=False)
    client = TestClient(TestServer(make_app(engram, DashboardSettings(
        token=TOKEN, block=BlockDefaults(inject_budget_tokens=300, recall_k=5), jobs=lambda: JOBS,
        identity=lambda: "我是小记",
        owner_places=lambda s: s in (OWNER_DM, GROUP)))))
    await client.start_server()
    return client, engram


def _q(s: str) -> str:
    return quote(s.encode("utf-8", "surrogatepass"), safe="")  # what a browser or a script may send


async def _request(state: Any, x: tuple[str, list[tuple[str, str]], str]) -> None:
    from .dashboard.conftest import AUTH

    client, _ = state
    route, params, word = x
    path = route.format(_q(word))
    query = "&".join(f"{_q(k)}={_q(v)}" for k, v in params)
    r = await client.get(f"{path}?{query}" if query else path, headers=AUTH, allow_redirects=False)
    body = await r.read()
    if r.status >= 500:
        raise AssertionError(f"{r.status} for {path}?{query:.200}: {body[:300]!r}")


async def _dashboard_close(state: Any) -> None:
    client, engram = state
    await client.close()
    bad = await engram.store.integrity()
    await engram.close()
    if bad:
        raise AssertionError(f"the store is damaged after fuzzing: {bad}")


# ---- the model's answers -------------------------------------------------------------------------
class Scripted:
    """A chat model answering whatever the fuzzer put in ``answer`` (the real parsing follows)."""

    name = "fuzz"

    def __init__(self) -> None:
        self.answer = ""

    async def complete(self, messages: list[Any], *, json: bool = False, timeout: float = 60.0) -> ChatResult:
        return ChatResult(self.answer)


KEYS = st.one_of(st.sampled_from(["e1", "e2", "e3", "m1", "m2", "e999", "E1", "e-1", "e1.5", "e", "1"]),
                 st.integers(-2, 50), JSON_SCALAR)
ACTION = st.fixed_dictionaries({}, optional={
    "op": st.one_of(st.sampled_from(["add", "update", "none", "delete", "merge", "ADD", ""]), JSON_SCALAR),
    "text": st.one_of(TEXT, JSON_ANY), "kind": st.one_of(st.sampled_from(
        ["fact", "preference", "event", "relation", "plan", "diary", "self"]), JSON_SCALAR),
    "about": st.one_of(st.lists(st.one_of(st.sampled_from(["qq:u1", "qq:u2", "self", "owner"]), JSON_SCALAR),
                                max_size=3), JSON_ANY),
    "importance": JSON_SCALAR, "scope": st.one_of(st.sampled_from(["public", "owner", "self",
                                                                    "space:qq:group:g2", None]), JSON_ANY),
    "sources": st.one_of(st.lists(KEYS, max_size=4), JSON_ANY), "when": st.one_of(st.sampled_from(
        ["2026-12-01", "2026-13-45", "0001-01-01", "9999-12-31", "yesterday", "2026-12-01T25:00"]),
        JSON_SCALAR),
    "id": KEYS})


def answers(shape: st.SearchStrategy[Any]) -> st.SearchStrategy[str]:
    """A model's answer: the expected JSON (hostile fields), any JSON, any text, or JSON in a fence."""
    return st.one_of(shape.map(lambda o: json.dumps(o, ensure_ascii=False)),
                     JSON_ANY.map(lambda o: json.dumps(o, ensure_ascii=False)), TEXT,
                     shape.map(lambda o: f"<think>hmm</think>```json\n{json.dumps(o)}\n```"),
                     shape.map(lambda o: json.dumps(o)[: len(json.dumps(o)) // 2]))


CONSOLIDATION = answers(st.fixed_dictionaries({"actions": st.one_of(st.lists(ACTION, max_size=4), JSON_ANY)}))
MERGE = answers(st.fixed_dictionaries({}, optional={"same": JSON_SCALAR, "text": st.one_of(TEXT, JSON_ANY),
                                                    "merged": st.one_of(TEXT, JSON_ANY)}))
DIARY = answers(st.fixed_dictionaries({}, optional={"diary": st.one_of(TEXT, JSON_ANY),
                                                    "mood": JSON_ANY, "entry": JSON_ANY}))
SELF_IMAGE = answers(st.fixed_dictionaries({}, optional={"self_image": st.one_of(TEXT, JSON_ANY)}))
TODAY = date(2026, 12, 1)


@dataclass
class ModelState:
    engram: Engram
    chat: Scripted
    folder: Path
    n: int = 0


async def _model_state(tmp: Path) -> ModelState:
    from .conftest import HashEmbedder

    engram = await Engram.open(tmp / "engram.db", HashEmbedder(), background=False)
    return ModelState(engram, Scripted(), tmp)


async def _model_close(state: ModelState) -> None:
    bad = await state.engram.store.integrity()
    await state.engram.close()
    if bad:
        raise AssertionError(f"the store is damaged after fuzzing: {bad}")


async def _consolidate(state: ModelState, answer: str) -> None:
    from astrbot_plugin_engram.memory.consolidation import ConsolidationSettings, Consolidator

    state.n += 1
    place = f"qq:group:g{state.n % 3}"
    await state.engram.record_many([Episode(place, f"line {state.n}.{k}: 小王 likes tea", actor=f"qq:u{k}",
                                            actor_name=["小王", "Bob", "Eve"][k]) for k in range(3)])
    state.chat.answer = answer
    await Consolidator(state.engram, state.chat, ConsolidationSettings(batch_episodes=3)).run(
        [place], force=True)


async def _merge(state: ModelState, answer: str) -> None:
    state.n += 1
    ids = [await state.engram.add_memory(Memory(f"Alice likes green tea {state.n}", "public"))
           for _ in range(2)]  # two alike, new: a group the merger asks about
    await state.engram.embed_pending()
    state.chat.answer = answer
    await state.engram.merge_duplicates(state.chat)
    await state.engram.forget(ids)  # (and a merge of them): each run compares two, not all so far


async def _diary(state: ModelState, answer: str) -> None:
    from astrbot_plugin_engram.memory.self.diary import write_diary

    state.n += 1
    day = TODAY - timedelta(days=state.n % 30)
    at = datetime(day.year, day.month, day.day, 12, tzinfo=timezone.utc)
    await state.engram.record(Episode("qq:group:g1", f"we talked about tea {state.n}", actor="qq:u1",
                                      actor_name="Alice", time=at))
    state.chat.answer = answer
    try:
        await write_diary(state.engram, state.chat, day, force=True, tz=timezone.utc, boundary_hour=4,
                          folder=state.folder)
    except EngramError:  # ChatError, WrongShape: documented; the job logs a failed run, nothing changes
        pass


async def _self_image(state: ModelState, answer: str) -> None:
    from astrbot_plugin_engram.memory.self.self_image import write_self_image

    state.n += 1
    if state.n == 1:
        await state.engram.add_memory(Memory("Today the book club talked about tea with Alice.", "self",
                                             kind="diary"))
    state.chat.answer = answer
    try:
        await write_self_image(state.engram, state.chat, folder=state.folder)
    except EngramError:
        pass


# ---- a bundle (``memory/bundle``): one file of a good export changed, the manifest resealed or not --
BUNDLE_FILES = ["manifest.json", "memories.jsonl", "places.jsonl", "people.jsonl", "cursors.jsonl",
                "kept_apart.jsonl", "job_runs.jsonl", "episodes", "documents"]
BUNDLE_KEYS = ["id", "place", "content", "time", "actor", "actor_name", "kind", "meta", "seq", "text",
               "scope", "sources", "status", "importance", "strength", "about", "supersedes", "subjects",
               "valid_from", "valid_to", "version",
               "format", "files", "counts", "path", "sha256", "records", "bytes", "name", "value",
               "created", "updated", "last_recalled", "title", "place_key", "was"]
BUNDLE_CHANGES = st.fixed_dictionaries({
    "file": st.sampled_from(BUNDLE_FILES),
    "op": st.sampled_from(["field", "field", "field", "replace", "insert", "delete", "cut", "bytes"]),
    "at": st.integers(0, 12), "key": st.one_of(st.sampled_from(BUNDLE_KEYS), st.text(ANY_CHAR, max_size=6)),
    "value": JSON_ANY, "raw": st.one_of(TEXT, st.binary(max_size=24).map(lambda b: b.decode("latin-1"))),
    "reseal": st.booleans(), "merge": st.booleans()})


@dataclass
class BundleState:
    engram: Engram
    good: Path
    folder: Path
    n: int = 0
    imported: int = 0  # inputs the import took (the others were refused)


async def _bundle_state(tmp: Path) -> BundleState:
    from astrbot_plugin_engram.memory.bundle import export_bundle

    from .bundle.worlds import write_documents
    from .conftest import HashEmbedder

    source = tmp / "source"
    source.mkdir()
    write_documents(source)
    e = await Engram.open(source / "store.db", HashEmbedder(dim=16), background=False)
    try:
        ids = await e.record_many([Episode("qq:group:1", f"line {n} 小王", actor="qq:1", actor_name="Ann")
                                   for n in range(3)] + [Episode("qq:private:7", "secret", actor="qq:7")])
        m = await e.add_memory(Memory("Ann likes tea", "space:qq:group:1", sources=(ids[0],)))
        await e.update(m, "Ann likes green tea")
        await e.add_memory(Memory("the sky is blue", "public", subjects=("qq:1",)))
        await export_bundle(e, tmp / "good")
    finally:
        await e.close()
    return BundleState(await _bundle_target(tmp, 0), tmp / "good", tmp)


async def _bundle_target(tmp: Path, n: int) -> Engram:
    from .conftest import HashEmbedder

    (tmp / f"target{n}").mkdir()
    return await Engram.open(tmp / f"target{n}" / "store.db", HashEmbedder(dim=16), background=False)


def _change_bundle(folder: Path, x: dict[str, Any]) -> None:
    """Apply one generated change to the bundle in ``folder`` (then reseal its manifest if asked)."""
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    pick = [p for p in files if p.relative_to(folder).as_posix().startswith(x["file"])] or files
    path = pick[x["at"] % len(pick)]
    data = path.read_bytes()
    lines = data.decode("utf-8", "replace").split("\n")
    i = x["at"] % max(1, len(lines))
    if x["op"] == "field":
        try:
            record = json.loads(lines[i])
        except ValueError:
            record = None
        if isinstance(record, dict):
            target = record
            if path.name == "manifest.json" and isinstance(record.get("files"), list) and x["at"] % 2:
                entries = [f for f in record["files"] if isinstance(f, dict)] or [record]
                target = entries[x["at"] % len(entries)]
            target[x["key"]] = x["value"]
            lines[i] = json.dumps(record, ensure_ascii=False)
        elif path.name == "manifest.json":  # the manifest is one JSON text over many lines
            whole = json.loads(data)
            whole[x["key"]] = x["value"]
            lines = json.dumps(whole, ensure_ascii=False).split("\n")
    elif x["op"] == "replace":
        lines[i] = x["raw"]
    elif x["op"] == "insert":
        lines.insert(i, json.dumps(x["value"], ensure_ascii=False))
    elif x["op"] == "delete":
        del lines[i]
    if x["op"] == "cut":
        out = data[: len(data) * x["at"] // 13]
    elif x["op"] == "bytes":
        at = x["at"] * len(data) // 13
        out = data[:at] + x["raw"].encode("utf-8", "surrogatepass") + data[at + 1:]
    else:
        out = "\n".join(lines).encode("utf-8", "surrogatepass")
    path.write_bytes(out)
    if x["reseal"]:
        _reseal(folder)


def _reseal(folder: Path) -> None:
    """Make the manifest's lengths and checksums those of the files as they are now (where it still
    reads as a manifest), so the import looks past them at the lines themselves."""
    try:
        manifest = json.loads((folder / "manifest.json").read_bytes())
        entries = [e for e in manifest["files"] if isinstance(e, dict) and isinstance(e.get("path"), str)]
    except (ValueError, KeyError, TypeError, OSError):
        return
    for entry in entries:
        f = folder / entry["path"]
        if f.is_file() and f.resolve().is_relative_to(folder.resolve()):
            data = f.read_bytes()
            entry["sha256"] = hashlib.sha256(data).hexdigest()
            entry["records" if "records" in entry else "bytes"] = (
                data.count(b"\n") if "records" in entry else len(data))
    text = json.dumps(manifest, ensure_ascii=False)
    (folder / "manifest.json").write_bytes(text.encode("utf-8", "surrogatepass"))


def _documents_of(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.relative_to(folder).parts[0] in ("identity", "diary")}


async def _bundle(state: BundleState, x: dict[str, Any]) -> None:
    from astrbot_plugin_engram.memory.errors import BundleError

    state.n += 1
    work = state.folder / "work"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(state.good, work)
    _change_bundle(work, x)
    data_folder = Path(state.engram.store.path).parent
    before, documents = await state.engram.store.counts(), _documents_of(data_folder)
    try:
        await import_bundle(state.engram, work, merge=x["merge"])
    except BundleError as e:
        if "nothing was imported" not in str(e) and "nothing was merged" not in str(e):
            raise AssertionError(f"a refusal that does not say nothing changed: {e}") from e
        if await state.engram.store.counts() != before or _documents_of(data_folder) != documents:
            raise AssertionError(f"a refused bundle changed the store or its documents: {e}") from e
        return
    state.imported += 1
    bad = await state.engram.store.integrity()  # imported: whole, and the next input gets an empty store
    await state.engram.close()
    if bad:
        raise AssertionError(f"the store is damaged after an import: {bad}")
    shutil.rmtree(data_folder)
    state.engram = await _bundle_target(state.folder, state.n)


RENEW = 2_000  # inputs per store on the model-answer surfaces (``Surface.renew``)
SURFACES = {
    "commands": Surface("commands", COMMAND_LINES, _service, _command, _close),
    "hooks": Surface("hooks", MESSAGES, _service, _hooks, _close),
    "tools": Surface("tools", TOOL_CALLS, _service, _tool, _close),
    "dashboard": Surface("dashboard", QUERIES, _dashboard, _request, _dashboard_close),
    "consolidation": Surface("consolidation", CONSOLIDATION, _model_state, _consolidate, _model_close,
                             renew=RENEW),
    "merging": Surface("merging", MERGE, _model_state, _merge, _model_close, renew=RENEW),
    "diary": Surface("diary", DIARY, _model_state, _diary, _model_close, renew=RENEW),
    "self_image": Surface("self_image", SELF_IMAGE, _model_state, _self_image, _model_close, renew=RENEW),
    "bundle": Surface("bundle", BUNDLE_CHANGES, _bundle_state, _bundle, _model_close, renew=RENEW),
}
