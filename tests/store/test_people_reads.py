"""``PeopleReads``: every name a person went by, and the one each place knows them by.
Run on every backend (``conftest.BACKENDS``)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from astrbot_plugin_engram.memory import Episode
from astrbot_plugin_engram.memory.store import Store

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=timezone(timedelta(hours=8)))
A, B = "qq:group:1", "qq:group:2"


def ep(text: str, place: str = A, minutes: float = 0, **kw: object) -> Episode:
    return Episode(place=place, content=text, time=T0 + timedelta(minutes=minutes), **kw)  # type: ignore[arg-type]


async def test_aliases_of_a_person_most_recent_first(store: Store) -> None:
    async with store.transaction() as tx:
        await tx.add_episodes([ep("hi", actor="qq:1", actor_name="Alice"),
                               ep("hi again", minutes=5, actor="qq:1", actor_name="Ally")])
    assert await store.aliases("qq:1") == ["Ally", "Alice"]


async def test_each_place_knows_the_name_a_person_last_went_by_there(store: Store) -> None:
    async with store.transaction() as tx:
        await tx.add_episodes([ep("hi", A, actor="qq:1", actor_name="Ann"),
                               ep("yo", B, 1, actor="qq:1", actor_name="Annie"),
                               ep("hey", A, 2, actor="qq:2", actor_name="Bo")])
    async with store.transaction() as tx:
        await tx.add_episodes([ep("back", A, 3, actor="qq:1", actor_name="Ann (away)")])
    assert await store.names_in_place(A, ["qq:1", "qq:2", "qq:3"]) == {"qq:1": "Ann (away)", "qq:2": "Bo"}
    assert await store.names_in_place(B, ["qq:1", "qq:2"]) == {"qq:1": "Annie"}  # not A's names
    assert await store.names_in_place(A, []) == {}
    assert await store.people_named_in(B, " annie ") == ["qq:1"]
    assert await store.people_named_in(A, "Annie") == []  # a name from another place
    assert await store.people_named("Annie") == ["qq:1"]  # ... which people_named still knows
    assert sorted(await store.people_mentioned_in(A, "I saw bo and ANN (AWAY) today")) == ["qq:1", "qq:2"]
    assert await store.people_mentioned_in(A, "Annie was there, and a bonbon") == []  # B's name; not a word


async def test_a_batch_out_of_time_order_keeps_names_as_one_line_at_a_time(store: Store) -> None:
    """A person seen several times in one batch, not in time order and under the same name twice:
    the batch leaves the names as writing its lines one by one would (the PostgreSQL store writes a
    batch's names in one statement)."""
    async with store.transaction() as tx:
        await tx.add_episodes([ep("a", minutes=10, actor="qq:1", actor_name="Ann"),
                               ep("b", minutes=5, actor="qq:1", actor_name="Annie"),
                               ep("c", minutes=20, actor="qq:1", actor_name="Ann"),
                               ep("d", minutes=20, actor="qq:1", actor_name="Anna"),
                               ep("e", minutes=1, actor="qq:1", actor_name="Ann")])
    at = {m: (T0 + timedelta(minutes=m)).timestamp() for m in (5, 10, 20)}
    assert await store.alias_rows() == [("qq:1", "Ann", at[10], at[20]), ("qq:1", "Anna", at[20], at[20]),
                                        ("qq:1", "Annie", at[5], at[5])]
    assert await store.place_name_rows() == [(A, "qq:1", "Anna", at[20])]  # the last seen latest
    async with store.transaction() as tx:  # an earlier sighting later on changes neither
        await tx.add_episodes([ep("f", minutes=2, actor="qq:1", actor_name="Ann")])
    assert (await store.alias_rows())[0] == ("qq:1", "Ann", at[10], at[20])
    assert await store.place_name_rows() == [(A, "qq:1", "Anna", at[20])]
