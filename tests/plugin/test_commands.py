"""/mem: admins only, a usage line for anything wrong, reads through the audience's visibility."""

from __future__ import annotations

import re

from astrbot_plugin_engram.memory import Memory
from astrbot_plugin_engram.memory.text.words import MAX_TEXT
from astrbot_plugin_engram.plugin.commands.context import CommandContext
from astrbot_plugin_engram.plugin.commands.dispatch import REFUSAL, Registry
from astrbot_plugin_engram.plugin.commands.registry import COMMANDS
from astrbot_plugin_engram.plugin.config import Settings
from astrbot_plugin_engram.plugin.service import EngramService

from .conftest import OWNER, MakeService, event, request


async def mem(svc: EngramService, line: str, sender: str = OWNER, group: str | None = None,
              admin: bool = True) -> str:
    return await COMMANDS.dispatch(svc, event(line, sender, group, admin=admin), line)


async def add(svc: EngramService, text: str, scope: str) -> int:
    return await (await svc.memory()).add_memory(Memory(text, scope))


async def test_non_admins_get_a_short_refusal_and_nothing_happens(service: EngramService) -> None:
    mid = await add(service, "a fact", "public")
    assert await mem(service, "mem forget 1", "stranger", admin=False) == REFUSAL
    assert (await (await service.memory()).get(mid)).text == "a fact"


async def test_unknown_subcommands_and_bad_arguments_get_a_usage_line(service: EngramService) -> None:
    assert (await mem(service, "mem fly")).startswith("Unknown subcommand 'fly'. Usage: /mem <help|stats")
    assert await mem(service, "mem recall") == "Usage: /mem recall [--archived] <query>"
    assert await mem(service, "mem show abc") == (
        "'abc' is not a memory id (like 12 or m12)\nUsage: /mem show <id>")
    assert await mem(service, "mem scope 1") == "Usage: /mem scope <id> <scope>"
    assert await mem(service, "mem remember") == "Usage: /mem remember <text> [--scope S]"
    assert (await mem(service, "mem remember x --scope")).endswith("Usage: /mem remember <text> [--scope S]")
    assert (await mem(service, "mem remember x --scope everywhere")).startswith("Engram: invalid scope")
    assert await mem(service, "mem show 999") == "Engram: no memory m999 here"
    for page in ("0", "-1", "\u00b2", "99999999999999999999"):  # not 'failed (OverflowError)'
        assert await mem(service, f"mem list --page {page}") == (
            f"--page needs a page number (1, 2, ...), not {page!r}\n"
            "Usage: /mem list [place|<person>] [--kind K] [--page N]")
    await add(service, "a fact", "public")
    assert await mem(service, "mem list --page 999999999") == (
        "There are 1 page(s) of the memories this chat may see; page 999999999 is past the end.")


async def test_remember_refuses_a_text_the_store_would_cut(service: EngramService) -> None:
    """It answered 'Remembered m1' and kept only the first 16,000 characters (the log said so)."""
    long = "word " * 4000 + "the end"
    assert await mem(service, f"mem remember {long}") == (
        f"Not remembered: the text has {len(long)} characters, at most {MAX_TEXT}; "
        "split it into several memories.")
    assert (await (await service.memory()).stats())["memories"] == 0


async def test_scope_owner_without_an_owner_is_refused(make_service: MakeService) -> None:
    """It moved the memory where no chat could see it, nor reach it with /mem again."""
    svc = make_service(Settings())  # no owner_ids
    mid = await add(svc, "The safe combination is 12-34", "space:qq:private:owner1")
    said = await mem(svc, f"mem scope {mid} owner")
    assert said.startswith(f"Not moved: m{mid} stays scope space:qq:private:owner1; no owner is configured")
    assert "owner_ids" in said and (await (await svc.memory()).get(mid)).scope == "space:qq:private:owner1"
    assert "12-34" in await mem(svc, f"mem show {mid}")


async def test_recall_of_a_pasted_page_answers_in_a_message_a_chat_can_carry(
        make_service: MakeService) -> None:
    """The whole query was echoed back: 20,000 characters of it, more than a QQ message carries."""
    service = make_service(Settings(owner_ids=(OWNER,), reply_language="en"))  # a Chinese query: pinned
    await add(service, "Alice's tea is oolong", "public")
    for query in ("tea " + "字" * 20_000, "字" * 20_000):
        said = await mem(service, f"mem recall {query}")
        assert len(said) < 2_000 and said.startswith(("Recalled here for", "Nothing recalled here for"))


async def test_help_lists_every_subcommand(service: EngramService) -> None:
    text = await mem(service, "mem")
    for name in ("stats", "recall", "why", "remember", "show", "forget", "scope", "help"):
        assert f"/mem {name}" in text


async def test_remember_keeps_a_memory_in_this_place_or_the_given_scope(service: EngramService) -> None:
    reply = await mem(service, "mem remember the wifi password is hunter2", group="g1")
    mid = int(re.search(r"m(\d+)", reply).group(1))  # type: ignore[union-attr]
    m = await (await service.memory()).get(mid)
    assert (m.text, m.scope) == ("the wifi password is hunter2", "space:qq:group:g1")
    reply = await mem(service, "mem remember --scope public the sky is blue")
    assert reply.endswith("(scope public).")


async def test_recall_shows_scores_and_only_what_this_chat_may_see(service: EngramService) -> None:
    await add(service, "Alice's tea is oolong", "space:qq:private:alice")
    await add(service, "The group's tea is puer", "space:qq:group:g1")
    text = await mem(service, "mem recall tea", group="g1")
    assert "puer" in text and "oolong" not in text and re.search(r"m2 score -?\d+\.\d\d", text)


async def test_show_forget_and_scope_of_a_hidden_memory_only_in_the_owners_private_chat(
        service: EngramService) -> None:
    mid = await add(service, "Alice's secret", "space:qq:private:alice")
    for line in (f"mem show {mid}", f"mem forget {mid}", f"mem scope {mid} public"):
        assert await mem(service, line, group="g1") == f"Engram: no memory m{mid} here"
    assert "Alice's secret" in await mem(service, f"mem show m{mid}")
    assert await mem(service, f"mem scope {mid} owner") == (
        f"m{mid} is now scope owner (was space:qq:private:alice).")
    assert await mem(service, f"mem forget {mid}") == f"Forgot m{mid} (1 version)."
    assert await mem(service, f"mem show {mid}") == f"Engram: no memory m{mid} here"


async def test_an_admin_acts_on_what_this_chat_may_see(service: EngramService) -> None:
    mid = await add(service, "group rule: no spoilers", "space:qq:group:g1")
    assert "no spoilers" in await mem(service, f"mem show {mid}", "mod", group="g1")
    assert await mem(service, f"mem forget {mid}", "mod", group="g1") == f"Forgot m{mid} (1 version)."


async def test_show_lists_versions_and_visible_sources(service: EngramService) -> None:
    service.record_message(event("I moved to Oslo", "alice"))
    await service.flush()
    engram = await service.memory()
    old = await engram.add_memory(Memory("Alice lives in Bergen", "owner", sources=(1,)))
    new = await engram.update(old, "Alice lives in Oslo")
    text = await mem(service, f"mem show {new}")
    assert f"versions: m{old} (superseded) -> m{new} (active)" in text
    assert 'source e1' in text and '"I moved to Oslo"' in text


async def test_why_explains_the_last_injection_here(service: EngramService) -> None:
    assert await mem(service, "mem why") == "Nothing was injected in this chat since Engram started."
    service.record_message(event("I collect stamps", OWNER))
    await service.flush()
    await service.inject(event("what do I collect?", OWNER), request("what do I collect?"))
    text = await mem(service, "mem why")
    assert text.startswith('Last injection here') and '"I collect stamps"' in text and "score" in text


async def test_stats_counts_what_is_remembered(service: EngramService) -> None:
    service.record_message(event("hello", "alice"))
    await service.flush()
    assert (await mem(service, "mem stats")).startswith(  # issue 27: "1 places, 1 people"
        "Engram: 1 line, 0 memories (0 archived, 0 superseded), 1 place, 1 person;")


async def test_an_empty_list_says_when_lines_become_memories(service: EngramService) -> None:
    """Issue 27: after five facts on the first day /mem list said there were no memories, and nothing
    said that lines become memories later or what /mem consolidate does; in Chinese it read
    "没有记忆：本聊天可见的记忆。"."""
    for text in ("I am allergic to cat hair", "my sister lives in Oslo"):
        service.record_message(event(text, "alice", "g1"))
    await service.flush()
    said = await mem(service, "mem list", group="g1")
    assert said.startswith("The memories this chat may see: none yet.\n"), said
    assert "once a chat has 30 new messages, or a day after the first of them" in said
    assert "/mem consolidate turns them into memories now" in said
    zh = await mem(service, "mem list 小明")
    assert zh.startswith("还没有本聊天可见的关于 小明 的记忆。"), zh
    assert await mem(service, "mem list place") == "The memories of this place: none yet."


async def test_stats_in_a_group_count_only_what_the_group_may_see(service: EngramService) -> None:
    """The totals counted every place: a group's admin learned how many lines, memories, places and
    people the bot had from private chats and other groups."""
    for text, sender, group in [("hi all", "bob", "g1"), ("my secret", "carol", None),
                                ("other group", "dan", "g2"), ("and more", "dan", "g2")]:
        service.record_message(event(text, sender, group))
    await service.flush()
    await add(service, "group fact", "space:qq:group:g1")
    await add(service, "public fact", "public")
    await add(service, "carol's secret", "space:qq:private:carol")
    await add(service, "owner fact", "owner")
    here = await mem(service, "mem stats", group="g1")
    assert here.startswith("Engram here (qq:group:g1): 1 line recorded in this place, "
                           "2 memories this chat may see;"), here
    assert "places" not in here and "people" not in here
    assert (await mem(service, "mem stats")).startswith("Engram: 4 lines, 4 memories")  # the owner's DM


async def test_a_failing_subcommand_answers_a_line_not_a_traceback(service: EngramService) -> None:
    reg = Registry()

    @reg.command("boom", "boom", "fails")
    async def boom(ctx: CommandContext, args: str) -> str:
        raise RuntimeError("kaput")

    @reg.command("echo", "echo <text>", "later work adds commands like this")
    async def echo(ctx: CommandContext, args: str) -> str:
        return args

    ev = event("mem boom", OWNER, admin=True)
    assert await reg.dispatch(service, ev, "mem boom") == (
        "Engram: /mem boom failed (RuntimeError); see the log.")
    assert await reg.dispatch(service, ev, "/mem echo hi there") == "hi there"


async def test_show_of_a_long_text_answers_in_a_message_a_chat_can_carry(service: EngramService) -> None:
    """The whole stored text was sent in one reply: up to 16,000 characters, more than a QQ message
    (about 4,500) carries. It is cut, never inside an emoji, and says how long it is and where it is whole."""
    long = "a" * 2998 + "👩\u200d👩\u200d👧" + "b" * (MAX_TEXT - 3003)
    mid = await add(service, long, "public")
    assert len((await (await service.memory()).get(mid)).text) == MAX_TEXT
    service.record_message(event(long, "alice"))
    await service.flush()
    for key in (f"m{mid}", "e1"):
        said = await mem(service, f"mem show {key}")
        assert len(said) < 4_000, key
        assert "a" * 2_000 in said and "ab" not in said and "👩" not in said and "\u200d" not in said
        assert (f"(cut: {MAX_TEXT:,} characters in all; the whole text: the dashboard or "
                f"`python -m astrbot_plugin_engram.memory --db <engram.db> show {key}`)") in said
    short_one = await add(service, "Alice's tea is oolong", "public")
    assert "(cut" not in await mem(service, f"mem show m{short_one}")
