"""The leak check of what every chat may read: people talked about in private places, not only speakers."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest

from astrbot_plugin_engram.memory import SELF, Episode, person_names
from astrbot_plugin_engram.memory.chinese_names import chinese_names
from astrbot_plugin_engram.memory.leaks import leaks, private_details
from astrbot_plugin_engram.memory.person_names import english_names

PRIVATE, GROUP, PUBLIC = "qq:private:2", "qq:group:7", "qq:group:9"


def details(*lines: tuple[str, str], known: str = "") -> object:
    episodes = [Episode(space, text, "qq:2", "Alice") for space, text in lines]
    return private_details(episodes, {}, lambda space: space == PUBLIC, known=known)


def refused(text: str, *lines: tuple[str, str], known: str = "") -> list[str]:
    return leaks(text, details(*lines, known=known))  # type: ignore[arg-type]


@pytest.mark.parametrize("shared", ["I have been worried about Mei lately.", "Mei's news weighs on me.",
                                    "Mei has been on my mind."])
def test_a_third_party_named_in_a_private_chat_is_refused(shared: str) -> None:
    said = (PRIVATE, "my sister Mei was diagnosed with cancer last week")
    assert refused(shared, said) == ["name 'Mei'"]
    assert refused("I have been worried about someone dear lately.", said) == []


def test_a_chinese_third_party_named_in_a_private_chat_is_refused() -> None:
    said = (PRIVATE, "我妹妹小美上周确诊了")
    assert refused("最近一直挂念小美", said) == ["name '小美'"]
    assert refused("最近一直挂念一位朋友", said) == []


@pytest.mark.parametrize("line, name", [("我妹妹小美上周确诊了", "小美"), ("王磊明天来找我", "王磊"),
                                        ("林晓说她要搬家", "林晓"), ("阿明今天好像不开心", "阿明"),
                                        ("我昨天和小美吃饭", "小美")])
def test_typical_chinese_names_are_found(line: str, name: str) -> None:
    assert name in chinese_names(line)


def test_ordinary_chinese_words_jieba_tags_as_names_are_not_names() -> None:
    # jieba's dictionary tags these as person names; a self-image may well use them
    assert chinese_names("谢谢你，我明白了，这里很安静，我珍惜我们的友谊，祝福你") == set()


def test_an_at_mention_in_a_private_chat_is_a_name_in_any_case() -> None:
    said = (PRIVATE, "@meiling are you coming tonight?")
    assert refused("I hope Meiling is well.", said) == ["name 'meiling'"]
    assert refused("我想念@小美", (PRIVATE, "@小美 你在吗")) == ["name '小美'"]


def test_a_mention_recorded_with_the_line_is_a_name_but_the_bot_itself_is_not() -> None:
    line = Episode(PRIVATE, "look at this", "qq:2", "Alice",
                   meta={"mentions": [{"id": "qq:5", "name": "Mei"}, {"id": SELF, "name": "Aria"}]})
    d = private_details([line], {}, lambda space: False)
    assert leaks("thinking of mei", d) == ["name 'mei'"] and leaks("I am Aria", d) == []


def test_a_name_also_said_in_a_public_group_or_the_core_identity_is_not_private() -> None:
    said = [(PRIVATE, "we watched a video of Taylor Swift with Aria"), (PUBLIC, "Taylor Swift is touring")]
    assert refused("I enjoy Taylor Swift's songs.", *said, known="You are Aria.") == []
    assert refused("I enjoy Taylor Swift's songs.", said[0], known="You are Aria.") == ["name 'Swift'",
                                                                                        "name 'Taylor'"]
    # a group that is not listed public is as private as a private chat
    assert refused("I think of Mei.", (GROUP, "did you hear about Mei?"), (PUBLIC, "hello")) == ["name 'Mei'"]


def test_ordinary_capitalised_words_are_no_names() -> None:
    said = [(PRIVATE, "I read One Hundred Days on Saturday, then we did Yoga in December with Dr Lee"),
            (PRIVATE, "one more thing, I speak English and Chinese"), (PRIVATE, "I will ask Will")]
    for shared in ["One thing I love is a slow Saturday.", "I enjoy Saturdays, yoga and December evenings.",
                   "English and Chinese both feel like home.", "I will keep learning."]:
        assert refused(shared, *said) == [], shared
    # the same words written capitalised in the middle of a sentence, or a name never written in lower case
    assert refused("I keep thinking of Will.", *said) == ["name 'Will'"]
    assert refused("I enjoy Yoga.", *said) == ["name 'Yoga'"]
    assert refused("Lee was kind.", *said) == ["name 'Lee'"]


def test_a_capitalised_word_only_at_the_start_of_a_sentence_is_no_name() -> None:
    assert english_names("Mei is sick. Tomorrow we go. \"Really\" she said") == set()
    assert english_names("I told my sister Mei and 小林 about my iPhone and #Travel") == {"Mei"}
    assert english_names("我和Mei去了公园") == {"Mei"}


def test_the_speakers_and_facts_are_still_refused() -> None:
    said = (PRIVATE, "my door code is 4417, water the plants please")
    assert refused("I am the friend Alice trusts.", said) == ["name 'alice'"]
    assert refused("I keep the code 4417.", said) == ["number '4417'"]


def test_the_tagger_runs_apart_and_leaves_no_tables_in_the_bot(tmp_path: Path) -> None:
    # a fresh interpreter, as the bot is: the check finds the name, and jieba's tagger (~50 MB once
    # imported, ~150 MB loaded) was never imported here
    code = ("import sys\n"
            "from astrbot_plugin_engram.memory import Episode\n"
            "from astrbot_plugin_engram.memory.leaks import leaks, private_details\n"
            "d = private_details([Episode('qq:private:2', '我妹妹小美上周确诊了', 'qq:2', 'Alice')], {},"
            " lambda s: False)\n"
            "print(leaks('最近一直挂念小美', d), 'jieba.posseg' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          cwd=tmp_path)
    assert done.stdout.split("\n")[-2] == "[\"name '小美'\"] False"


@pytest.mark.parametrize("child", ["missing", "crashes", "garbles"])
def test_without_a_child_process_the_names_are_found_here(child: str, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    script = tmp_path / "tagger.py"
    if child == "missing":
        monkeypatch.setattr(sys, "executable", str(tmp_path / "no-python"))
    else:
        script.write_text("import sys; sys.exit(3)" if child == "crashes" else "print('[1, 2, 3]')")
        monkeypatch.setattr(person_names._zh, "__file__", str(script))
    with caplog.at_level(logging.WARNING, "engram.leaks"):
        found = person_names.chinese_names_apart(["我昨天和小美吃饭", "hello"])
    assert found == [chinese_names("我昨天和小美吃饭"), set()] and "小美" in found[0]
    assert "looked for in this process" in caplog.text


def test_the_child_process_finds_what_this_process_would() -> None:
    lines = ["我妹妹小美上周确诊了", "王磊明天来找我", "林晓说她要搬家", "谢谢你，我明白了", "no Chinese", ""]
    assert person_names.chinese_names_apart(lines) == [chinese_names(line) for line in lines]


def test_no_child_process_starts_for_text_without_chinese(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(subprocess, "run", None)  # would raise TypeError if called
    assert person_names.chinese_names_apart(["I think of Mei", ""]) == [set(), set()]
