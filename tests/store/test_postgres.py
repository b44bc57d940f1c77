"""The PostgreSQL store against the SQLite one (issue 33): the same keyword words and per-place BM25
statistics, the same recall, and ``migrate-to`` copying a SQLite store whole (recall the same before
and after). The role-by-role contract is the rest of ``tests/store/``, run on both backends."""

from __future__ import annotations

import asyncio
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from astrbot_plugin_engram.memory import Audience, Engram, Episode, Memory, StoreError
from astrbot_plugin_engram.memory.cli.main import main

from ..conftest import HashEmbedder

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=timezone(timedelta(hours=8)))
LINES = [
    ("qq:group:1", "qq:1", "小明", "我们周末去北京的咖啡馆吧，Bart和同学们一起"),
    ("qq:group:1", "qq:2", "Ann", "Running late, the runners were running in Berlin again"),
    ("qq:group:1", "qq:1", "小明", "咖啡 咖啡 咖啡 and more coffee coffee"),
    ("qq:group:2", "qq:3", "Bob", "my birthday is on March 3rd, remember it"),
    ("qq:group:2", "qq:2", "Ann", "北京的天气怎么样？"),
    ("qq:private:1", "qq:1", "小明", "the secret salary is 9000 咖啡"),
    ("qq:group:1", "qq:2", "Ann", "ok"),
    ("qq:group:2", "qq:3", "Bob", "Bart said the coffee in Berlin was better"),
]
MEMORIES = [("Ann runs in Berlin every Sunday", "space:qq:group:1"), ("小明喜欢北京的咖啡", "public"),
            ("Bob's birthday is March 3rd", "space:qq:group:2"), ("the owner's salary is private", "owner")]
QUERIES = ["coffee in Berlin", "咖啡 北京", "birthday", "running", "salary 咖啡", "Bart 同学"]
AUDIENCES = [Audience("qq:group:1"), Audience("qq:group:2"), Audience("qq:private:1"),
             Audience.owner_console()]


async def fill(e: Engram) -> None:
    for n, (place, actor, name, text) in enumerate(LINES):
        await e.record(Episode(place=place, content=text, actor=actor, actor_name=name,
                               time=T0 + timedelta(minutes=n)))
    for text, scope in MEMORIES:
        await e.add_memory(Memory(text=text, scope=scope, created_at=T0))
    await e.embed_pending()


async def answers(e: Engram) -> list[list[tuple[str, float]]]:
    return [[(h.key, round(h.score, 6)) for h in await e.recall(q, a, k=10)]
            for q in QUERIES for a in AUDIENCES]


async def keyword_state(e: Engram) -> tuple[Any, ...]:
    """Every keyword row's group and length, and every word's postings per place and in all places."""
    s = e.store
    eps = [tuple(r) for r in await s.episode_keyword_rows(0, 1000)]
    mems = [tuple(r) for r in await s.memory_keyword_rows(0, 1000)]
    words = sorted({w for ws in (await s.episode_index_words([r[0] for r in eps])).values() for w in ws})
    keys = sorted((await s.keyed_places()).keys())
    per_place = [[p.tolist() for p in (await s.episode_postings(words, [k])).lists] for k in keys]
    anywhere = await s.episode_postings(words, None)
    memory_words = ["ann", "berlin", "咖啡", "北京", "birthday", "salary", "march"]
    return (eps, mems, words, per_place, [p.tolist() for p in anywhere.lists], anywhere.exact,
            [p.tolist() for p in await s.memory_postings(memory_words)])


async def test_the_keyword_index_and_recall_come_out_the_same(postgres_server: Any, tmp_path: Path) -> None:
    sqlite = await Engram.open(tmp_path / "s.db", HashEmbedder(dim=16), background=False)
    postgres = await Engram.open(postgres_server.fresh_database(), HashEmbedder(dim=16), background=False,
                                 folder=tmp_path)
    try:
        await fill(sqlite)
        await fill(postgres)
        state = await keyword_state(sqlite)
        assert state[0] and state[2] and any(state[3])  # not vacuous: rows, words, postings
        assert await keyword_state(postgres) == state
        assert await answers(postgres) == await answers(sqlite)
    finally:
        await sqlite.close()
        await postgres.close()


def test_migrate_to_copies_a_sqlite_store_whole(postgres_server: Any, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    db, url = tmp_path / "engram.db", postgres_server.fresh_database()

    async def before() -> None:
        e = await Engram.open(db, HashEmbedder(dim=16), background=False)
        try:
            await fill(e)
            old = await e.store.all_versions([1])
            await e.update(old[0], "Ann runs in Berlin every Saturday now")  # a version superseded
            await e.forget_person("qq:3")  # an erase: ids past it are never given again
        finally:
            await e.close()

    async def after(where: str | Path) -> tuple[Any, ...]:
        e = await Engram.open(where, HashEmbedder(dim=16), background=False, folder=tmp_path)
        try:
            found = await answers(e), await e.counts(), await e.store.cursors("")
            next_id = await e.record(Episode(place="qq:group:1", content="a new line", time=T0))
            return (*found, next_id)
        finally:
            await e.close()

    asyncio.run(before())
    shutil.copyfile(db, tmp_path / "copy.db")  # recall strengthens what it finds: each side from one state
    expected = asyncio.run(after(tmp_path / "copy.db"))[:3]
    assert main(["--db", str(db), "migrate-to", "--to", url]) == 0
    assert "copied" in capsys.readouterr().out
    moved = asyncio.run(after(url))
    for got, want in zip(moved[:3], expected):
        assert got == want
    assert moved[3] == len(LINES) + 1  # past every line, the erased last one (8) too
    # into a database that is not empty: refused, nothing touched
    assert main(["--db", str(db), "migrate-to", "--to", url]) == 2
    assert "not empty" in capsys.readouterr().err


async def test_a_postgres_url_that_answers_nothing_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="cannot open") as e:
        await Engram.open("postgresql://engram:hunter2@127.0.0.1:1/none", HashEmbedder(dim=16),
                          folder=tmp_path)
    assert "hunter2" not in str(e.value)


async def test_a_connection_the_server_dropped_is_opened_again(postgres_server: Any, tmp_path: Path) -> None:
    """A server restart or a network cut: the next read and the next write connect again (not failing
    until the plugin is reloaded)."""
    import psycopg

    url = postgres_server.fresh_database()
    e = await Engram.open(url, HashEmbedder(dim=16), background=False, folder=tmp_path)
    try:
        await e.record(Episode(place="qq:group:1", content="the kettle is descaled", time=T0))
        with psycopg.connect(url, autocommit=True) as admin:  # every other backend on this database
            admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                          " WHERE datname = current_database() AND pid != pg_backend_pid()")
        hits = await e.recall("kettle descaled", Audience("qq:group:1"))
        assert [h.text for h in hits] == ["the kettle is descaled"]
        assert await e.record(Episode(place="qq:group:1", content="and the oven", time=T0)) == 2
    finally:
        await e.close()


def test_the_command_line_records_and_recalls_in_postgres(postgres_server: Any, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    url = postgres_server.fresh_database()
    monkeypatch.chdir(tmp_path)
    base = ["--db", url, "--embedder", "none"]
    assert main([*base, "record", "the lighthouse keeper is called Ferdinand", "--place", "qq:group:5"]) == 0
    assert main([*base, "recall", "lighthouse keeper", "--place", "qq:group:5"]) == 0
    assert "Ferdinand" in capsys.readouterr().out
    assert main([*base, "recall", "lighthouse keeper", "--place", "qq:group:6"]) == 0
    assert "Ferdinand" not in capsys.readouterr().out
    assert main([*base, "backup"]) == 0  # without --folder: into the working directory's backups/
    assert "backed up to" in capsys.readouterr().out and len(list((tmp_path / "backups").glob("*.db"))) == 1


async def test_a_writer_numbers_lines_after_another_instances_it_has_followed(postgres_server: Any,
                                                                              tmp_path: Path) -> None:
    """Each instance keeps each place's last sequence number between its transactions; another
    instance's lines (followed by the log's poll, not at a transaction's start) and its forgetting
    of the place are seen before the next line is numbered."""
    from astrbot_plugin_engram.memory import open_store

    url = postgres_server.fresh_database()
    a, b = await open_store(url, folder=tmp_path), await open_store(url, folder=tmp_path)
    line = [Episode(place="qq:group:1", content=f"line {i}", time=T0 + timedelta(minutes=i))
            for i in range(6)]
    try:
        async with a.transaction() as tx:
            ids = await tx.add_episodes(line[:2])
        async with b.transaction() as tx:
            ids += await tx.add_episodes(line[2:3])
        async with a.writing.lock:  # type: ignore[attr-defined]
            await a.following.catch_up()  # type: ignore[attr-defined]  # as its poll does
        async with a.transaction() as tx:
            ids += await tx.add_episodes(line[3:4])
        assert [e.seq for e in (await a.get_episodes(ids)).values()] == [1, 2, 3, 4]
        async with b.transaction() as tx:
            await tx.erase(ids, [], places=["qq:group:1"])
        async with a.transaction() as tx:
            new = await tx.add_episodes(line[4:5])
        assert (await a.get_episodes(new))[new[0]].seq == 1 and new[0] > ids[-1]
        key = await a.place_key("qq:group:1")
        assert key is not None and [r.group for r in await a.episode_keyword_rows(0, 0, new)] == [key]
    finally:
        await a.close()
        await b.close()


async def test_the_postings_cache_follows_this_instances_commits_and_sees_the_others(
        postgres_server: Any, tmp_path: Path) -> None:
    """Recent doclists are kept between recalls (``store/postgres/postings_cache``): after this instance's
    own commit they are followed, not read again; another instance's commit, a forget and a batch
    past the doclist cap give what a read from the tables gives."""
    from astrbot_plugin_engram.memory import open_store
    from astrbot_plugin_engram.memory.store import DOCLIST_CAP
    from astrbot_plugin_engram.memory.text.words import query_words

    url = postgres_server.fresh_database()
    a, b = await open_store(url, folder=tmp_path), await open_store(url, folder=tmp_path)
    place, words = "qq:group:1", query_words("apple pie nothing")

    def line(text: str, i: int = 0) -> Episode:
        return Episode(place=place, content=text, time=T0 + timedelta(seconds=i))

    async def same_as_the_tables() -> list[list[int]]:
        assert key is not None
        got = [x.tolist() for x in (await a.episode_postings(words, [key])).lists]
        table = await a.recall._uncached("episode_words", words, "AND p.key = %s", [key])  # type: ignore[attr-defined]
        assert got == [x.tolist() for x in table]
        return got

    try:
        async with a.transaction() as tx:
            first = await tx.add_episodes([line("apple pie"), line("apple tart", 1)])
        key = await a.place_key(place)
        assert key is not None
        assert await same_as_the_tables() == [first, first[:1], []]
        cache = a.recall.postings  # type: ignore[attr-defined]
        async with a.transaction() as tx:
            mine = await tx.add_episodes([line("apple crumble", 2)])
        hits = cache.hits
        assert (await same_as_the_tables())[0] == first + mine
        assert cache.hits == hits + len(words)  # followed: every word from the cache
        async with b.transaction() as tx:
            theirs = await tx.add_episodes([line("pie chart", 3)])
        assert (await same_as_the_tables())[1] == first[:1] + theirs
        async with a.transaction() as tx:
            await tx.erase(first[:1], [])
        assert (await same_as_the_tables())[:2] == [first[1:] + mine, theirs]
        async with a.transaction() as tx:
            many = await tx.add_episodes([line(f"apple {i}", 10 + i) for i in range(DOCLIST_CAP + 5)])
        assert (await same_as_the_tables())[0] == many[-(DOCLIST_CAP + 1):]
        assert (await a.memory_postings(words))[0].tolist() == []
        async with a.transaction() as tx:
            mid = await tx.add_memory(Memory(text="likes apple pie", scope="public"))
        assert (await a.memory_postings(words))[0].tolist() == [mid]
    finally:
        await a.close()
        await b.close()
