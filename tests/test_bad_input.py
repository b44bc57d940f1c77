"""Bad input: empty and huge text, bad scopes, wrong objects, bad store files, a failing embedder."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest

from astrbot_plugin_engram.memory import (
    Audience,
    Engram,
    EngramError,
    Episode,
    InvalidInputError,
    InvalidScopeError,
    Memory,
    OpenAIEmbedder,
    StoreError,
)
from astrbot_plugin_engram.memory.index.indexer import EMBED_BATCH
from astrbot_plugin_engram.memory.model import PERSON_CHARS, PLACE_CHARS, STORED_NAME_CHARS
from astrbot_plugin_engram.memory.text.words import MAX_TEXT

from .conftest import EngramOpener, HashEmbedder
from .fake_openai import FakeOpenAI

SPACE = "qq:group:1"


def snapshot(path: Path) -> tuple[str, list[str]]:
    """The file's hash and the names in its folder (a refused open must leave both as they were)."""
    return hashlib.sha256(path.read_bytes()).hexdigest(), sorted(p.name for p in path.parent.iterdir())


def write(path: Path, data: bytes) -> None:
    path.write_bytes(data)


# ---- text ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["", "   ", "\n\t "])
async def test_empty_text_is_refused(engram: Engram, text: str) -> None:
    with pytest.raises(InvalidInputError, match="needs some text"):
        await engram.record(Episode(place=SPACE, content=text))
    with pytest.raises(InvalidInputError, match="needs some text"):
        await engram.add_memory(Memory(text=text, scope="public"))
    assert (await engram.stats())["episodes"] == 0


@pytest.mark.parametrize("text", ["\u200b", "\u200b\u2060 \ufeff", "\u202e\u200d\n"])
async def test_a_memory_of_only_invisible_characters_is_refused(engram: Engram, text: str) -> None:
    """"\\u200b" was kept as a memory that shows as nothing (and the tool answered "Remembered")."""
    with pytest.raises(InvalidInputError, match="needs some text"):
        await engram.add_memory(Memory(text=text, scope="public"))
    assert (await engram.stats())["memories"] == 0


async def test_an_episode_needs_a_place(engram: Engram) -> None:
    with pytest.raises(InvalidInputError, match="space"):
        await engram.record(Episode(place=" ", content="hello"))


async def test_huge_episode_is_capped_and_says_so(engram: Engram, caplog: pytest.LogCaptureFixture) -> None:
    text = "长" * (MAX_TEXT + 500)
    with caplog.at_level(logging.WARNING, logger="engram"):
        eid = await engram.record(Episode(place=SPACE, content=text))
    ep = await engram.get_episode(eid)
    assert len(ep.content) == MAX_TEXT
    assert ep.meta["truncated_from"] == MAX_TEXT + 500
    assert f"{MAX_TEXT + 500} characters cut to {MAX_TEXT}" in caplog.text


async def test_huge_memory_is_capped_and_says_so(engram: Engram, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="engram"):
        mid = await engram.add_memory(Memory(text="x " * MAX_TEXT, scope="public"))
    assert len((await engram.get(mid)).text) == MAX_TEXT
    assert "memory text of" in caplog.text


async def test_huge_query_still_answers(engram: Engram) -> None:
    await engram.record(Episode(place=SPACE, content="the piano lesson is on Friday"))
    hits = await engram.recall("piano " * MAX_TEXT, Audience(SPACE))
    assert [h.text for h in hits] == ["the piano lesson is on Friday"]


async def test_blank_query_finds_nothing(engram: Engram) -> None:
    await engram.record(Episode(place=SPACE, content="anything"))
    assert await engram.recall("   ", Audience(SPACE)) == []


# ---- scopes, objects, numbers -------------------------------------------------------------------
@pytest.mark.parametrize("scope", ["", "everyone", "space:", "Owner", "group:1"])
async def test_invalid_scope_is_refused(engram: Engram, scope: str) -> None:
    with pytest.raises(InvalidScopeError, match="invalid scope"):
        await engram.add_memory(Memory(text="something", scope=scope))
    mid = await engram.add_memory(Memory(text="something", scope="public"))
    with pytest.raises(InvalidScopeError):
        await engram.set_scope(mid, scope)
    assert (await engram.get(mid)).scope == "public"


@pytest.mark.parametrize("thing", ["hello", {"space": SPACE, "content": "hi"}, None,
                                   Memory(text="x", scope="public")])
async def test_record_refuses_what_is_not_an_episode(engram: Engram, thing: object) -> None:
    with pytest.raises(InvalidInputError, match="expected an Episode"):
        await engram.record(thing)  # type: ignore[arg-type]


async def test_record_many_with_one_bad_item_records_nothing(engram: Engram) -> None:
    good = Episode(place=SPACE, content="fine")
    with pytest.raises(InvalidInputError):
        await engram.record_many([good, "bad"])  # type: ignore[list-item]
    assert (await engram.stats())["episodes"] == 0


@pytest.mark.parametrize("bad, msg", [
    ({"meta": {"when": datetime.now()}}, "meta must be plain JSON"),
    ({"meta": ["not", "a", "dict"]}, "meta must be a dict"),
    ({"actor_name": None}, "actor_name must be a string"),
    ({"time": "yesterday"}, "time must be a datetime"),
    ({"kind": "gossip"}, "unknown episode kind 'gossip'"),  # was stored as it was
    # a datetime whose UTC instant is off the calendar: stored, reading it back raised
    ({"time": datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=14)))}, "out of range"),
    ({"time": datetime(9999, 12, 31, 23, tzinfo=timezone(timedelta(hours=-12)))}, "out of range"),
])
async def test_one_bad_episode_does_not_sink_its_commit(engram: Engram, bad: dict, msg: str) -> None:
    good = engram.record(Episode(place=SPACE, content="a good message"))
    worse = engram.record(Episode(place=SPACE, content="a bad one", **bad))
    results: list[object] = list(await asyncio.gather(good, worse, return_exceptions=True))
    ok, err = results
    assert isinstance(err, InvalidInputError) and msg in str(err)
    assert isinstance(ok, int) and (await engram.get_episode(ok)).content == "a good message"


async def test_a_broken_emoji_is_stored_with_a_replacement_character(engram: Engram) -> None:
    good = engram.record(Episode(place=SPACE, content="a good message"))
    broken = engram.record(Episode(place=SPACE, content="nice \ud83d shot", actor_name="Zo\udc00e"))
    ok, eid = await asyncio.gather(good, broken)
    ep = await engram.get_episode(eid)
    assert (ep.content, ep.actor_name) == ("nice \ufffd shot", "Zo\ufffde")
    assert (await engram.get_episode(ok)).content == "a good message"
    mid = await engram.add_memory(Memory(text="emoji \ud83d\ude00 pair and lone \udfff", scope="public"))
    assert (await engram.get(mid)).text == "emoji \U0001F600 pair and lone \ufffd"


async def test_add_memory_refuses_an_episode(engram: Engram) -> None:
    with pytest.raises(InvalidInputError, match="expected a Memory"):
        await engram.add_memory(Episode(place=SPACE, content="hi"))  # type: ignore[arg-type]


@pytest.mark.parametrize("changes, msg", [({"kind": "gossip"}, "unknown memory kind"),
                                          ({"importance": 1.5}, "importance"),
                                          ({"status": "deleted"}, "unknown memory status"),
                                          ({"valid_from": datetime(1, 1, 1, tzinfo=timezone(
                                              timedelta(hours=14)))}, "valid_from .* out of range"),
                                          ({"valid_to": "soon"}, "valid_to must be a datetime")])
async def test_bad_memory_fields_are_refused(engram: Engram, changes: dict, msg: str) -> None:
    with pytest.raises(InvalidInputError, match=msg):
        await engram.add_memory(Memory(text="x", scope="public", **changes))


@pytest.mark.parametrize("k", [0, -1, 201, 10_000, 2.5, "5", True])
async def test_k_out_of_range_is_refused(engram: Engram, k: object) -> None:
    with pytest.raises(InvalidInputError, match="k must be"):
        await engram.recall("hello", Audience(SPACE), k=k)  # type: ignore[arg-type]


async def test_query_must_be_text(engram: Engram) -> None:
    with pytest.raises(InvalidInputError, match="query"):
        await engram.recall(None, Audience(SPACE))  # type: ignore[arg-type]


# ---- store files --------------------------------------------------------------------------------
async def assert_refused_untouched(path: Path, match: str) -> None:
    before = snapshot(path)
    with pytest.raises(StoreError, match=match) as err:
        await Engram.open(path, background=False)
    assert "untouched" in str(err.value)
    assert snapshot(path) == before


async def test_a_file_that_is_not_sqlite_is_refused_untouched(db_path: Path) -> None:
    write(db_path, b"name,age\nalice,30\n")
    await assert_refused_untouched(db_path, "not an SQLite file")


async def test_a_corrupt_sqlite_file_is_refused_untouched(db_path: Path) -> None:
    write(db_path, b"SQLite format 3\x00" + b"\xff" * 4000)
    await assert_refused_untouched(db_path, "cannot be read")


async def test_another_programs_sqlite_file_is_refused_untouched(db_path: Path) -> None:
    with sqlite3.connect(db_path) as db:
        db.execute("CREATE TABLE contacts (name TEXT, phone TEXT)")
        db.execute("INSERT INTO contacts VALUES ('alice', '555')")
    await assert_refused_untouched(db_path, "another program")


async def test_a_store_from_a_newer_schema_is_refused_untouched(db_path: Path) -> None:
    e = await Engram.open(db_path, background=False)
    await e.record(Episode(place=SPACE, content="kept"))
    await e.close()
    db = sqlite3.connect(db_path)
    db.execute("INSERT INTO _migrations VALUES ('m999_from_the_future', 0)")
    db.commit()
    db.close()
    await assert_refused_untouched(db_path, "newer Engram")


async def test_a_damaged_vector_leaves_recall_on_keywords_and_reindex_rebuilds_it(
        db_path: Path, open_engram: EngramOpener, caplog: pytest.LogCaptureFixture) -> None:
    """One vector blob of the wrong size made the store fail to open ('buffer size must be a multiple
    of element size'): no recording, no recall, and no reindex to repair it, since that opens it too."""
    e = await open_engram()
    await record_chat(e)
    await e.embed_pending()
    await e.close()
    with sqlite3.connect(db_path) as con:
        con.execute("UPDATE vectors SET vec = x'0001' WHERE item = 1")
    with caplog.at_level(logging.ERROR, logger="engram"):
        e = await open_engram()
    assert "cannot be read" in caplog.text and "engram reindex" in caplog.text
    assert (await e.recall("dentist Monday", Audience(SPACE)))[0].text == "the dentist is on Monday"
    await e.record(Episode(place=SPACE, content="still recording"))
    assert await e.reindex(e.embedder) == 7
    assert "vec" in _routes((await e.recall("kitten Miso", Audience(SPACE)))[0])


async def test_switching_to_a_model_whose_vectors_are_damaged_keeps_the_store_usable(
        db_path: Path, open_engram: EngramOpener) -> None:
    """The plugin switches models when the embedding provider changes: the same load, the same damage."""
    e = await open_engram(HashEmbedder(16, "hash-16"))
    await record_chat(e)
    await e.embed_pending()
    await e.close()
    with sqlite3.connect(db_path) as con:
        con.execute("UPDATE vectors SET vec = x'0001' WHERE item = 1 AND model = 'hash-16'")
    e = await open_engram()  # another model: its vectors load fine
    await e.use_embedder(HashEmbedder(16, "hash-16"))
    assert (await e.recall("dentist Monday", Audience(SPACE)))[0].text == "the dentist is on Monday"


async def test_a_folder_or_a_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="is a folder"):
        await Engram.open(tmp_path, background=False)
    with pytest.raises(StoreError, match="does not exist"):
        await Engram.open(tmp_path / "nowhere" / "engram.db", background=False)
    assert not (tmp_path / "nowhere").exists()


async def test_a_file_name_with_uri_characters_works(tmp_path: Path) -> None:
    path = tmp_path / "my #1 bot?" / "100% engram.db"
    path.parent.mkdir()
    e = await Engram.open(path, background=False)
    try:
        await e.record(Episode(place=SPACE, content="odd file names are fine"))
        assert (await e.stats())["episodes"] == 1  # read through the read-only connection
    finally:
        await e.close()
    # no stray file made from a cut-short name (the marker of a clean close is the whole name's)
    assert snapshot(path)[1] == ["100% engram.db", "100% engram.db-clean"]
    assert not (tmp_path / "my ").exists()


# ---- a failing embedding endpoint ---------------------------------------------------------------
def remote(server: FakeOpenAI, dims: int | None = 8) -> OpenAIEmbedder:
    return OpenAIEmbedder("fake-embed", base_url=server.base_url, api_key="k", dimensions=dims, timeout=5)


async def record_chat(e: Engram, n: int = 6) -> list[int]:
    lines = ["I adopted a kitten called Miso", "my sister lives in Lisbon", "the dentist is on Monday",
             "we should try the ramen place", "Miso knocked over my tea", "Lisbon trip in June"]
    return [await e.record(Episode(place=SPACE, content=lines[i % len(lines)])) for i in range(n)]


async def test_endpoint_down_degrades_to_keywords_and_fills_in_later(
        fake_openai: FakeOpenAI, db_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    fake_openai.embed_status = 500
    e = await Engram.open(db_path, remote(fake_openai), background=False, query_timeout=10)
    try:
        ids = await record_chat(e)
        with pytest.raises(Exception, match="embedding endpoint failed"):
            await e.embed_pending()
        with caplog.at_level(logging.WARNING, logger="engram"):
            hits = await e.recall("kitten Miso", Audience(SPACE))
        assert "recall uses keywords only" in caplog.text
        assert hits and hits[0].text == "I adopted a kitten called Miso"
        assert hits[0].features["cos"] == 0.0
        assert [(await e.get_episode(i)).id for i in ids] == ids  # nothing lost

        fake_openai.embed_status = 200
        assert await e.embed_pending() == len(ids)
        assert (await e.stats())["indexed"] == len(ids)
        hits = await e.recall("kitten Miso", Audience(SPACE))
        assert "vec" in _routes(hits[0])
    finally:
        await e.close()


async def test_an_endpoint_failing_mid_way_keeps_the_batches_done_and_fills_in_the_rest(
        fake_openai: FakeOpenAI, db_path: Path) -> None:
    """Vectors are saved batch by batch with their cursor: a failure after the first batch keeps it,
    loses no line, and the next pass embeds only what is left."""
    e = await Engram.open(db_path, remote(fake_openai), background=False)
    try:
        ids = await record_chat(e, EMBED_BATCH + 8)
        fake_openai.embed_ok_left = 1  # the first batch is answered, the second gets HTTP 500
        with pytest.raises(Exception, match="embedding endpoint failed"):
            await e.embed_pending()
        assert (await e.stats())["indexed"] == EMBED_BATCH
        assert [(await e.get_episode(i)).id for i in ids] == ids  # nothing lost
        assert (await e.recall("dentist Monday", Audience(SPACE)))[0].text == "the dentist is on Monday"
        fake_openai.embed_ok_left = None
        sent = len(fake_openai.embed_requests())
        assert await e.embed_pending() == 8  # only the rest, not the first batch again
        assert (await e.stats())["indexed"] == len(ids)
        assert [len(b["input"]) for b in fake_openai.embed_requests()[sent:]] == [8]
    finally:
        await e.close()


async def test_background_indexer_survives_an_outage(
        fake_openai: FakeOpenAI, db_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    fake_openai.embed_status = 503
    caplog.set_level(logging.INFO, logger="engram")
    e = await Engram.open(db_path, remote(fake_openai), background=True)
    try:
        ids = await record_chat(e)
        await _until(lambda: "embedding failed (will retry" in caplog.text)
        assert (await e.stats())["indexed"] == 0
        fake_openai.embed_status = 200
        e.indexer.kick()  # a new message would do the same; the retry timer would too, only later
        await _until_async(lambda: _indexed(e), len(ids))
        # the indexer logs the recovery once its pass ends, which can be just after the vectors land
        await _until(lambda: "embedding works again" in caplog.text)
        assert (await e.stats())["episodes"] == len(ids)
    finally:
        await e.close()


async def test_wrong_dimension_degrades_to_keywords(
        fake_openai: FakeOpenAI, db_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    fake_openai.wrong_dim = 5
    e = await Engram.open(db_path, remote(fake_openai), background=False)
    try:
        ids = await record_chat(e)
        with pytest.raises(Exception, match="shape"):
            await e.embed_pending()
        with caplog.at_level(logging.WARNING, logger="engram"):
            hits = await e.recall("dentist Monday", Audience(SPACE))
        assert hits[0].text == "the dentist is on Monday"
        assert "recall uses keywords only" in caplog.text
        fake_openai.wrong_dim = None
        assert await e.embed_pending() == len(ids)
    finally:
        await e.close()


async def test_a_model_that_changes_dimension_is_noticed(
        fake_openai: FakeOpenAI, db_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """No dimension configured: the index learns 8 from the first answers, then the model changes."""
    e = await Engram.open(db_path, remote(fake_openai, dims=None), background=False)
    try:
        await record_chat(e)
        await e.embed_pending()
        fake_openai.wrong_dim = 5
        with caplog.at_level(logging.WARNING, logger="engram"):
            hits = await e.recall("dentist Monday", Audience(SPACE))
        assert hits[0].text == "the dentist is on Monday"
        assert "recall uses keywords only" in caplog.text
        await e.record(Episode(place=SPACE, content="one more"))
        with pytest.raises(Exception, match="shape"):
            await e.embed_pending()
        assert (await e.stats())["episodes"] == 7
    finally:
        await e.close()


def _routes(hit: object) -> set[str]:
    f = hit.features  # type: ignore[attr-defined]
    return ({"vec"} if f["cos"] > 0 else set()) | ({"kw"} if f["kw"] > 0 else set())


async def _indexed(e: Engram) -> int:
    return int((await e.stats())["indexed"])


async def _until(cond: object, timeout: float = 30.0) -> None:
    for _ in range(int(timeout / 0.05)):
        if cond():  # type: ignore[operator]
            return
        await asyncio.sleep(0.05)
    raise AssertionError("condition not reached in time")


async def _until_async(get: object, want: int, timeout: float = 30.0) -> None:
    for _ in range(int(timeout / 0.05)):
        if await get() == want:  # type: ignore[operator]
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"never reached {want}")


# ---- issue 28: broken emoji in meta, bad arguments, caps ------------------------------------------
async def test_a_broken_emoji_in_a_mentioned_name_keeps_the_message(engram: Engram) -> None:
    """A mention's name comes from the platform, which delivers broken emoji: the line was refused
    (and lost) because its meta held one; now it is recorded with the name cleaned like the text."""
    meta = {"mentions": [{"id": "qq:2", "name": "Zo\ud83de"}], "reply_to": {"actor": "qq:\udc00"},
            "k\ud83d": ["x\ud83d"]}
    eid = await engram.record(Episode(place=SPACE, content="hi @Zoe", actor="qq:1", meta=meta))
    ep = await engram.get_episode(eid)
    assert ep.content == "hi @Zoe"
    assert ep.meta == {"mentions": [{"id": "qq:2", "name": "Zo\ufffde"}], "reply_to": {"actor": "qq:\ufffd"},
                       "k\ufffd": ["x\ufffd"]}


class Utf8Embedder(HashEmbedder):
    """An embedder whose tokenizer takes UTF-8 only, as the bundled model's does (a lone surrogate
    raises ``UnicodeEncodeError`` there)."""

    async def embed(self, texts: list[str], kind: str = "passage") -> np.ndarray:
        for t in texts:
            t.encode("utf-8")
        return await super().embed(texts, kind)


async def test_recall_with_a_broken_emoji_answers_instead_of_failing(open_engram: EngramOpener) -> None:
    """The memory_recall tool given the model's "\\ud83d" answered "memory is unavailable": the
    query reached the embedder, and the place reached SQLite, with the lone surrogate in them."""
    engram = await open_engram(Utf8Embedder())
    await engram.record(Episode(place=SPACE, content="nice \ud83d shot"))
    await engram.embed_pending()
    assert await engram.recall("\ud83d", Audience(place="qq:\ud83d")) == []
    hits = await engram.recall("shot \ud83d", Audience(place=SPACE))
    assert [h.text for h in hits] == ["nice \ufffd shot"]


@pytest.mark.parametrize("call", [
    lambda e: e.recall("hi", None),
    lambda e: e.recall("hi", Audience(place=5)),  # type: ignore[arg-type]  # the wrong type is the test
    lambda e: e.forget_person(None), lambda e: e.forget_person(""), lambda e: e.forget_place(None),
    lambda e: e.forget(None), lambda e: e.forget_episodes("12"), lambda e: e.update("abc", "x"),
    lambda e: e.update(None, "x"), lambda e: e.get("abc"), lambda e: e.get_episode(None),
    lambda e: e.history("1"), lambda e: e.sources(None), lambda e: e.set_scope("1", "public"),
    lambda e: e.memories(["a"]), lambda e: e.episodes(None), lambda e: e.aliases(None),
    lambda e: e.names(None), lambda e: e.has_place(None), lambda e: e.list_memories(limit="x"),
    lambda e: e.list_memories(kind="gossip"), lambda e: e.list_memories(people="qq:1"),
    lambda e: e.place_stats(None),
], ids=lambda c: "")
async def test_every_public_function_refuses_bad_arguments_with_an_engram_error(engram: Engram, call) -> None:
    """They raised TypeError, AttributeError or UnicodeEncodeError, which the plugin answers with
    "memory is unavailable right now" (or not at all)."""
    await engram.record(Episode(place=SPACE, content="hello", actor="qq:1"))
    with pytest.raises(EngramError):
        await call(engram)
    assert [e.content for e in (await engram.episodes([1])).values()] == ["hello"]


@pytest.mark.parametrize("call", [
    lambda e: e.forget_person("\ud83d", dry_run=True), lambda e: e.forget_place("\ud83d", dry_run=True),
    lambda e: e.list_memories(scope="space:\ud83d"), lambda e: e.people_named_in("\ud83d", "\ud83d"),
    lambda e: e.names(["\ud83d"]), lambda e: e.last_time_with("\ud83d"), lambda e: e.has_place("\ud83d"),
], ids=lambda c: "")
async def test_a_broken_emoji_in_an_argument_is_never_a_crash(engram: Engram, call) -> None:
    try:
        await call(engram)
    except EngramError:
        pass  # "nothing is remembered of ..." is an answer too


async def test_ids_and_names_have_length_caps(engram: Engram) -> None:
    """A 20 MB place id was accepted. Ids longer than their cap are refused (never cut: two cut ids
    could become one); a display name is cut and the line kept."""
    for bad in (Episode(place="p" * (PLACE_CHARS + 1), content="x"),
                Episode(place=SPACE, content="x", actor="a" * (PERSON_CHARS + 1))):
        with pytest.raises(InvalidInputError, match="longer than"):
            await engram.record(bad)
    with pytest.raises(InvalidScopeError, match="at most"):
        await engram.add_memory(Memory(text="x", scope="space:" + "p" * (PLACE_CHARS + 1)))
    with pytest.raises(InvalidInputError, match="longer than"):
        await engram.add_memory(Memory(text="x", scope="public", subjects=("s" * (PERSON_CHARS + 1),)))
    with pytest.raises(InvalidInputError, match="longer than"):
        await engram.forget_place("p" * (PLACE_CHARS + 1))
    eid = await engram.record(Episode(place="p" * PLACE_CHARS, content="x", actor="a" * PERSON_CHARS,
                                      actor_name="n" * (STORED_NAME_CHARS * 4)))
    ep = await engram.get_episode(eid)
    assert (len(ep.place), len(ep.actor)) == (PLACE_CHARS, PERSON_CHARS)
    assert ep.actor_name == "n" * STORED_NAME_CHARS
    assert (await engram.stats())["episodes"] == 1
