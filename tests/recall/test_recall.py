"""Recall as a user notices it: what is found, what is lifted, what never leaks across a break."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from astrbot_plugin_engram.memory import (
    Audience,
    Engram,
    Episode,
    FeatureRanker,
    LinearRanker,
    Memory,
    RecallSettings,
    place_scope,
)
from astrbot_plugin_engram.memory.recall.candidates import Columns, gather_candidates
from astrbot_plugin_engram.memory.recall.features import COLUMNS
from astrbot_plugin_engram.memory.recall.training import fit_logistic, fit_pairwise
from astrbot_plugin_engram.memory.scopes import visibility

SPACE = "qq:group:1"
T0 = datetime(2024, 5, 3, 18, 0, tzinfo=timezone.utc)
FILLER = [
    "The weather was grey all day.",
    "My sister bought a new bicycle.",
    "Dinner was pasta with tomatoes.",
    "The cat slept on the sofa again.",
]


async def chat(e: Engram, lines: list[str], start: datetime = T0, place: str = SPACE,
               meta: dict | None = None) -> list[int]:
    """Record ``lines`` as consecutive turns one minute apart; returns their ids."""
    eps = [Episode(place=place, content=t, actor=f"u{i % 2}", actor_name=("Ann", "Bob")[i % 2],
                   time=start + timedelta(minutes=i), meta=dict(meta or {}) if i == 0 else {})
           for i, t in enumerate(lines)]
    return await e.record_many(eps)


async def test_keyword_finds_the_matching_turn(keyword_engram: Engram) -> None:
    ids = await chat(keyword_engram, [*FILLER, "I adopted a puppy named Biscuit."])
    hits = await keyword_engram.recall("the puppy Biscuit", Audience(SPACE))
    assert hits[0].id == ids[-1]


async def test_stemming_finds_other_forms(keyword_engram: Engram) -> None:
    ids = await chat(keyword_engram, [*FILLER, "We hiked up the mountain on Sunday."])
    hits = await keyword_engram.recall("hiking", Audience(SPACE))
    assert hits[0].id == ids[-1] and hits[0].features["kw"] > 0
    assert all(h.features["kw"] == 0 for h in hits[1:])  # the rest are only its neighbours


async def test_question_words_do_not_match(keyword_engram: Engram) -> None:
    await chat(keyword_engram, ["What a day! When will this end? Who knows."])
    assert await keyword_engram.recall("what when who", Audience(SPACE)) == []


async def test_chinese_query_finds_chinese_text(keyword_engram: Engram) -> None:
    lines = ["今天天气不错。", "我上周末和朋友去爬山了，风景很美。", "晚饭吃了饺子。"]
    ids = await chat(keyword_engram, lines)
    hits = await keyword_engram.recall("你还记得我去爬山的事吗", Audience(SPACE))
    assert hits[0].id == ids[1]


async def test_answer_after_a_matching_question_is_lifted(keyword_engram: Engram) -> None:
    ids = await chat(keyword_engram, [*FILLER, "Where did you spend the summer holiday?",
                                      "We went to Lisbon with the kids.", *FILLER])
    hits = await keyword_engram.recall("summer holiday", Audience(SPACE), k=3)
    answer = hits[0]  # it shares no word with the query, yet beats the question itself
    assert answer.id == ids[5] and answer.features["kw"] == 0 and answer.features["after_question"] > 0
    assert hits[1].id == ids[4]
    other = (await keyword_engram.recall("summer holiday", Audience(SPACE), k=10))
    assert ids[3] in [h.id for h in other][2:]  # the turn before the question is not lifted as much


async def test_neighbours_stop_at_a_long_silence(keyword_engram: Engram) -> None:
    ids = await chat(keyword_engram, ["Where did you spend the summer holiday?"])
    later = await chat(keyword_engram, ["We went to Lisbon with the kids."], start=T0 + timedelta(hours=5))
    hits = await keyword_engram.recall("summer holiday", Audience(SPACE))
    assert [h.id for h in hits] == ids and later[0] not in [h.id for h in hits]


async def test_neighbours_stop_at_an_explicit_section_break(keyword_engram: Engram) -> None:
    ids = await chat(keyword_engram, ["Where did you spend the summer holiday?"])
    later = await chat(keyword_engram, ["We went to Lisbon with the kids."],
                       start=T0 + timedelta(minutes=1), meta={"section_break": True})
    hits = await keyword_engram.recall("summer holiday", Audience(SPACE))
    assert [h.id for h in hits] == ids and later[0] not in [h.id for h in hits]


async def test_a_named_month_prefers_that_month(keyword_engram: Engram) -> None:
    may = await chat(keyword_engram, ["We painted the fence blue."])
    july = await chat(keyword_engram, ["We painted the fence green."], start=T0 + timedelta(days=60))
    hits = await keyword_engram.recall("Which fence did we paint in May?", Audience(SPACE))
    assert hits[0].id == may[0] and hits[0].features["date_match"] == 1.0
    hits = await keyword_engram.recall("Which fence did we paint in July?", Audience(SPACE))
    assert hits[0].id == july[0]


async def test_every_hit_carries_features_and_its_score(engram: Engram) -> None:
    await chat(engram, [*FILLER, "I adopted a puppy named Biscuit."])
    await engram.add_memory(Memory(text="Ann has a puppy called Biscuit", scope=f"space:{SPACE}"))
    await engram.embed_pending()
    hits = await engram.recall("puppy Biscuit", Audience(SPACE))
    assert {h.kind for h in hits} == {"episode", "memory"}
    for h in hits:
        assert set(COLUMNS) <= set(h.features)
        assert h.score == engram.ranker.score([h.features])[0]
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


async def test_swapping_the_ranker_changes_the_order(engram: Engram) -> None:
    await chat(engram, ["puppy", "I adopted a puppy named Biscuit last week and he loves the park."])
    await engram.embed_pending()
    engram.ranker = LinearRanker({"length": 1.0})
    longest_first = [h.id for h in await engram.recall("puppy", Audience(SPACE))]
    engram.ranker = LinearRanker({"length": -1.0})
    shortest_first = [h.id for h in await engram.recall("puppy", Audience(SPACE))]
    assert shortest_first == longest_first[::-1] and len(shortest_first) == 2


async def test_keyword_only_ranker_ranks_by_bm25(keyword_engram: Engram) -> None:
    ids = await chat(keyword_engram, ["Where did you spend the summer holiday?",
                                      "We went to Lisbon with the kids."])
    keyword_engram.ranker = FeatureRanker("kw")
    hits = await keyword_engram.recall("summer holiday", Audience(SPACE))
    assert hits[0].id == ids[0] and hits[1].score == 0.0


def test_fitted_weights_learn_which_feature_marks_the_answer() -> None:
    queries = [([{"kw": 0.9, "length": 0.1}, {"kw": 0.5, "length": 0.9}, {"kw": 0.7, "length": 0.2}],
                [False, True, False]),
               ([{"kw": 0.2, "length": 0.8}, {"kw": 1.0, "length": 0.3}], [True, False])]
    w = fit_pairwise(queries, ["kw", "length"])
    assert w["length"] > 0 > w["kw"]
    ranker = LinearRanker(w, 0.0)
    for rows, relevant in queries:
        scores = ranker.score(rows)
        assert scores.index(max(scores)) == relevant.index(True)
    weights, _ = fit_logistic([r for rows, _ in queries for r in rows],
                              [float(x) for _, rel in queries for x in rel], ["kw", "length"])
    assert weights["length"] > 0


async def test_the_words_each_candidate_holds_come_from_the_index_as_from_its_text(
        keyword_engram: Engram) -> None:
    # Recall tells which query words each candidate holds from the words' postings, not its text.
    tz8 = timezone(timedelta(hours=8))  # 2024-12-01 02:00 here is still November in UTC
    lines = [*FILLER, "我们去杭州看了西湖，天气很好", "Did you go hiking in Hangzhou?",
             "Yes, we hiked near the lake with Ann", "See you again in December!"]
    await chat(keyword_engram, lines, start=datetime(2024, 12, 1, 2, 0, tzinfo=tz8))
    for text in ("Ann went hiking by West Lake in December", "安妮的猫叫咪咪，很喜欢西湖", "Bob hikes",
                 "the 2024 photo album"):
        await keyword_engram.add_memory(Memory(text, "public"))
    q = "hiking 西湖 Ann Hangzhou December 2024"
    store = keyword_engram.store
    pool = await gather_candidates(store, keyword_engram.indexes, q, None, visibility(Audience(SPACE)),
                                   RecallSettings(), False)
    assert pool.cols is not None and len(pool) == len(lines) + 4  # the chat (by its month word), the memories
    eps = await store.get_episodes([i for k, i in zip(pool.kinds, pool.ids) if k == "e"])
    mems = await store.get_memories([i for k, i in zip(pool.kinds, pool.ids) if k == "m"])
    items = [eps[i] if k == "e" else mems[i] for k, i in zip(pool.kinds, pool.ids)]
    again = Columns.of_items(items, pool.cols.words)  # tokenised again
    assert pool.cols.words == again.words and (pool.cols.found == again.found).all()
    december = pool.cols.words.index("decemb")
    held = {it.content if isinstance(it, Episode) else it.text
            for it, yes in zip(items, pool.cols.found[december]) if yes}
    # the other episodes are indexed under December only by their date, and under 2024 likewise
    assert held == {"See you again in December!", "Ann went hiking by West Lake in December"}
    year = pool.cols.words.index("2024")
    assert [it for it, yes in zip(items, pool.cols.found[year]) if yes] == [
        m for m in mems.values() if m.text == "the 2024 photo album"]
    assert pool.cols.found.any(axis=1).all()  # every query word is held by some candidate


async def test_a_recalled_memory_comes_with_its_sources(keyword_engram: Engram) -> None:
    ids = await chat(keyword_engram, [*FILLER, "I moved to Lisbon last spring", "Lisbon is lovely"])
    mid = await keyword_engram.add_memory(Memory("Ann moved to Lisbon", place_scope(SPACE),
                                                 sources=(ids[-2], ids[-1])))
    hits = await keyword_engram.recall("Lisbon move", Audience(SPACE), k=5)
    mem = next(h for h in hits if h.kind == "memory")
    assert mem.id == mid and mem.item.sources == (ids[-2], ids[-1])  # type: ignore[union-attr]
