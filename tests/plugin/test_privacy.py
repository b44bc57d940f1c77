"""The plugin's privacy holes, each closed and tested through what a chat can do: commands, tools,
injection. Each test failed before its fix. Each runs on the SQLite file and on PostgreSQL
(``database_url``, a database of the session's throwaway server)."""

from __future__ import annotations

import logging
import re

import pytest

from astrbot_plugin_engram.memory import Memory
from astrbot_plugin_engram.plugin import tools as self_commands  # identity_propose, the model's tool
from astrbot_plugin_engram.plugin.commands.registry import COMMANDS
from astrbot_plugin_engram.plugin.config import Settings
from astrbot_plugin_engram.plugin.service import EngramService
from astrbot_plugin_engram.plugin.tools import memory_recall, memory_remember

from .conftest import OWNER, FakeContext, MakeService, event, request
from .test_inject import injected


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest) -> str:
    if request.param == "sqlite":
        return ""
    return str(request.getfixturevalue("postgres_server").fresh_database())


async def mem(svc: EngramService, line: str, sender: str = OWNER, group: str | None = None,
              platform: str = "qq") -> str:
    return await COMMANDS.dispatch(svc, event(line, sender, group, admin=True, platform=platform), line)


async def inject(svc: EngramService, text: str, sender: str, group: str | None = None,
                 platform: str = "qq", ev=None) -> str:
    req = request(text)
    await svc.inject(ev or event(text, sender, group, platform=platform), req)
    return injected(req)


# ---- 1. a memory's scope covers all of its versions -----------------------------------------------
async def test_an_old_version_of_a_memory_moved_away_is_not_reachable_from_the_group(
        service: EngramService) -> None:
    engram = await service.memory()
    old = await engram.add_memory(Memory("the surprise party is on Friday", "space:qq:group:g1"))
    new = await engram.update(old, "the surprise party moved to Saturday")
    assert (await mem(service, f"mem scope {new} owner")).startswith(f"m{new} is now scope owner")
    for line in (f"mem show {old}", f"mem forget {old}", f"mem scope {old} public", f"mem show {new}"):
        answer = await mem(service, line, group="g1")
        assert answer == f"Engram: no memory m{line.split()[2]} here"  # as for an id that never was
    assert await mem(service, "mem show 999", group="g1") == "Engram: no memory m999 here"
    assert (await engram.get(new)).text == "the surprise party moved to Saturday"  # not forgotten
    assert (await engram.get(old)).scope == "owner"  # moving a memory moved its history
    assert f"versions: m{old} (superseded) -> m{new} (active)" in await mem(service, f"mem show {old}")


# ---- 2. an owner id without a platform ------------------------------------------------------------
async def test_a_bare_owner_id_is_not_the_same_number_on_another_platform(make_service: MakeService,
                                                                          caplog) -> None:
    two = FakeContext(platforms=["qq", "tg", "webchat"])
    svc = make_service(Settings(owner_ids=("10001",)), context=two)
    await (await svc.memory()).add_memory(Memory("the owner's bank is Northwind", "owner"))
    with caplog.at_level(logging.ERROR):
        assert "Northwind" not in await inject(svc, "which bank?", "10001", platform="tg")
        assert "Northwind" not in await inject(svc, "which bank?", "10001", platform="qq")
    assert "'owner_ids'" in caplog.text and "'10001'" in caplog.text and "qq, tg" in caplog.text


async def test_an_owner_id_with_its_platform_is_that_person_only(make_service: MakeService) -> None:
    two = FakeContext(platforms=["qq", "tg", "webchat"])
    svc = make_service(Settings(owner_ids=("qq:10001",)), context=two)
    await (await svc.memory()).add_memory(Memory("the owner's bank is Northwind", "owner"))
    assert "Northwind" in await inject(svc, "which bank?", "10001", platform="qq")
    assert "Northwind" not in await inject(svc, "which bank?", "10001", platform="tg")


async def test_a_bare_owner_id_works_on_the_bots_one_chat_platform(make_service: MakeService) -> None:
    svc = make_service(Settings(owner_ids=("10001",)), context=FakeContext(platforms=["qq", "webchat"]))
    await (await svc.memory()).add_memory(Memory("the owner's bank is Northwind", "owner"))
    assert "Northwind" in await inject(svc, "which bank?", "10001", platform="qq")
    assert "Northwind" not in await inject(svc, "which bank?", "10001", platform="webchat")


# ---- 3. place lists never match a private chat by its last part -----------------------------------
async def test_a_public_group_id_does_not_make_a_private_chat_public(make_service: MakeService) -> None:
    svc = make_service(Settings(public_spaces=("777",)))
    reply = await memory_remember(svc, event("x", "777"), "the vault code is 0451", "")
    assert reply.endswith("in this chat.")
    assert "0451" not in await inject(svc, "vault code?", "bob", "g5")
    assert (await memory_remember(svc, event("x", "a", "777"), "the club meets Mondays", "")).endswith(
        "anywhere.")  # group 777 itself is public


async def test_a_blacklisted_group_id_does_not_silence_a_private_chat(make_service: MakeService) -> None:
    svc = make_service(Settings(blacklist_spaces=("777",)))
    svc.record_message(event("remember my blue bike", "777"))
    svc.record_message(event("forget my red bike", "u1", "777"))
    await svc.flush()
    assert [h.text for h in await svc.recall((svc.audience(event("x", "777"))), "bike", 5)] == [
        "remember my blue bike"]
    assert (await (await svc.memory()).stats())["episodes"] == 1


async def test_an_owner_private_place_must_be_named_in_full(make_service: MakeService) -> None:
    svc = make_service(Settings(owner_private_spaces=("777",)))
    await (await svc.memory()).add_memory(Memory("the owner's bank is Northwind", "owner"))
    assert "Northwind" not in await inject(svc, "which bank?", "777")
    full = make_service(Settings(owner_private_spaces=("qq:private:777",)), data_dir=svc.data_dir / "2")
    await (await full.memory()).add_memory(Memory("the owner's bank is Northwind", "owner"))
    assert "Northwind" in await inject(full, "which bank?", "777")


# ---- 4. a chat whose type cannot be read is a group -----------------------------------------------
async def test_an_unreadable_chat_type_gets_no_owner_rights(service: EngramService) -> None:
    await (await service.memory()).add_memory(Memory("the owner's bank is Northwind", "owner"))
    ev = event("which bank?", OWNER, admin=True)  # the owner, who is an admin: /mem answers

    def unreadable() -> bool:
        raise AttributeError("message type missing")
    ev.is_private_chat = unreadable  # type: ignore[method-assign]
    assert "Northwind" not in await inject(service, "which bank?", OWNER, ev=ev)
    assert (await COMMANDS.dispatch(service, ev, "mem stats")).startswith("Engram here")  # not the totals
    assert "Northwind" in await inject(service, "which bank?", OWNER)


# ---- 5. a name from one chat is not shown in another ----------------------------------------------
async def test_a_note_names_a_person_as_this_place_knows_them(service: EngramService) -> None:
    service.record_message(event("hello all", "u1", "g1", name="Ann"))
    service.record_message(event("hi from my other group", "u1", "g2", name="Ann from Accounting, secretly"))
    await service.flush()
    engram = await service.memory()
    for place in ("g1", "g3"):
        await engram.add_memory(Memory("likes green tea", f"space:qq:group:{place}", subjects=("qq:u1",)))
    in_g1 = await inject(service, "what tea?", "u2", "g1")
    in_g3 = await inject(service, "what tea?", "u2", "g3")
    assert "about Ann:" in in_g1 and "secretly" not in in_g1
    assert "about u1:" in in_g3 and "Ann" not in in_g3
    assert "secretly" not in await memory_recall(service, event("x", "u2", "g1"), "tea", 5)


# ---- the place lists: a blacklisted place gets nothing of the memory ------------------------------
async def test_a_blacklisted_place_gets_no_injection_and_no_tools(make_service: MakeService) -> None:
    svc = make_service(Settings(blacklist_spaces=("g9",)))
    await (await svc.memory()).add_memory(Memory("the club meets on Mondays", "public"))
    assert "Mondays" in await inject(svc, "when does the club meet?", "u1", "g1")
    assert "engram-memory" not in await inject(svc, "when does the club meet?", "u1", "g9")
    recalled = await memory_recall(svc, event("x", "u1", "g9"), "club", 5)
    assert "Mondays" not in recalled and "opted out" in recalled


# ---- memory_remember(about=...) -------------------------------------------------------------------
async def test_remember_about_a_name_uses_who_this_place_knows_by_it(service: EngramService) -> None:
    service.record_message(event("hi", "u7", "g1", name="Bob"))
    await service.flush()
    await memory_remember(service, event("x", "alice", "g1"), "Bob plays the oboe", "Bob")
    await memory_remember(service, event("x", "alice", "g2"), "Bob plays the tuba", "Bob")
    engram = await service.memory()
    here, elsewhere = await engram.get(1), await engram.get(2)
    assert here.subjects == ("qq:u7",)
    assert elsewhere.subjects == () and elsewhere.scope == "space:qq:group:g2"  # no invented id
    assert elsewhere.text == "Bob plays the tuba"


# ---- identity proposals: each tells where it was made and why -------------------------------------
async def test_proposals_are_shown_and_decided_only_in_the_owners_private_chat(
        service: EngramService) -> None:
    """In a group the owner's /mem proposals told how many waited from other chats, and approve or
    reject by number told that a proposal with that number existed (issue 28): a group hears none of
    it now, neither those made there nor the others, and decides nothing."""
    await self_commands.identity_propose(service, event("x", "alice"), "I worry about my friends' health.",
                                         "Alice told me about her surgery on Monday")
    await self_commands.identity_propose(service, event("x", "bob", "g1"), "I like jokes.", "g1 jokes a lot")
    for command in ("mem proposals", "mem approve 1", "mem reject 1", "mem approve 2", "mem reject 9"):
        in_group = await mem(service, command, group="g1")
        assert in_group == ("Engram: identity proposals are shown and decided only in your private chat "
                            "with the bot.")
    assert [p.status for p in service.selfhood.proposals.all()] == ["pending", "pending"]
    in_private = await mem(service, "mem proposals")
    assert "surgery" in in_private and "I like jokes." in in_private
    assert "Approved #1" in await mem(service, "mem approve 1")


# ---- /mem remember --scope: no way into (or a look at) a scope this chat does not see -------------
async def test_remember_in_a_group_cannot_probe_or_write_a_scope_the_group_does_not_see(
        service: EngramService) -> None:
    engram = await service.memory()
    secret = await engram.add_memory(Memory("Alice's door code is 4417", "owner"))
    other = await engram.add_memory(Memory("g2 plans a strike on Monday", "space:qq:group:g2"))
    for text, scope in (("Alice's door code is 4417", "owner"),  # the same words: "already remembered"
                        ("Alice's door code is 4417 now", "owner"),  # fuller: "a new version"
                        ("g2 plans a strike on Monday", "space:qq:group:g2")):
        said = await mem(service, f"mem remember {text} --scope {scope}", "mod", group="g1")
        assert f"m{secret}" not in said and f"m{other}" not in said and "Already" not in said, said
        assert said.startswith("Engram: ") and "owner's private chat" in said, said
    assert (await engram.get(secret)).status == "active" and (await engram.get(other)).status == "active"
    assert (await engram.counts())["memories"] == 2  # nothing was written either
    # what the group sees stays writable from it; the owner's private chat may name any scope
    assert (await mem(service, "mem remember the sky is blue --scope public", "mod", group="g1")).endswith(
        "(scope public).")
    assert "new version" in await mem(service, "mem remember Alice's door code is 4417 now "
                                                "--scope owner")


async def test_scope_in_a_group_cannot_move_a_memory_into_another_chat(service: EngramService) -> None:
    """A group's admin could push the group's memory into any other chat (`space:<another group>`),
    where the next reply there would bring it up."""
    engram = await service.memory()
    mid = await engram.add_memory(Memory("Bob is moving to Oslo", "space:qq:group:g1"))
    said = await mem(service, f"mem scope {mid} space:qq:group:g2", "mod", group="g1")
    assert said.startswith("Engram: no scope space:qq:group:g2 here") and "owner's private chat" in said
    assert (await engram.get(mid)).scope == "space:qq:group:g1"
    # handing it to the owner narrows it: allowed here; the owner's private chat may move it anywhere
    assert (await mem(service, f"mem scope {mid} owner", "mod", group="g1")).startswith(
        f"m{mid} is now scope owner")
    assert (await mem(service, f"mem scope {mid} space:qq:group:g2")).startswith(
        f"m{mid} is now scope space:qq:group:g2")


# ---- /mem forget-person: a group learns no one it has not seen -----------------------------------
async def test_forget_person_in_a_group_finds_only_people_seen_there(service: EngramService) -> None:
    service.record_message(event("my divorce papers came", "u5", "g2", name="Bob"))
    service.record_message(event("I am Bob too", "u6", name="Bob"))  # a private chat
    service.record_message(event("hi all", "u7", "g1", name="Carol"))
    await service.flush()
    for line in ("mem forget-person Bob", "mem forget-person qq:u5", "mem forget-person qq:u6"):
        said = await mem(service, line, "mod", group="g1")
        asked = line.split()[-1]
        assert not [i for i in ("qq:u5", "qq:u6") if i in said and i != asked], said  # no other id
        assert "everything" not in said and "line" not in said and "/mem confirm" not in said, said
        assert "is remembered here" in said and "private chat" in said, said
    assert "everything by or about qq:u7: 1 line" in await mem(service, "mem forget-person Carol", "mod",
                                                               group="g1")
    assert "qq:u7: 1 line" in await mem(service, "mem forget-person qq:u7", "mod", group="g1")
    # the owner's private chat reaches everyone
    assert "names several people (qq:u5, qq:u6)" in await mem(service, "mem forget-person Bob")
    assert "everything by or about qq:u5: " in await mem(service, "mem forget-person qq:u5")


# ---- /mem forget (with its lines): a group's forget does not reach another chat's lines -------------
async def test_forget_with_sources_in_a_group_does_not_erase_another_chats_lines(
        service: EngramService) -> None:
    service.record_message(event("the club moved to room 5, tell everyone", "alice"))  # alice's private chat
    service.record_message(event("and I moved to Oslo", "alice"))
    await service.flush()
    engram = await service.memory()
    # the owner made what Alice told the bot public; a memory of her own chat came from the same line
    shared = await engram.add_memory(Memory("The club meets in room 5", "public", sources=(1,)))
    hers = await engram.add_memory(Memory("Alice told the bot first about room 5", "space:qq:private:alice",
                                          sources=(1,)))
    said = await mem(service, f"mem forget {shared}", "mod", group="g1")  # the lines go too by default
    assert said.startswith("Engram: ") and "other chats" in said and "owner's private chat" in said, said
    assert f"/mem forget m{shared} --keep-lines" in said  # what the group may do instead
    assert not re.search(r"\d+ (line|memor)", said), said  # no count of what is elsewhere
    assert len(await engram.store.get_episodes([1, 2])) == 2  # nothing was erased
    assert (await engram.get(hers)).status == "active" and (await engram.get(shared)).status == "active"
    # the memory alone may go from the group (the group sees it); with its lines, from the owner's chat
    assert "Forgot" in await mem(service, f"mem forget {shared} --with-sources")
    assert list(await engram.store.get_episodes([1, 2])) == [2]


# ---- /mem why: the last injection, as this chat may see it now -----------------------------------
async def test_why_no_longer_shows_a_memory_moved_out_of_this_chat(service: EngramService) -> None:
    engram = await service.memory()
    mid = await engram.add_memory(Memory("Dana's rent is late again", "space:qq:group:g1"))
    assert "rent is late" in await inject(service, "is the rent late?", "u1", "g1")
    assert "rent is late" in await mem(service, "mem why", "mod", group="g1")
    assert (await mem(service, f"mem scope {mid} owner")).startswith(f"m{mid} is now scope owner")
    said = await mem(service, "mem why", "mod", group="g1")
    assert "rent is late" not in said and f"m{mid}" not in said, said
    assert "rent is late" not in await inject(service, "is the rent late?", "u1", "g1")  # as recall
