"""Events to episodes and audiences: places, people, mentions, replies, images, odd events."""

from __future__ import annotations

from astrbot.api.platform import AstrMessageEvent

from astrbot_plugin_engram.memory import SELF
from astrbot_plugin_engram.plugin.config import Settings
from astrbot_plugin_engram.plugin.events import (
    IMAGE_TEXT,
    audience_of,
    incoming_episodes,
    is_engram_command,
    parse_message,
    place_of,
)

from .conftest import OWNER, SELF_ID, At, Image, Plain, Reply, event


def episodes_of(ev: object) -> list:
    return incoming_episodes(ev, parse_message(ev))


def test_group_message_names_place_person_mentions_and_reply() -> None:
    ev = event("see you at 5", "u1", "g7", name="Alice", timestamp=1_700_000_000, components=[
        Reply(id="99", sender_id=SELF_ID), At(qq="u2", name="Bob"), At(qq=SELF_ID), Plain("see you at 5")])
    [ep] = episodes_of(ev)
    assert (ep.place, ep.actor, ep.actor_name, ep.kind) == ("qq:group:g7", "qq:u1", "Alice", "message_in")
    assert ep.content == "see you at 5" and ep.time.timestamp() == 1_700_000_000
    assert ep.meta["mentions"] == [{"id": "qq:u2", "name": "Bob"}, {"id": SELF, "name": ""}]
    assert ep.meta["reply_to"] == {"message_id": "99", "actor": SELF}


def test_a_groups_name_comes_with_its_lines_and_a_private_chat_has_none() -> None:
    """The platform's name of a group (QQ gives it with each message) names the place on the
    dashboard, instead of its number."""
    [ep] = episodes_of(event("hi", "u1", "g7", group_name=" 读书会 \n"))
    assert ep.place_title == "读书会"
    [ep] = episodes_of(event("hi", "u1", "g7"))
    assert ep.place_title == ""
    [ep] = episodes_of(event("hi", "u1"))
    assert ep.place_title == ""


def test_private_message_is_the_senders_private_place() -> None:
    [ep] = episodes_of(event("hi", "u1", platform="telegram"))
    assert (ep.place, ep.actor) == ("telegram:private:u1", "telegram:u1")


def test_image_only_message_is_an_image_episode() -> None:
    [ep] = episodes_of(event("", "u1", "g1", components=[Image(file="http://x/cat.png")]))
    assert ep.kind == "image" and ep.content == IMAGE_TEXT and ep.meta["image"] == "http://x/cat.png"


def test_text_with_image_gives_the_text_then_the_image() -> None:
    eps = episodes_of(event("look", "u1", components=[Plain("look"), Image(file="a.png")]))
    assert [(e.kind, e.content) for e in eps] == [("message_in", "look"), ("image", IMAGE_TEXT)]


def test_stickers_and_blank_messages_give_nothing() -> None:
    assert episodes_of(event("   ", "u1", "g1")) == []
    assert episodes_of(event("", "u1", components=[At(qq="u2")])) == []


def test_missing_sender_and_group_ids_fall_back_without_crashing() -> None:
    [ep] = episodes_of(event("hello", None, ""))
    assert ep.place == "qq:group:unknown" and ep.actor == "qq:unknown"
    assert place_of(event("hello", None)) == "qq:private:unknown"


def woken(ev: AstrMessageEvent) -> AstrMessageEvent:
    ev.is_at_or_wake_command = True  # what AstrBot's waking stage sets for a DM, an @ or a prefix
    return ev


def test_engram_commands_are_recognised_and_conversation_is_not() -> None:
    assert is_engram_command(woken(event("mem stats"))) and is_engram_command(event("/mem  recall tea"))
    assert is_engram_command(woken(event("mem")))
    assert not is_engram_command(woken(event("memories are nice")))
    assert not is_engram_command(woken(event("hi mem")))
    assert not is_engram_command(event("mem stats", "u1", "g1"))  # a group line not addressed to the bot


def test_owner_private_only_for_the_owner_in_a_private_chat() -> None:
    s = Settings(owner_ids=(OWNER,), owner_private_spaces=("web:private:boss",))
    assert audience_of(event("x", OWNER), s, ["qq"]).owner_private
    assert not audience_of(event("x", OWNER, "g1"), s, ["qq"]).owner_private
    assert not audience_of(event("x", "alice"), s, ["qq"]).owner_private
    assert audience_of(event("x", "boss", platform="web"), s, ["qq"]).owner_private


def test_audience_has_the_sender_and_the_people_mentioned() -> None:
    ev = event("hey", "u1", "g1", components=[At(qq="u2"), At(qq=SELF_ID), Plain("hey")])
    assert audience_of(ev, Settings()).people == ("qq:u1", "qq:u2")


def test_a_platform_clock_ahead_of_the_servers_is_taken_as_now() -> None:
    """The platform stamps messages 10 minutes ahead of this server's clock: the message used to be
    kept 10 minutes in the future, so the bot's reply (stamped on the server's clock) came before the
    question it answered, in the diary's and consolidation's transcripts and in /mem episodes."""
    import time
    from datetime import datetime, timezone

    from astrbot_plugin_engram.plugin.events import reply_episode

    before = datetime.now(timezone.utc)
    [ep] = episodes_of(event("what time is it?", "u1", "g7", timestamp=int(time.time()) + 600))
    reply = reply_episode(event("what time is it?", "u1", "g7"), "almost noon")
    assert reply is not None and before <= ep.time <= reply.time
