"""What a new user reaches for in the core: remembering a thing once, listing memories, erasing a line."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from astrbot_plugin_engram.memory import (
    Audience,
    Engram,
    Episode,
    InvalidInputError,
    Memory,
    NoEmbedder,
    UnknownIdError,
    place_scope,
    visibility,
)
from astrbot_plugin_engram.memory.metabolism.dedup import remember, similarity

SPACE = "webchat:private:sam"
HERE = place_scope(SPACE)


async def test_the_same_sentence_remembered_three_times_is_kept_once(engram: Engram) -> None:
    said = "Sam's cat is called Mochi."
    results = [await remember(engram, Memory(text=t, scope=HERE))
               for t in (said, said, "sam's cat is called Mochi")]
    assert [r[1] for r in results] == ["new", "kept", "kept"]
    assert len({r[0] for r in results}) == 1
    await engram.embed_pending()
    hits = await engram.recall("Sam's cat", Audience(SPACE), k=10)
    assert [h.key for h in hits if h.kind == "memory"] == [f"m{results[0][0]}"]


async def test_a_fuller_wording_updates_the_memory_and_keeps_the_old_version(engram: Engram) -> None:
    first, _ = await remember(engram, Memory(text="Sam's cat is called Mochi", scope=HERE))
    second, how = await remember(engram, Memory(text="Sam's cat is called Mochi!!, a grey one", scope=HERE))
    assert similarity("Sam's cat is called Mochi", "Sam's cat is called Mochi, a grey one") < 0.85
    assert how == "new" and second != first  # different enough: a memory of its own
    third, how = await remember(engram, Memory(text="Sam's cat is called Mochii", scope=HERE))
    assert how == "updated" and [m.id for m in await engram.history(third)] == [first, third]
    assert (await engram.get(first)).status == "superseded"


async def test_a_different_number_is_a_different_memory(engram: Engram) -> None:
    a, _ = await remember(engram, Memory(text="The gate code is 4417", scope=HERE))
    b, how = await remember(engram, Memory(text="The gate code is 4418", scope=HERE))
    assert how == "new" and a != b


async def test_the_same_sentence_in_another_scope_is_a_memory_of_its_own(engram: Engram) -> None:
    a, _ = await remember(engram, Memory(text="The gate code is 4417", scope=HERE))
    elsewhere = place_scope("webchat:group:1")
    b, how = await remember(engram, Memory(text="The gate code is 4417", scope=elsewhere))
    assert how == "new" and a != b


async def test_list_memories_pages_newest_first_and_only_what_the_chat_may_see(engram: Engram) -> None:
    ids = [await engram.add_memory(Memory(text=f"note {i}", scope=HERE, kind="fact" if i % 2 else "event",
                                          subjects=("webchat:sam",) if i == 3 else ()))
           for i in range(5)]
    await engram.add_memory(Memory(text="a secret elsewhere", scope=place_scope("webchat:group:9")))
    vis = visibility(Audience(SPACE))
    page, total = await engram.store.list_memories(vis, limit=2)
    assert total == 5 and [m.id for m in page] == ids[:-3:-1]
    page, _ = await engram.store.list_memories(vis, limit=2, offset=4)
    assert [m.id for m in page] == [ids[0]]
    facts, n = await engram.store.list_memories(vis, kind="fact")
    assert n == 2 and {m.id for m in facts} == {ids[1], ids[3]}
    about, n = await engram.store.list_memories(vis, people=["webchat:sam"])
    assert n == 1 and about[0].id == ids[3]


async def test_forgetting_an_episode_erases_it_from_the_file_and_every_index(engram: Engram,
                                                                              db_path: Path) -> None:
    eps = [Episode(place=SPACE, content=t, actor="webchat:sam") for t in
           ("my bank locker is 8080 zanzibar", "the weather is nice", "zanzibar is an island")]
    ids = await engram.record_many(eps)
    await engram.embed_pending()
    assert ids[0] in {h.id for h in await engram.recall("locker zanzibar", Audience(SPACE), k=5)}
    assert (await engram.forget_episodes([ids[0]])).episodes == [ids[0]]
    hits = await engram.recall("bank locker 8080 zanzibar", Audience(SPACE), k=5)
    assert ids[0] not in {h.id for h in hits} and ids[2] in {h.id for h in hits}
    assert all("8080" not in h.text for h in hits)
    with pytest.raises(UnknownIdError):
        await engram.get_episode(ids[0])
    with pytest.raises(UnknownIdError):
        await engram.forget_episodes([ids[0]])
    with sqlite3.connect(db_path) as db:
        for sql in ("SELECT count(*) FROM episodes WHERE id = ?",
                    "SELECT count(*) FROM episodes_fts WHERE rowid = ?",
                    "SELECT count(*) FROM vectors WHERE kind = 'e' AND item = ?"):
            assert db.execute(sql, (ids[0],)).fetchone()[0] == 0, sql
    assert engram.indexes.episodes.near([ids[1]], 2) == [ids[1], ids[2]]  # no longer anyone's neighbour


async def test_forgetting_a_line_takes_the_memories_drawn_from_it_and_no_other(engram: Engram) -> None:
    ids = await engram.record_many([Episode(place=SPACE, content=t, actor="webchat:sam") for t in
                                    ("my bank locker is 8080", "I like green tea")])
    pin = await engram.add_memory(Memory(text="Sam's bank pin is 8080", scope=HERE, sources=(ids[0],)))
    both = await engram.add_memory(Memory(text="Sam banks and drinks tea", scope=HERE, sources=tuple(ids)))
    tea = await engram.add_memory(Memory(text="Sam likes green tea", scope=HERE, sources=(ids[1],)))
    would = await engram.forget_episodes([ids[0]], dry_run=True)
    assert would.memories == sorted([pin, both]) and (await engram.get(pin)).text  # a dry run erases nothing
    done = await engram.forget_episodes([ids[0]])
    assert done.episodes == [ids[0]] and done.memories == sorted([pin, both])
    for gone in (pin, both):
        with pytest.raises(UnknownIdError):
            await engram.get(gone)
    assert (await engram.get(tea)).text == "Sam likes green tea"
    assert (await engram.get_episode(ids[1])).content == "I like green tea"


async def test_forgetting_no_line_or_a_bad_id_is_refused_and_erases_nothing(engram: Engram) -> None:
    ids = await engram.record_many([Episode(place=SPACE, content="keep me", actor="webchat:sam")])
    for bad in ([], ["1"], [True]):
        with pytest.raises(InvalidInputError):
            await engram.forget_episodes(bad)  # type: ignore[arg-type]
    with pytest.raises(UnknownIdError):
        await engram.forget_episodes([ids[0], ids[0] + 1])  # one unknown: nothing at all goes
    assert (await engram.get_episode(ids[0])).content == "keep me"


async def test_a_forgotten_episode_stays_gone_after_reopening(db_path: Path) -> None:
    e = await Engram.open(db_path, NoEmbedder(), background=False)
    try:
        ids = await e.record_many([Episode(place=SPACE, content="erase me: zanzibar")])
        await e.forget_episodes(ids)
    finally:
        await e.close()
    e = await Engram.open(db_path, NoEmbedder(), background=False)
    try:
        assert await e.recall("zanzibar", Audience(SPACE)) == []
    finally:
        await e.close()
