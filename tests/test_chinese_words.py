"""Chinese text in the keyword index: Latin words against Chinese, traditional characters, emoji,
very long lines; and a store indexed before the fix (migration m006) answers as a new one does."""

from __future__ import annotations

import re
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from astrbot_plugin_engram.memory import Audience, Engram, Episode, Memory, NoEmbedder
from astrbot_plugin_engram.memory.text import words as text
from astrbot_plugin_engram.memory.text.words import query_words, words

T0 = datetime(2024, 3, 1, 9, 0, tzinfo=timezone.utc)


def test_a_latin_word_against_chinese_is_cut_out_and_the_chinese_after_it_kept() -> None:
    got = words("在元旦晚会上，Bart和同班同学们一起制作了彩纸灯笼")
    assert "bart" in got and {"同学", "彩纸", "灯笼"} <= set(got)
    assert {"iphon", "拍", "照片"} <= set(words("我用iPhone拍了照片"))  # English stems as ever
    assert set(words("和Tom一起去了KFC吃饭")) >= {"tom", "kfc", "吃饭"}
    assert all(not (re.search("[a-z0-9]", w) and re.search("[\u4e00-\u9fff]", w))
               for w in words("Bart和Tom在2023年5月去了Disney乐园，玩了3个小时")), "a token mixes scripts"


def test_traditional_characters_are_cut_and_match_themselves() -> None:
    got = words("我們昨天去台北的餐廳吃飯，Amy說很好吃")
    assert words("Amy")[0] in got and "餐廳" in got and "台北" in got
    assert set(query_words("餐廳好吃嗎")) & set(got)


def test_emoji_are_no_words_and_split_nothing() -> None:
    assert words("今天好开心😀去爬山了🏔️") == words("今天好开心 去爬山了")
    assert "爬山" in words("今天好开心😀去爬山了🏔️")
    assert words("yes👍好的Bart🎉") == words("yes 好的 Bart") == ["好", "bart"]
    assert words("😀🎉👍") == []


def test_a_very_long_line_gives_short_words() -> None:
    line = "Bart和小明周末去公园放风筝😀，Then we had ice cream在湖边。" * 400  # ~18k characters
    got = words(line)
    assert len(got) > 4000 and max(map(len, got)) <= 8
    assert {"bart", "风筝", "ice", "cream", "湖边"} <= set(got)


# ---- through the store -------------------------------------------------------------------------
LINES = ["在元旦晚会上，Bart和同学们一起制作了彩纸灯笼，感到非常开心。",
         "Bart和好朋友Tom参加了春季跳绳比赛，得到了第二名。",
         "我們昨天去台北的餐廳吃飯，Amy說很好吃😀",
         "The kite festival was fun, 风筝飞得很高",
         "Bart在学校的篮球比赛中表现出色"]
QUERIES = ["我们做了灯笼", "跳绳比赛是什么时候", "台北的餐廳", "风筝", "Bart 篮球", "Tom"]
SPACE = "qq:group:1"


async def build(path: Path) -> None:
    e = await Engram.open(path, NoEmbedder(), background=False)
    try:
        await e.record_many(Episode(place=SPACE, content=t, actor=f"qq:{n % 2}",
                                    actor_name=["Bart", "小明"][n % 2], time=T0 + timedelta(minutes=n))
                            for n, t in enumerate(LINES))
        await e.add_memory(Memory(text="Bart喜欢和Tom一起玩跳绳", scope=f"space:{SPACE}", kind="fact"))
        await e.add_memory(Memory(text="Amy住在台北", scope=f"space:{SPACE}", kind="fact"))
    finally:
        await e.close()


async def answers(path: Path) -> list[list[tuple[str, int, float]]]:
    e = await Engram.open(path, NoEmbedder(), background=False)
    try:
        return [[(h.kind, h.id, round(h.score, 9))
                 for h in await e.recall(q, Audience(SPACE), k=6, now=T0)] for q in QUERIES]
    finally:
        await e.close()


def index_rows(path: Path) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    with sqlite3.connect(path) as db:
        return (db.execute("SELECT rowid, words FROM episodes_fts ORDER BY rowid").fetchall(),
                db.execute("SELECT rowid, words FROM memories_fts ORDER BY rowid").fetchall())


async def test_a_chinese_word_after_a_latin_name_is_found(tmp_path: Path) -> None:
    await build(tmp_path / "new.db")
    found = await answers(tmp_path / "new.db")
    assert found[0][0][:2] == ("episode", 1)  # 灯笼, written right after "Bart和同学们"
    assert ("episode", 2) in [h[:2] for h in found[1]]  # 跳绳比赛, after "Tom"
    assert ("memory", 2) in [h[:2] for h in found[2]]  # 台北 in a memory, after "Amy住在"


OLD_RUNS = re.compile(rf"([{text._CJK}]+)|([^\W_]+)", re.UNICODE)  # before m006: Latin ran on into Chinese


async def test_an_old_store_migrates_and_answers_as_a_new_one(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    old, new = tmp_path / "old.db", tmp_path / "new.db"
    with monkeypatch.context() as m:  # the store as the code before m006 wrote it
        m.setattr(text, "_RUNS", OLD_RUNS)
        text.word_set.cache_clear()
        await build(old)
        before = await answers(old)
    text.word_set.cache_clear()
    with sqlite3.connect(old) as db:
        db.execute("DELETE FROM _migrations WHERE name = 'm006_latin_beside_chinese'")
    old_rows = index_rows(old)
    assert any("bart和" in w for _, w in old_rows[0])  # the old index: "bart和同学们一起制作了彩纸灯笼"
    await build(new)
    assert old_rows != index_rows(new)
    after = await answers(old)  # opening runs m006
    assert index_rows(old) == index_rows(new)
    assert after == await answers(new)
    assert after != before  # and the old store answered worse: 灯笼 was not found
    assert ("episode", 1) not in [h[:2] for h in before[0]]
    with sqlite3.connect(old) as db:
        assert db.execute("SELECT count(*) FROM _migrations WHERE name = 'm006_latin_beside_chinese'"
                          ).fetchone()[0] == 1


# ---- coverage against the pool's best: a question and a dialogue context mean the same ------------
def test_relative_coverage_is_the_same_for_a_short_question_and_a_long_context() -> None:
    from astrbot_plugin_engram.memory import RecallSettings
    from astrbot_plugin_engram.memory.recall.candidates import Pool
    from astrbot_plugin_engram.memory.recall.features import featurize
    from astrbot_plugin_engram.memory.recall.ranker import FeatureRanker, rank

    lines = ["Bart和Tom去公园放风筝", "Bart在学校打篮球", "妈妈做了红烧肉"]
    question = "放风筝的公园"
    context = ("我今天好无聊啊，不知道干什么\n要不要出去走走？天气很好\n"
               "对啊，上次去公园放风筝很好玩，那天风很大，我们还吃了冰淇淋，玩到天黑才回家")

    def feats(query: str) -> dict[int, dict[str, float]]:
        pool = Pool()
        for n, t in enumerate(lines, 1):
            pool.add_item(Episode(place="g", content=t, id=n, seq=n, section=n, time=T0), kw=1.0)
        f = featurize(pool, query, T0, RecallSettings())
        return {h.id: h.features for h in rank(f, FeatureRanker("kw"), len(lines))}

    short, long = feats(question), feats(context)
    assert long[1]["cov"] < short[1]["cov"]  # the long context shares a smaller part of its words
    assert short[1]["cov_rel"] == long[1]["cov_rel"] == 1.0  # both: the best line of the pool
    assert short[3]["cov_rel"] == long[3]["cov_rel"] == 0.0
    every = [*short.values(), *long.values()]
    assert all(0.0 <= f["cov_rel"] <= 1.0 and 0.0 <= f["wcov_rel"] <= 1.0 for f in every)
