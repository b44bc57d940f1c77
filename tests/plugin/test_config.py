"""Config: parsed once into typed settings; a bad value names its key and keeps the default."""

from __future__ import annotations

import json
import logging
from dataclasses import fields
from pathlib import Path

import pytest

from astrbot_plugin_engram.plugin.config import Settings, parse_settings

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "_conf_schema.json").read_text("utf-8"))


def test_schema_and_settings_agree_on_keys_and_defaults() -> None:
    assert list(SCHEMA) == [f.name for f in fields(Settings)]
    parsed, errors = parse_settings({k: v["default"] for k, v in SCHEMA.items()})
    assert errors == [] and parsed == Settings()


def test_good_values_are_typed() -> None:
    s, errors = parse_settings({"owner_ids": ["42", 7], "recall_k": 12, "inject_mode": "system",
                                "blacklist_spaces": ["qq:group:9"], "embedding_provider_id": " e1 "})
    assert errors == []
    assert s.owner_ids == ("42", "7") and s.recall_k == 12 and s.inject_mode == "system"
    assert s.embedding_provider_id == "e1" and s.is_blacklisted("qq:group:9")
    s, errors = parse_settings({"database_url": " postgresql://engram:pw@db:5432/engram "})
    assert errors == [] and s.database_url == "postgresql://engram:pw@db:5432/engram"


@pytest.mark.parametrize("key, value", [
    ("recall_k", "ten"), ("recall_k", 0), ("recall_k", True), ("inject_budget_tokens", 10),
    ("inject_mode", "loud"), ("owner_ids", "alice"), ("owner_ids", [["x"]]), ("chat_provider_id", 5),
    # a hand-edited config file: a fraction, NaN, Infinity, a quoted boolean, a null list
    ("recall_k", 2.5), ("dashboard_port", float("nan")), ("dashboard_port", float("inf")),
    ("dashboard_enabled", "false"), ("blacklist_spaces", None),
    # the schema's hint said '(or just the id)'; a bare id was kept and silently never matched
    ("owner_private_spaces", ["qq:private:7", "777"]),
    # a mood is a word or two: a paragraph would drop out of every reply's block unsaid
    ("baseline_mood", "calm " * 20), ("baseline_mood", "  "),
    # a database the plugin cannot use: its SQLite file stays the memory
    ("database_url", "mysql://engram@db/engram"), ("database_url", "/var/lib/engram.db"),
])
def test_a_wrong_value_names_the_key_and_keeps_the_default(key: str, value: object,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, "engram.plugin"):
        s, errors = parse_settings({key: value, "public_spaces": ["g1"]})
    assert getattr(s, key) == getattr(Settings(), key)
    assert len(errors) == 1 and repr(key) in errors[0]
    assert repr(key) in caplog.text
    assert s.public_spaces == ("g1",)  # the good key next to it still counts


def test_consolidation_left_to_the_owner_alone_is_said_at_start(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, "engram.plugin"):
        parse_settings({"consolidate_every_minutes": 0, "consolidate_after_episodes": 30})
        assert "runs only when" not in caplog.text
        s, errors = parse_settings({"consolidate_every_minutes": 0, "consolidate_after_episodes": 0})
    assert errors == [] and "consolidation runs only when the owner sends /mem consolidate" in caplog.text


def test_missing_config_gives_defaults() -> None:
    assert parse_settings(None) == (Settings(), [])


def test_places_match_in_full_or_groups_by_id_and_owner_by_platform_and_id() -> None:
    s = Settings(owner_ids=("qq:42", "7"), blacklist_spaces=("123",), public_spaces=("tg:group:5",))
    assert s.is_blacklisted("qq:group:123") and not s.is_blacklisted("qq:group:1234")
    assert not s.is_blacklisted("qq:private:123")  # a person numbered 123 is not group 123
    assert s.is_public_place("tg:group:5") and not s.is_public_place("qq:group:5")
    assert s.is_owner("qq", "42", ["qq", "tg"]) and not s.is_owner("tg", "42", ["qq", "tg"])
    assert s.is_owner("tg", "7", ["tg", "webchat"])  # a bare id: the bot's one chat platform
    assert not s.is_owner("tg", "7", ["qq", "tg"])  # two platforms: which person 7 is unknown
    assert not s.is_owner("qq", "", ["qq"])
