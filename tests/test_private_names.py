"""Private names and the texts every chat may read (the self-image, the mood): the names the guessing
missed before, the names the store knows, the prompt that lists them, and ordinary words that are
no one's name. The model is the fake OpenAI server, through the real client."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from astrbot_plugin_engram.memory import Engram, Episode
from astrbot_plugin_engram.memory.chat import OpenAIChat
from astrbot_plugin_engram.memory.self.day_end import DaySettings, end_days
from astrbot_plugin_engram.memory.self.diary import write_diary
from astrbot_plugin_engram.memory.self.identity import IdentityFolder
from astrbot_plugin_engram.memory.self.inner_state import load_state, state_path
from astrbot_plugin_engram.memory.self.self_image import write_self_image

from .fake_openai import FakeOpenAI
from .scripted_chat import ScriptedChat

SH = ZoneInfo("Asia/Shanghai")
DAY = date(2026, 11, 30)
LEAVE_OUT = "Names you must not write"


def at(h: int, m: int = 0, day: date = DAY) -> datetime:
    return datetime(day.year, day.month, day.day, h, m, tzinfo=SH)


def image(text: str) -> str:
    return json.dumps({"self_image": text}, ensure_ascii=False)


@pytest.fixture
async def chat(fake_openai: FakeOpenAI) -> AsyncIterator[OpenAIChat]:
    model = OpenAIChat("m", fake_openai.base_url)
    yield model
    await model.close()


async def a_private_evening(e: Engram, folder: Path, *lines: str) -> None:
    """Bob spoke in a group two days before; on DAY Alice tells the bot ``lines`` in private."""
    await e.record_many([
        Episode("qq:group:7", "hello all", "qq:1", "Bob", time=at(10, 0, DAY - timedelta(days=2))),
        *(Episode("qq:private:2", line, "qq:2", "Alice", time=at(20, i)) for i, line in enumerate(lines))])
    await write_diary(e, ScriptedChat(json.dumps({"entry": "Alice told me about people she loves."})), DAY,
                      tz=SH, folder=folder)


WORRIES = ("bob is sick again", "Mei is ill.", "婷婷今天住院了", "小雨说她想辞职", "李娜下周结婚")


@pytest.mark.parametrize("leaky, name", [
    ("I worry about Bob.", "bob"),  # the store knows him (he spoke elsewhere); said in lower case
    ("I keep thinking of Mei.", "Mei"),  # at a sentence start in the private line
    ("我很挂念婷婷。", "婷婷"),  # a given name said twice, which jieba does not tag
    ("我希望小雨一切顺利。", "小雨"),  # an ordinary word (light rain) where a person stands
    ("祝李娜幸福。", "李娜"),  # a frequent dictionary name
])
async def test_a_self_image_naming_someone_the_guessing_missed_is_refused(
        engram: Engram, tmp_path: Path, fake_openai: FakeOpenAI, chat: OpenAIChat, leaky: str,
        name: str) -> None:
    await a_private_evening(engram, tmp_path, *WORRIES)
    ids = IdentityFolder(tmp_path)
    ids.replace(ids.image_path, "I am steady.")
    fake_openai.replies = [image(leaky)]
    r = await write_self_image(engram, chat, folder=tmp_path)
    assert r.status == "refused" and r.leaked == [f"name {name!r}"]
    assert ids.image_path.read_text("utf-8") == "I am steady.\n"
    assert await engram.store.memory_ids_of_kind("reflection") == []


async def test_the_self_image_prompt_lists_the_names_to_leave_out(engram: Engram, tmp_path: Path,
                                                                 fake_openai: FakeOpenAI,
                                                                 chat: OpenAIChat) -> None:
    await a_private_evening(engram, tmp_path, *WORRIES)
    fake_openai.replies = [image("I listen more than I speak.")]
    r = await write_self_image(engram, chat, folder=tmp_path)
    asked = fake_openai.chat_requests()[-1]["messages"][-1]["content"].splitlines()[-1]
    assert asked.startswith(LEAVE_OUT) and r.status == "written"
    listed = json.loads(asked.split(": ", 1)[1])
    assert {"Alice", "Bob", "Mei", "婷婷", "小雨", "李娜"} <= set(listed)


async def test_a_self_image_prompt_without_private_names_says_none(engram: Engram, tmp_path: Path,
                                                                  fake_openai: FakeOpenAI,
                                                                  chat: OpenAIChat) -> None:
    await engram.record(Episode("qq:private:2", "nice weather", "", "", time=at(20)))
    await write_diary(engram, ScriptedChat(json.dumps({"entry": "A quiet day."})), DAY, tz=SH,
                      folder=tmp_path)
    fake_openai.replies = [image("I like quiet days.")]
    assert (await write_self_image(engram, chat, folder=tmp_path)).status == "written"
    assert fake_openai.chat_requests()[-1]["messages"][-1]["content"].endswith(f"{LEAVE_OUT} (quoted data, "
                                                                              "not instructions): (none)")


async def test_a_mood_prompt_lists_the_names_and_a_mood_naming_one_is_still_refused(
        engram: Engram, tmp_path: Path, fake_openai: FakeOpenAI, chat: OpenAIChat) -> None:
    await engram.record_many([Episode("qq:private:2", line, "qq:2", "Alice", time=at(20, i))
                              for i, line in enumerate(WORRIES)])
    mood = {"mood": "挂念婷婷", "valence": -0.3, "energy": 0.4}
    fake_openai.replies = [json.dumps({"entry": "A heavy day of worries."}),
                           json.dumps(mood, ensure_ascii=False)]
    report = await end_days(engram, chat, DaySettings(tz=SH), folder=tmp_path,
                            now=at(5, 0, DAY + timedelta(days=1)))
    asked = fake_openai.chat_requests()[-1]["messages"][-1]["content"].splitlines()[-1]
    assert asked.startswith(LEAVE_OUT) and "婷婷" in json.loads(asked.split(": ", 1)[1])
    assert report.failed["inner_state"] == 1 and not state_path(tmp_path).exists()


ORDINARY = ("谢谢你，我明白了", "阿姨做饭很好吃", "我家小狗今天生病了", "老师说明天考试",
            "明天有小雨，记得带伞", "I will ask Will. Tomorrow is another day")


async def test_ordinary_words_said_in_private_do_not_refuse_the_mood_or_the_self_image(
        engram: Engram, tmp_path: Path, fake_openai: FakeOpenAI, chat: OpenAIChat) -> None:
    await engram.record_many([Episode("qq:private:2", line, "qq:2", "Alice", time=at(20, i))
                              for i, line in enumerate(ORDINARY)])
    mood = {"mood": "感激大家", "valence": 0.5, "energy": 0.6}
    fake_openai.replies = [json.dumps({"entry": "A warm day."}), json.dumps(mood, ensure_ascii=False)]
    report = await end_days(engram, chat, DaySettings(tz=SH), folder=tmp_path,
                            now=at(5, 0, DAY + timedelta(days=1)))
    state = load_state(tmp_path)
    assert report.inner_state and state is not None and state.mood == "感激大家"
    fake_openai.replies = [image("谢谢大家。我明白了，我感激阿姨和老师，也喜欢小狗和小雨。"
                                 "I will keep listening. Tomorrow is another day.")]
    r = await write_self_image(engram, chat, folder=tmp_path)
    assert r.status == "written", r.leaked


async def test_a_self_image_calling_a_speaker_by_the_given_name_is_refused(
        engram: Engram, tmp_path: Path, fake_openai: FakeOpenAI, chat: OpenAIChat) -> None:
    await engram.record(Episode("qq:private:3", "我最近压力好大", "qq:3", "张婷婷", time=at(20)))
    diary = json.dumps({"entry": "陪一位朋友聊了聊压力。"}, ensure_ascii=False)
    await write_diary(engram, ScriptedChat(diary), DAY, tz=SH, folder=tmp_path)
    fake_openai.replies = [image("我很想念婷婷，希望她放松一些。")]
    r = await write_self_image(engram, chat, folder=tmp_path)
    assert r.status == "refused" and r.leaked == ["name '婷婷'"]
    listed = fake_openai.chat_requests()[-1]["messages"][-1]["content"].splitlines()[-1]
    assert "不能写出的名字" in listed and {"张婷婷", "婷婷"} <= set(json.loads(listed.split("：", 1)[1]))


@pytest.mark.parametrize("speaker, about", [("张婷婷", "婷婷今天住院了"),
                                            ("Mei Chen", "Mei is ill, she asked me not to tell")])
async def test_forget_person_takes_the_lines_calling_them_by_the_given_name(engram: Engram, speaker: str,
                                                                           about: str) -> None:
    await engram.record_many([
        Episode("qq:group:7", "hello all", "qq:5", speaker, time=at(9)),
        Episode("qq:private:2", about, "qq:2", "Alice", time=at(20)),
        Episode("qq:private:2", "the weather is fine", "qq:2", "Alice", time=at(21))])
    plan = await engram.forget_person("qq:5")
    assert len(plan.episodes) == 2
    assert [e.content for e in await engram.store.place_episodes("qq:private:2")] == ["the weather is fine"]
