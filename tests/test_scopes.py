"""Privacy by scope: parsing, the visibility rules, narrowing, and a property test over recall."""

from __future__ import annotations

import asyncio
import copy
import random
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from astrbot_plugin_engram.memory import (
    Audience,
    Engram,
    Episode,
    InvalidScopeError,
    Memory,
    narrow_scope,
    parse_scope,
    visibility,
)
from astrbot_plugin_engram.memory.recall.candidates import RecallSettings, gather_candidates
from astrbot_plugin_engram.memory.text.words import query_words

from .conftest import HashEmbedder

GROUP, DM_OWNER, DM_BOB = "qq:group:1", "qq:private:owner", "qq:private:bob"


# ---- parse_scope --------------------------------------------------------------------------------
@pytest.mark.parametrize("raw, parsed", [
    ("public", "public"), ("self", "self"), ("owner", "owner"), (" owner ", "owner"),
    ("space:qq:group:1", "space:qq:group:1"), ("space: web ", "space:web"), ("space:群聊", "space:群聊"),
])
def test_parse_scope_accepts(raw: str, parsed: str) -> None:
    assert parse_scope(raw) == parsed


@pytest.mark.parametrize("raw", ["", " ", "Public", "private", "space:", "space:  ", "spaces:x", "group:1",
                                 None, 3, ("public",)])
def test_parse_scope_rejects_with_a_clear_message(raw: object) -> None:
    with pytest.raises(InvalidScopeError, match="public, self, owner or space|must be a string"):
        parse_scope(raw)


# ---- visibility rules ---------------------------------------------------------------------------
def test_public_and_self_are_visible_everywhere() -> None:
    for aud in (Audience(GROUP), Audience(DM_BOB), Audience(DM_OWNER, owner_private=True), Audience("")):
        vis = visibility(aud)
        assert vis.sees_memory("public") and vis.sees_memory("self")


def test_owner_memories_only_in_the_owners_private_chat() -> None:
    assert visibility(Audience(DM_OWNER, owner_private=True)).sees_memory("owner")
    assert not visibility(Audience(DM_OWNER)).sees_memory("owner")
    assert not visibility(Audience(GROUP, people=("qq:owner",))).sees_memory("owner")
    assert not visibility(Audience(DM_BOB)).sees_memory("owner")


def test_place_memories_only_in_that_place() -> None:
    vis = visibility(Audience(GROUP))
    assert vis.sees_memory(f"space:{GROUP}")
    assert not vis.sees_memory(f"space:{DM_BOB}")
    assert not vis.sees_memory("space:qq:group:10")  # no prefix matching
    assert not visibility(Audience(DM_OWNER, owner_private=True)).sees_memory(f"space:{GROUP}")


def test_episodes_only_in_their_own_place() -> None:
    vis = visibility(Audience(GROUP, people=("qq:bob",)))
    assert vis.sees_episode(GROUP)
    assert not vis.sees_episode(DM_BOB)  # even with Bob present, his DM stays in his DM
    assert not visibility(Audience(DM_OWNER, owner_private=True)).sees_episode(GROUP)
    assert not visibility(Audience("")).sees_episode("")


async def test_a_space_is_the_same_place_with_or_without_stray_whitespace(engram: Engram) -> None:
    await engram.record(Episode(place=" web ", content="the tram strike is on Tuesday"))
    await engram.add_memory(Memory(text="tram strike Tuesday", scope="space: web"))
    for aud in (Audience("web"), Audience("web  ")):
        assert len(await engram.recall("tram strike", aud)) == 2
    assert await engram.recall("tram strike", Audience("   ")) == []
    assert await engram.recall("tram strike", Audience("web2")) == []


def test_the_owner_console_sees_everything() -> None:
    vis = visibility(Audience.owner_console())
    assert all(vis.sees_memory(s) for s in ("public", "self", "owner", f"space:{DM_BOB}"))
    assert vis.sees_episode(DM_BOB) and vis.sees_episode(GROUP)


# ---- narrowing ----------------------------------------------------------------------------------
def test_a_memory_about_nobody_may_become_public_or_self() -> None:
    assert narrow_scope("public", GROUP) == "public"
    assert narrow_scope("self", GROUP) == "self"


def test_a_memory_about_someone_never_becomes_public() -> None:
    for proposed in ("public", "self", f"space:{DM_BOB}", "nonsense", ""):
        assert narrow_scope(proposed, GROUP, ("qq:bob",)) == f"space:{GROUP}"
    assert narrow_scope("owner", GROUP, ("qq:bob",)) == "owner"


def test_another_place_is_never_granted() -> None:
    assert narrow_scope(f"space:{DM_BOB}", GROUP) == f"space:{GROUP}"


def allowed(proposed: str, learned_in: str, subjects: tuple[str, ...]) -> set[str]:
    """The oracle: what a proposal may become (never wider than asked, never outside home/owner)."""
    home = "space:" + learned_in.strip()
    ok = {home}
    if proposed.strip() == "owner":
        ok.add("owner")
    if proposed.strip() in ("public", "self") and not subjects:
        ok.add(proposed.strip())
    return ok


SCOPE_WORDS = st.sampled_from(["public", "self", "owner", " public", "space:qq:group:1", "space:x",
                               "space:", "", "Public", "space:qq:private:bob"])


@given(proposed=st.one_of(SCOPE_WORDS, st.text(max_size=12)),
       learned_in=st.sampled_from([GROUP, DM_BOB, DM_OWNER, "web", "群:1"]),
       subjects=st.lists(st.sampled_from(["qq:bob", "qq:alice"]), max_size=2).map(tuple))
def test_narrow_scope_can_only_narrow(proposed: str, learned_in: str, subjects: tuple[str, ...]) -> None:
    assert narrow_scope(proposed, learned_in, subjects) in allowed(proposed, learned_in, subjects)


# ---- the property test: no recall returns what its audience may not see -------------------------
SPACES = ["qq:group:1", "qq:group:11", "qq:private:1", "qq:private:owner", "web", "微信:群:1", "owner",
          "public", "web "]  # a stray space names the same place
VOCAB = "cat dog tea Berlin Paris birthday secret 猫 生日 秘密 咖啡 piano salary doctor".split()
STATUSES = ("active", "archived")


@dataclass
class Truth:
    """What the test itself recorded: each item's space / scope and status, kept apart from the store."""

    episodes: dict[int, str] = field(default_factory=dict)
    memories: dict[int, tuple[str, str]] = field(default_factory=dict)

    def __repr__(self) -> str:  # hypothesis prints the fixture on failure; the ids are enough
        return f"Truth({len(self.episodes)} episodes, {len(self.memories)} memories)"


def may_see(aud: Audience, kind: str, truth: Truth, item_id: int, include_archived: bool) -> bool:
    """The rules of DESIGN.md, written independently of memory.scopes."""
    if kind == "episode":
        place = truth.episodes[item_id]
        return aud.everything or (place == aud.place.strip() and aud.place.strip() != "")
    scope, status = truth.memories[item_id]
    if status == "superseded" or (status == "archived" and not include_archived):
        return False
    if aud.everything or scope in ("public", "self"):
        return True
    if scope == "owner":
        return aud.owner_private
    return aud.place.strip() != "" and scope == "space:" + aud.place.strip()


world_items = st.lists(
    st.tuples(st.sampled_from(["episode", "memory", "update", "rescope"]),
              st.sampled_from(SPACES + ["<public>", "<self>", "<owner>"]),
              st.lists(st.sampled_from(VOCAB), min_size=1, max_size=4),
              st.sampled_from(STATUSES),
              st.booleans()),  # embed everything so far after this item
    min_size=1, max_size=24)


def scope_of(where: str) -> str:
    return where.strip("<>") if where.startswith("<") else f"space:{where.strip()}"


async def build(e: Engram, items: list, truth: Truth) -> None:
    rng = random.Random(len(items))
    for kind, where, ws, status, embed in items:
        text = " ".join(ws)
        place = where if not where.startswith("<") else "web"
        if kind == "episode":
            truth.episodes[await e.record(Episode(place=place, content=text))] = place.strip()
        elif kind == "memory" or not truth.memories:
            mid = await e.add_memory(Memory(text=text, scope=scope_of(where), status=status))
            truth.memories[mid] = (scope_of(where), status)
        else:
            live = [m for m, (_, s) in truth.memories.items() if s != "superseded"]
            old = rng.choice(live)
            if kind == "update":
                new = await e.update(old, text)
                scope, st_old = truth.memories[old]
                truth.memories[old] = (scope, "superseded")
                truth.memories[new] = (scope, "active")
            else:
                await e.set_scope(old, scope_of(where))
                truth.memories[old] = (scope_of(where), truth.memories[old][1])
        if embed:
            await e.embed_pending()


audiences = st.builds(
    Audience,
    place=st.sampled_from(SPACES + ["qq:group:2", "", " ", "space:web", " qq:group:1"]),
    people=st.lists(st.sampled_from(["qq:1", "qq:owner", "qq:bob"]), max_size=2).map(tuple),
    owner_private=st.booleans(),
    everything=st.integers(0, 4).map(lambda i: i == 0),
)
queries = st.lists(st.sampled_from(VOCAB + ["what", "the"]), min_size=1, max_size=4).map(" ".join)


def check(hits: list, aud: Audience, truth: Truth, include_archived: bool) -> None:
    for h in hits:
        assert may_see(aud, h.kind, truth, h.id, include_archived), (aud, h.key, h.text)
        # the hit's own item must agree with what was stored (no mislabelled item can slip through)
        if h.kind == "episode":
            assert h.item.place == truth.episodes[h.id]
        else:
            assert (h.item.scope, h.item.status) == truth.memories[h.id]
    for h in hits:  # a deliberate search (include_archived) makes what it finds in the archive active
        if h.kind == "memory" and truth.memories[h.id][1] == "archived":
            truth.memories[h.id] = (truth.memories[h.id][0], "active")


async def check_keyword_routes(e: Engram, aud: Audience, query: str, truth: Truth,
                               include_archived: bool) -> None:
    """The keyword searches alone return only what the audience may see (not just recall's last check)."""
    vis, words = visibility(aud), query_words(query)
    for i, _ in await e.indexes.keywords.search_episodes(e.store, words, vis, 200):
        assert may_see(aud, "episode", truth, i, include_archived), (aud, "episode", i)
    for i, _ in await e.indexes.keywords.search_memories(e.store, words, vis, 200, include_archived):
        assert may_see(aud, "memory", truth, i, include_archived), (aud, "memory", i)


# 80 random worlds x 30 recalls, plus 40 x 40 below on a bigger store: 4,000 recalls in ~15-25 s
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items=world_items, tries=st.lists(st.tuples(audiences, queries, st.booleans()),
                                         min_size=30, max_size=30))
def test_no_recall_returns_what_its_audience_may_not_see(items: list, tries: list) -> None:
    with tempfile.TemporaryDirectory() as d:
        assert asyncio.run(world_recalls(Path(d) / "p.db", Path(d), items, tries)) == 30


async def world_recalls(where: str | Path, folder: Path, items: list, tries: list) -> int:
    """Build a world in the store at ``where`` and check every recall of ``tries`` against it."""
    truth = Truth()
    e = await Engram.open(where, HashEmbedder(dim=16), background=False, folder=folder)
    try:
        await build(e, items, truth)
        for aud, query, include_archived in tries:
            hits = await e.recall(query, aud, k=200, include_archived=include_archived)
            check(hits, aud, truth, include_archived)
            await check_keyword_routes(e, aud, query, truth, include_archived)
    finally:
        await e.close()
    return len(tries)


# the same property on the PostgreSQL store (a database per world on the session's throwaway server):
# fewer worlds, each costs a database
@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(items=world_items, tries=st.lists(st.tuples(audiences, queries, st.booleans()),
                                         min_size=30, max_size=30))
def test_no_recall_on_postgres_returns_what_its_audience_may_not_see(postgres_server: Any, items: list,
                                                                     tries: list) -> None:
    with tempfile.TemporaryDirectory() as d:
        assert asyncio.run(world_recalls(postgres_server.fresh_database(), Path(d), items, tries)) == 30


@pytest.fixture(scope="module")
def big_world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Truth]:
    """A fixed store of a few hundred items over every space and scope, fully embedded."""
    rng = random.Random(7)
    items = [(rng.choice(["episode", "episode", "memory", "memory", "update", "rescope"]),
              rng.choice(SPACES + ["<public>", "<self>", "<owner>"]),
              rng.sample(VOCAB, rng.randint(1, 4)), rng.choice(STATUSES), rng.random() < 0.1)
             for _ in range(200)]
    path = tmp_path_factory.mktemp("world") / "big.db"
    truth = Truth()

    async def make() -> None:
        e = await Engram.open(path, HashEmbedder(dim=16), background=False)
        try:  # closed also when building fails (an open store would keep pytest from exiting)
            await build(e, items, truth)
            # leave a tail unembedded: recall must hold for items the vector route cannot see yet
            eid = await e.record(Episode(place="qq:private:1", content="secret salary 秘密"))
            truth.episodes[eid] = "qq:private:1"
        finally:
            await e.close()

    asyncio.run(make())
    return path, truth


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tries=st.lists(st.tuples(audiences, queries, st.booleans(), st.integers(1, 200)),
                      min_size=40, max_size=40))
def test_no_recall_leaks_from_a_bigger_store(big_world: tuple[Path, Truth], tries: list) -> None:
    # a copy per example: a deliberate search revives what it finds in the archive (the store changes)
    original, truth = big_world[0], copy.deepcopy(big_world[1])
    folder = tempfile.mkdtemp()
    path = Path(folder) / "big.db"
    shutil.copyfile(original, path)

    async def run() -> None:
        e = await Engram.open(path, HashEmbedder(dim=16), background=False)
        try:
            for aud, query, include_archived, k in tries:
                hits = await e.recall(query, aud, k=k, include_archived=include_archived)
                assert len(hits) <= k
                check(hits, aud, truth, include_archived)
                await check_keyword_routes(e, aud, query, truth, include_archived)
        finally:
            await e.close()

    try:
        asyncio.run(run())
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_the_oracle_is_not_vacuous(big_world: tuple[Path, Truth]) -> None:
    """Recall does find things: private items in their own place, everything for the console."""
    path, truth = big_world

    async def run() -> tuple[list, list, list]:
        e = await Engram.open(path, HashEmbedder(dim=16), background=False)
        try:
            q = " ".join(VOCAB)
            return (await e.recall(q, Audience("qq:private:1"), k=200),
                    await e.recall(q, Audience("qq:private:owner", owner_private=True), k=200),
                    await e.recall(q, Audience.owner_console(), k=200, include_archived=True))
        finally:
            await e.close()

    dm, owner, console = asyncio.run(run())
    assert any(h.kind == "episode" for h in dm)
    # both routes are exercised: keyword hits, and hits the vector route alone found
    assert any(h.features["kw"] > 0 for h in console)
    assert any(h.features["kw"] == 0 and h.features["cos"] > 0 for h in console + owner + dm)
    assert any(truth.memories[h.id][1] == "archived" for h in console if h.kind == "memory")
    assert any(h.kind == "memory" and truth.memories[h.id][0] == "owner" for h in owner)
    assert {truth.episodes[h.id] for h in console if h.kind == "episode"} >= {"qq:group:1", "web"}


async def test_a_memory_moved_out_of_sight_by_another_process_never_enters_the_pool(tmp_path: Path) -> None:
    # The bot's keyword statistics still file the memory under its old scope: the routes return
    # it, and the check against the file keeps it out of the candidates (so out of every feature).
    path = tmp_path / "e.db"
    bot = await Engram.open(path, HashEmbedder(), background=False)
    cli = await Engram.open(path, HashEmbedder(), background=False)
    try:
        mid = await bot.add_memory(Memory(text="the secret garden key is under the mat", scope="public"))
        await bot.embed_pending()
        vis = visibility(Audience("qq:group:1"))
        query = "garden key mat"
        qvec = await bot.embed_query(query)
        assert qvec is not None and bot.index is not None
        keywords = bot.indexes.keywords
        words = query_words(query)
        routes = {i for i, _ in await keywords.search_memories(bot.store, words, vis, 10, False)}
        assert mid in routes and ("m", mid) in {(k, i) for k, i, _ in bot.index.search(qvec, vis, 10)}
        await cli.set_scope(mid, "space:qq:group:2")  # elsewhere, while the bot runs
        assert mid in {i for i, _ in await keywords.search_memories(bot.store, words, vis, 10, False)}
        pool = await gather_candidates(bot.store, bot.indexes, query, qvec, vis, RecallSettings(), False)
        assert ("m", mid) not in set(zip(pool.kinds, pool.ids))
        assert await bot.recall(query, Audience("qq:group:1")) == []
        assert [h.id for h in await bot.recall(query, Audience("qq:group:2"))] == [mid]
    finally:
        await cli.close()
        await bot.close()
