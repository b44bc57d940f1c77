"""Place lists and owner ids in AstrBot's words (``/sid``'s UMO) and in Engram's (issue 28)."""

from __future__ import annotations

from astrbot_plugin_engram.plugin.config import Settings
from astrbot_plugin_engram.plugin.place_lists import read_in_both

TYPES = {"qq": "aiocqhttp", "webchat": "webchat", "tg-main": "telegram"}


def test_a_place_as_sid_shows_it_is_read_as_engram_names_it() -> None:
    s, unmatched = read_in_both(Settings(blacklist_spaces=("qq:GroupMessage:g5", "tg-main:FriendMessage:9"),
                                         public_spaces=("777", "telegram:group:1", "qq:group:3"),
                                         owner_private_spaces=("qq:FriendMessage:42",)), TYPES)
    assert unmatched == []
    assert s.is_blacklisted("aiocqhttp:group:g5") and s.is_blacklisted("telegram:private:9")
    assert not s.is_blacklisted("aiocqhttp:group:g6") and not s.is_blacklisted("aiocqhttp:private:g5")
    assert s.is_public_place("x:group:777") and s.is_public_place("telegram:group:1")
    assert s.is_public_place("aiocqhttp:group:3")  # Engram's form with the platform's id
    assert s.is_owner_private_place("aiocqhttp:private:42")


def test_owner_ids_as_sid_shows_them() -> None:
    owners = ("qq:FriendMessage:42", "tg-main:7", "aiocqhttp:5")
    s, unmatched = read_in_both(Settings(owner_ids=owners), TYPES)
    assert unmatched == []
    assert s.is_owner("aiocqhttp", "42") and s.is_owner("telegram", "7") and s.is_owner("aiocqhttp", "5")
    assert not s.is_owner("telegram", "42")


def test_an_entry_that_matches_no_place_is_named() -> None:
    s, unmatched = read_in_both(Settings(blacklist_spaces=("discord:GroupMessage:1", "qq:Channel:5", "a:b"),
                                         public_spaces=("slack:group:1", "qq:GroupMessage:"),
                                         owner_ids=("qq:GroupMessage:42", "line:9")), TYPES)
    assert unmatched == ["blacklist_spaces: discord:GroupMessage:1", "blacklist_spaces: qq:Channel:5",
                         "blacklist_spaces: a:b", "public_spaces: slack:group:1",
                         "public_spaces: qq:GroupMessage:",
                         "owner_ids: qq:GroupMessage:42", "owner_ids: line:9"]
    assert s.blacklist_spaces[:2] == ("discord:GroupMessage:1", "qq:Channel:5")  # kept as written


def test_before_the_platforms_are_loaded_only_unknown_forms_are_named() -> None:
    _, unmatched = read_in_both(Settings(blacklist_spaces=("discord:GroupMessage:1", "qq:Channel:5")), {})
    assert unmatched == ["blacklist_spaces: qq:Channel:5"]


def test_the_default_public_place_is_astrbots_own_chat_page() -> None:
    """The default ``web`` matched no place: webchat's is ``webchat:private:astrbot``."""
    s, unmatched = read_in_both(Settings(), TYPES)
    assert unmatched == [] and s.is_public_place("webchat:private:astrbot")
    assert not Settings().is_public_place("web")
