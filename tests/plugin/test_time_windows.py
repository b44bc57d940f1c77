"""Relative dates in what the model asks (the ``memory_recall`` tool) count the bot's days, which end
at the diary's boundary hour (4 am by default): asked at 01:30, "yesterday" is the day before the
evening still going on; from 4 am on, it is the evening that just ended, past midnight included.

The plugin asks at the real current time, so each test gives the bot a zone in which the clock reads
the hour wanted now (a fixed offset), and dates the lines from that zone's midnight. Each pair of
lines says the same about the cat; only the time tells them apart.
"""

from __future__ import annotations

from datetime import datetime, time, timedelta, timezone

import pytest

from astrbot_plugin_engram.memory import Episode, NoEmbedder
from astrbot_plugin_engram.plugin.config import Settings
from astrbot_plugin_engram.plugin.service import EngramService
from astrbot_plugin_engram.plugin.tools import memory_recall

from .conftest import OWNER, MakeService, event

SPACE = "qq:private:alice"
TOY = {"en": "we talked about the cat and its new toy", "zh": "我们聊了猫和它的新玩具"}
VET = {"en": "we talked about the cat and the vet visit", "zh": "我们聊了猫去看兽医"}
YESTERDAY = {"en": "what did we say about the cat yesterday?", "zh": "昨天我们聊了猫什么"}


def zone_where_it_is(hour: int, minute: int) -> timezone:
    """A fixed-offset zone in which the clock reads ``hour:minute`` now."""
    now = datetime.now(timezone.utc)
    delta = (hour * 60 + minute - now.hour * 60 - now.minute) % 1440
    return timezone(timedelta(minutes=delta - 1440 if delta >= 720 else delta))


async def bot_at(make_service: MakeService, hour: int, minute: int, lines: dict[str, timedelta],
                 boundary_hour: int = 4) -> EngramService:
    """A plugin whose clock reads ``hour:minute``, remembering ``lines`` said at their offset from
    this night's midnight."""
    svc = make_service(Settings(owner_ids=(OWNER,), diary_boundary_hour=boundary_hour),
                       embedder=NoEmbedder())  # keywords only: no hash-vector noise in the order
    tz = svc.tz = zone_where_it_is(hour, minute)
    midnight = datetime.combine(datetime.now(tz).date(), time(0), tz)
    mem = await svc.memory()
    await mem.record_many([Episode(SPACE, text, "qq:alice", "Alice", time=midnight + at)
                           for text, at in lines.items()])
    await mem.embed_pending()
    return svc


async def first(svc: EngramService, query: str) -> str:
    """The first line the tool answers ``query`` with."""
    answer = await memory_recall(svc, event(query, "alice"), query, 3)
    return answer.splitlines()[1]


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_at_1_30_yesterday_is_the_day_before_the_evening_still_going_on(
        make_service: MakeService, lang: str) -> None:
    svc = await bot_at(make_service, 1, 30, {TOY[lang]: timedelta(hours=-27),  # 21:00 the day before
                                             VET[lang]: timedelta(hours=-3)})  # 21:00: the bot's today
    assert TOY[lang] in await first(svc, YESTERDAY[lang])


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_from_4_am_yesterday_is_the_evening_that_just_ended_past_midnight_included(
        make_service: MakeService, lang: str) -> None:
    svc = await bot_at(make_service, 4, 30, {TOY[lang]: timedelta(hours=-22),  # 02:00 the day before
                                             VET[lang]: timedelta(minutes=40)})  # 00:40 tonight
    assert VET[lang] in await first(svc, YESTERDAY[lang])


async def test_the_configured_boundary_hour_counts_for_the_windows_too(make_service: MakeService) -> None:
    """diary_boundary_hour 6: at 04:30 the evening before is still the bot's day, as for the diary."""
    svc = await bot_at(make_service, 4, 30, {TOY["en"]: timedelta(hours=-27), VET["en"]: timedelta(hours=-3)},
                       boundary_hour=6)
    assert TOY["en"] in await first(svc, YESTERDAY["en"])
