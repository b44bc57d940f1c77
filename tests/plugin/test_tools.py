"""The model's tools: arguments checked, answers scoped to the chat, scopes never widened."""

from __future__ import annotations

import pytest

from astrbot_plugin_engram.memory import Memory
from astrbot_plugin_engram.plugin.config import Settings
from astrbot_plugin_engram.plugin.service import EngramService
from astrbot_plugin_engram.plugin.tools import memory_recall, memory_remember

from .conftest import MakeService, event


@pytest.mark.parametrize("query, limit, error", [
    (5, 3, "error: query must be a string, not int"),
    ("", 3, "error: query must not be empty"),
    (None, 3, "error: query must not be empty"),
    ("tea", "many", "error: limit must be a whole number from 1 to 20, not 'many'"),
    ("tea", 0, "error: limit must be from 1 to 20, not 0"),
    ("tea", 2.5, "error: limit must be a whole number from 1 to 20, not 2.5"),
    ("tea", True, "error: limit must be a whole number from 1 to 20, not True"),
    # a model's JSON may hold NaN or Infinity (Python's json reads both), or digits int() refuses
    ("tea", float("nan"), "error: limit must be a whole number from 1 to 20, not nan"),
    ("tea", float("inf"), "error: limit must be a whole number from 1 to 20, not inf"),
    ("tea", "\u00b2", "error: limit must be a whole number from 1 to 20, not '\u00b2'"),
    ("tea", 10**40, f"error: limit must be from 1 to 20, not {10**40}"),
])
async def test_recall_rejects_wrong_arguments_readably(service: EngramService, query: object, limit: object,
                                                       error: str) -> None:
    assert await memory_recall(service, event("x", "alice"), query, limit) == error


async def test_recall_returns_only_what_this_chat_may_see(service: EngramService) -> None:
    engram = await service.memory()
    await engram.add_memory(Memory("Alice's tea is oolong", "space:qq:private:alice"))
    await engram.add_memory(Memory("The group's tea is puer", "space:qq:group:g1"))
    in_group = await memory_recall(service, event("x", "alice", "g1"), "tea", "5")
    in_private = await memory_recall(service, event("x", "alice"), "tea", None)
    assert "puer" in in_group and "oolong" not in in_group
    assert "oolong" in in_private and "puer" not in in_private
    assert await memory_recall(service, event("x", "bob"), "tea", 5) == "No memories found for 'tea'."


async def test_remember_keeps_it_in_this_chat(service: EngramService) -> None:
    reply = await memory_remember(service, event("x", "alice"), "Alice is allergic to nuts", "the user")
    assert reply == "Remembered (m1); it will come up in this chat."
    m = await (await service.memory()).get(1)
    assert (m.scope, m.subjects) == ("space:qq:private:alice", ("qq:alice",))


async def test_only_a_public_place_makes_a_memory_about_no_one_public(make_service: MakeService) -> None:
    svc = make_service(Settings(public_spaces=("g1",)))
    engram = await svc.memory()
    await memory_remember(svc, event("x", "alice", "g1"), "The club meets on Mondays", "")
    await memory_remember(svc, event("x", "alice", "g1"), "Bob failed his exam", "Bob")
    await memory_remember(svc, event("x", "alice", "g2"), "Chess is fun", "nobody")
    assert [(await engram.get(i)).scope for i in (1, 2, 3)] == [
        "public", "space:qq:group:g1", "space:qq:group:g2"]


async def test_in_a_public_place_a_memory_naming_someone_seen_there_is_not_made_public(
        make_service: MakeService) -> None:
    """In a public place the model's "about no one" was trusted: a note about a member, the `about`
    left out, became public and came up in every chat."""
    svc = make_service(Settings(public_spaces=("g1",)))
    for text, sender, name in [("hi", "bob", "Bob"), ("hello", "al", "Al"), ("嗨", "li", "李雷")]:
        svc.record_message(event(text, sender, "g1", name=name))
    await svc.flush()
    engram = await svc.memory()
    for text in ("Bob failed his exam", "听说李雷要搬家了", "Also the club meets on Mondays"):
        await memory_remember(svc, event("x", "alice", "g1"), text, "")
    m1, m2, m3 = [await engram.get(i) for i in (1, 2, 3)]
    assert (m1.scope, m1.subjects) == ("space:qq:group:g1", ("qq:bob",))
    assert (m2.scope, m2.subjects) == ("space:qq:group:g1", ("qq:li",))
    assert (m3.scope, m3.subjects) == ("public", ())  # "Al" is not in "Also": a word, not a name
    said_elsewhere = await memory_recall(svc, event("x", "carol", "g2"), "exam", 5)
    assert "Bob" not in said_elsewhere


async def test_in_a_public_place_a_memory_calling_a_member_by_the_given_name_is_not_made_public(
        make_service: MakeService) -> None:
    """Friends call 张婷婷 婷婷 and Mei Chen Mei: a note about 婷婷 or Mei, its `about` left out, became
    public (the check looked for whole display names only) and came up in every chat."""
    svc = make_service(Settings(public_spaces=("g1",)))
    for text, sender, name in [("嗨", "ting", "张婷婷"), ("hi", "mei", "Mei Chen"), ("yo", "wei", "张伟")]:
        svc.record_message(event(text, sender, "g1", name=name))
    await svc.flush()
    engram = await svc.memory()
    for text in ("婷婷下周要住院", "Mei failed her driving test", "伟大的一天，大家都来了"):
        await memory_remember(svc, event("x", "alice", "g1"), text, "")
    m1, m2, m3 = [await engram.get(i) for i in (1, 2, 3)]
    assert (m1.scope, m1.subjects) == ("space:qq:group:g1", ("qq:ting",))
    assert (m2.scope, m2.subjects) == ("space:qq:group:g1", ("qq:mei",))
    assert m3.scope == "public"  # 伟 alone is no one's name (张伟's given name is one character)
    assert "婷婷" not in await memory_recall(svc, event("x", "carol", "g2"), "住院", 5)


@pytest.mark.parametrize("about", ["@", " @ ", "@@"])
async def test_an_about_of_a_bare_at_sign_names_no_one(make_service: MakeService, about: str) -> None:
    svc = make_service(Settings(public_spaces=("g1",)))
    reply = await memory_remember(svc, event("x", "alice", "g1"), "The club meets on Mondays", about)
    m = await (await svc.memory()).get(1)
    assert reply == "Remembered (m1); it will come up anywhere."
    assert (m.text, m.scope, m.subjects) == ("The club meets on Mondays", "public", ())


@pytest.mark.parametrize("text, about, error", [
    (["a"], "", "error: text must be a string, not list"),
    ("  ", "", "error: text must not be empty"),
    ("\u200b\u2060\ufeff ", "", "error: text must not be empty"),  # invisible: was "Remembered (m1)"
    ("x" * 2001, "", "error: text is too long (2001 characters, at most 2000)"),
    ("fine", 7, "error: about must be a string, not int"),
])
async def test_remember_rejects_wrong_arguments_readably(service: EngramService, text: object,
                                                         about: object, error: str) -> None:
    assert await memory_remember(service, event("x", "alice"), text, about) == error
    assert (await (await service.memory()).stats())["memories"] == 0


async def test_remember_refuses_in_a_place_that_opted_out(make_service: MakeService) -> None:
    svc = make_service(Settings(blacklist_spaces=("g9",)))
    reply = await memory_remember(svc, event("x", "alice", "g9"), "something", "")
    assert reply.startswith("Not remembered") and (await (await svc.memory()).stats())["memories"] == 0
