"""Recall prefers what happened inside the window a query names, counted against event time."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from astrbot_plugin_engram.memory import Audience, Engram, Episode, NoEmbedder, RecallSettings

SH = ZoneInfo("Asia/Shanghai")
NOW = datetime(2023, 5, 3, 10, 0, tzinfo=SH)  # a Wednesday
LINES = [  # the same topic on several days; only the time tells them apart
    (NOW - timedelta(days=1), "we talked about the cat and its new toy"),
    (NOW - timedelta(days=4), "we talked about the cat and the vet visit"),
    (NOW - timedelta(days=10), "we talked about the cat and its food"),
    (NOW - timedelta(days=1), "我们聊了猫和它的新玩具"),
    (NOW - timedelta(days=3), "我们聊了猫去看兽医"),
    (NOW - timedelta(days=40), "我们聊了猫的猫粮"),
]


async def _store(path: Path, windows: bool) -> Engram:
    e = await Engram.open(path, NoEmbedder(), background=False,  # keywords only: no hash-vector noise
                          settings=RecallSettings(time_windows=windows, tz=SH))
    if not (await e.stats())["episodes"]:
        await e.record_many([Episode("web" if text.isascii() else "zh", text, "web:1", "Ann", time=t)
                             for t, text in LINES])
        await e.embed_pending()
    return e


async def _top(e: Engram, query: str) -> str:
    hits = await e.recall(query, Audience("web" if query.isascii() else "zh"), k=3, now=NOW)
    return hits[0].text


async def test_relative_days_pick_the_right_day(db_path: Path) -> None:
    e = await _store(db_path, True)
    try:
        assert "vet" in await _top(e, "what did we say about the cat four days ago?")
        assert "new toy" in await _top(e, "the cat yesterday")
        assert "兽医" in await _top(e, "三天前我们聊了猫")
        assert "新玩具" in await _top(e, "昨天我们聊了猫")
        assert "猫粮" in await _top(e, "三月份我们聊了猫")
        hit = (await e.recall("the cat yesterday", Audience("web"), k=1, now=NOW))[0]
        assert hit.features["in_window"] == 1.0
    finally:
        await e.close()


async def test_without_the_time_feature_nothing_is_in_a_window(db_path: Path) -> None:
    e = await _store(db_path, False)
    try:
        hits = await e.recall("what did we say about the cat four days ago?", Audience("web"), k=6, now=NOW)
        assert all(h.features["in_window"] == 0.0 for h in hits)
        # the same store and queries as above: without the window the wrong days come first
        assert "vet" not in await _top(e, "what did we say about the cat four days ago?")
        assert "猫粮" not in await _top(e, "三月份我们聊了猫")
    finally:
        await e.close()


async def test_a_month_named_is_the_bots_month_for_lines_stored_in_utc(db_path: Path) -> None:
    """Before the plugin kept the bot's zone, episodes were stored with UTC's offset: a line said at
    07:00 on June 1 in Shanghai was May 31 there, and "in June 2024" matched it as May (date_match 0,
    and ranked below a line of May). Months are counted on the bot's calendar now; a line stored
    in the bot's zone matches as before."""
    old_style = datetime(2024, 6, 1, 7, 0, tzinfo=SH).astimezone(ZoneInfo("UTC"))  # 2024-05-31 23:00 UTC
    e = await Engram.open(db_path, NoEmbedder(), background=False,
                          settings=RecallSettings(tz=SH))
    try:
        await e.record_many([
            Episode("web", "we talked about moving to a new flat", "web:1", "Ann", time=old_style),
            Episode("web", "we talked about moving and the flat's rent", "web:1", "Ann",
                    time=datetime(2024, 5, 20, 12, 0, tzinfo=SH)),
            Episode("web", "we talked about moving the flat's piano", "web:1", "Ann",
                    time=datetime(2024, 6, 30, 23, 30, tzinfo=SH)),  # new style, at the other edge
        ])
        hits = await e.recall("what did we say about moving flat in June 2024?", Audience("web"), k=3,
                              now=datetime(2024, 8, 1, tzinfo=SH))
        by_text = {h.text: h.features["date_match"] for h in hits}
        assert by_text == {"we talked about moving to a new flat": 1.0,
                           "we talked about moving and the flat's rent": 0.0,
                           "we talked about moving the flat's piano": 1.0}, by_text
        assert "rent" not in hits[0].text and "rent" in hits[2].text
    finally:
        await e.close()
