"""The privacy red team (session 12): what an admin of a group, a stranger in a private chat or a model
with tools could learn of another chat, each hole closed and tested through what that chat can do.
Each test failed before its fix."""

from __future__ import annotations

import re

from astrbot_plugin_engram.memory import Memory
from astrbot_plugin_engram.plugin import tools as self_commands  # identity_propose, the model's tool
from astrbot_plugin_engram.plugin.config import Settings
from astrbot_plugin_engram.plugin.service import EngramService

from .conftest import OWNER, MakeService, event
from .test_jobs import context, jobs_for, say
from .test_privacy import mem


# ---- /mem list <name>: a name someone went by only in another chat finds nothing here -------------
async def test_list_in_a_group_finds_a_person_only_by_the_name_they_went_by_there(
        service: EngramService) -> None:
    """`/mem list Red Fox` in g1 listed g1's memories about the person who calls themself "Red Fox"
    only in g2: the group's admin learned which of its members goes by that name elsewhere."""
    service.record_message(event("hello", "u1", "g1", name="Peter"))
    service.record_message(event("psst, it's me", "u1", "g2", name="Red Fox"))
    service.record_message(event("hi", "u9", name="Night Owl"))  # a private chat
    await service.flush()
    engram = await service.memory()
    await engram.add_memory(Memory("likes green tea", "space:qq:group:g1", subjects=("qq:u1",)))
    await engram.add_memory(Memory("plays chess on Sundays", "space:qq:group:g1", subjects=("qq:u9",)))
    for name in ("Red Fox", "red fox", "Night Owl"):
        said = await mem(service, f"mem list {name}", "mod", group="g1")
        assert "green tea" not in said and "chess" not in said, said
        nobody = await mem(service, "mem list Nobody Here", "mod", group="g1")
        assert said == nobody.replace("Nobody Here", name), said  # as for a name no one ever went by
    assert "green tea" in await mem(service, "mem list Peter", "mod", group="g1")
    assert "green tea" in await mem(service, "mem list qq:u1", "mod", group="g1")  # by id, as before


# ---- /mem forget-person in a group: what it would erase elsewhere is not counted there ------------
async def test_forget_person_in_a_group_does_not_count_what_is_said_elsewhere(
        service: EngramService) -> None:
    """`/mem forget-person Bob` in g1 answered "everything by or about qq:u5: 6 lines and ..." when Bob
    said one line in g1: the group's admin learned how much Bob (and the owner about Bob) said in
    private chats, and the same again after `/mem confirm`."""
    service.record_message(event("hi all", "u5", "g1", name="Bob"))
    for i in range(4):
        service.record_message(event(f"my loan number is 88{i}", "u5", name="Bob"))  # Bob's private chat
    service.record_message(event("Bob owes me money", "owner1"))  # the owner's private chat names him
    service.record_message(event("Bob left early", "u6", "g2", name="Carl"))
    await service.flush()
    engram = await service.memory()
    await engram.add_memory(Memory("Bob is in debt", "owner", subjects=("qq:u5",)))
    await engram.add_memory(Memory("Bob says hi to everyone", "space:qq:group:g1", subjects=("qq:u5",)))
    said = await mem(service, "mem forget-person Bob", "mod", group="g1")
    assert "1 line and 1 memory" in said, said  # what g1 itself holds
    assert not re.search(r"\b[2-9] (line|memor)", said), said
    assert "other chats" in said, said  # said whether or not there is any: no oracle
    code = re.search(r"/mem confirm (\d+)", said).group(1)  # type: ignore[union-attr]
    done = await mem(service, f"mem confirm {code}", "mod", group="g1")
    assert "1 line and 1 memory" in done and not re.search(r"\b[2-9] (line|memor)", done), done
    assert "other chats" in done, done
    # the forget still reached every place, as the command says
    left = await engram.store.get_episodes(list(range(1, 8)))
    assert [e.content for e in left.values()] == []
    assert (await engram.counts())["memories"] == 0
    # the owner's private chat still gets every count
    service.record_message(event("hi", "u7", "g1", name="Dan"))
    service.record_message(event("secret", "u7", name="Dan"))
    await service.flush()
    assert "everything by or about qq:u7: 2 lines" in await mem(service, "mem forget-person Dan")


async def test_forget_place_and_forget_line_in_a_group_count_only_what_the_group_sees(
        service: EngramService) -> None:
    """A memory the owner keeps (scope owner) drawn from a group's line was counted in the group's
    `/mem forget-place` and `/mem forget e<id>` answers: the admin learned the owner keeps notes on it."""
    service.record_message(event("I got the job at Initech", "u5", "g1", name="Bob"))
    service.record_message(event("see you all friday", "u5", "g1", name="Bob"))
    await service.flush()
    engram = await service.memory()
    await engram.add_memory(Memory("Bob works at Initech", "space:qq:group:g1", sources=(1,)))
    await engram.add_memory(Memory("watch Bob: Initech is our rival", "owner", sources=(1,)))
    await engram.add_memory(Memory("Bob comes on friday", "owner", sources=(2,)))
    said = await mem(service, "mem forget-place", "mod", group="g1")
    assert "2 lines and 1 memory" in said and "other chats" in said, said
    assert "3 memories" not in said, said
    said = await mem(service, "mem forget e1", "mod", group="g1")
    assert "1 line and 1 memory" in said and "other chats" in said, said
    assert "2 memories" not in said, said
    assert (await engram.counts())["memories"] == 1  # the owner's note drawn from e1 went too
    # the owner's private chat counts everything
    assert "1 line and 1 memory erased" in await mem(service, "mem forget e2")


async def test_forget_of_a_memory_in_a_group_does_not_count_a_proposal_made_in_another_chat(
        service: EngramService) -> None:
    """`/mem forget m1` in g1 answered "(1 version; and 1 identity proposal drawn from it)" when the
    proposal holding its words was made in Alice's private chat: the group learned she repeated it."""
    engram = await service.memory()
    mid = await engram.add_memory(Memory("the wifi password is 58213", "space:qq:group:g1"))
    await self_commands.identity_propose(service, event("x", "alice"), "I keep the code 58213 safe", "")
    said = await mem(service, f"mem forget m{mid}", "mod", group="g1")
    assert said == f"Forgot m{mid} (1 version).", said
    assert service.selfhood.proposals.pending() == []  # it went all the same: nothing keeps the words
    mid = await engram.add_memory(Memory("the door code is 77120", "space:qq:group:g1"))
    await self_commands.identity_propose(service, event("x", "bob", "g1"), "I keep the code 77120 safe", "")
    assert "and 1 identity proposal" in await mem(service, f"mem forget m{mid}", "mod", group="g1")


# ---- /mem consolidate and /mem stats in a group: nothing of another chat, not even a count ---------
async def test_consolidate_in_a_group_neither_names_nor_counts_another_chat(
        make_service: MakeService) -> None:
    """In g1, `/mem consolidate qq:private:alice` answered "Consolidated ...: 1 added, from 1 lines"
    (and "no place ... has any lines" for someone who never wrote): the group's admin learned who writes
    to the bot and how much; `/mem consolidate` counted every chat's lines and new memories."""
    svc, jobs = await jobs_for(make_service, context())
    try:
        await say(svc, "my secret: I am changing jobs", "alice", None)
        await say(svc, "the picnic is on Sunday", "bob", "g1")
        said = await mem(svc, "mem consolidate qq:private:alice", "mod", group="g1")
        nobody = await mem(svc, "mem consolidate qq:private:zed", "mod", group="g1")
        assert said == nobody.replace("zed", "alice"), said  # the same refusal: no oracle
        assert "owner's private chat" in said and "added" not in said, said
        said = await mem(svc, "mem consolidate", "mod", group="g1")
        assert said.startswith("Consolidated: 1 added, 0 updated, from 1 line,"), said
        assert "picnic" in said and "changing jobs" not in said and "other places" not in said, said
        engram = await svc.memory()
        assert [m.text for m in (await engram.list_memories(None))[0]] == ["Bob said the picnic is on Sunday"]
        # the owner's private chat consolidates every place and counts all of it
        said = await mem(svc, "mem consolidate")
        assert said.startswith("Consolidated: 1 added, 0 updated, from 1 line,"), said
        assert (await engram.list_memories(None))[1] == 2
        stats = await mem(svc, "mem stats", "mod", group="g1")
        assert "job consolidate: last run" in stats and "added" not in stats, stats  # no count of all chats
        assert "in all added 2" in await mem(svc, "mem stats")
    finally:
        await jobs.stop()


# ---- /mem show: a memory every chat sees does not count the lines of other chats it drew on -----
async def test_show_in_a_group_does_not_count_the_sources_said_in_other_chats(service: EngramService) -> None:
    """The self-image (scope self: every chat sees it) draws on every line of the recent diaries' days;
    `/mem show` of it in g1 said "(4 sources from other places not shown here)": how much was said to
    the bot in private chats those days."""
    service.record_message(event("hello group", "u1", "g1", name="Ann"))
    for i in range(4):
        service.record_message(event(f"private line {i}", "u2"))
    await service.flush()
    engram = await service.memory()
    mid = await engram.add_memory(Memory("I have been calm and curious lately", "self", kind="reflection",
                                         subjects=("self",), sources=(1, 2, 3, 4, 5)))
    said = await mem(service, f"mem show m{mid}", "mod", group="g1")
    assert "hello group" in said and "private line" not in said, said
    assert "other places" in said and not re.search(r"\d+ sources", said), said
    assert "private line 3" in await mem(service, f"mem show m{mid}")  # the owner's private chat: all


# ---- an opted-out place: the model's third tool refuses there too ---------------------------------
async def test_identity_propose_keeps_nothing_of_a_place_that_opted_out(make_service: MakeService) -> None:
    """In a blacklisted group the model could still call identity_propose: its change and reason (what
    was said there: "Alice trusted me with her door code") were kept, shown to the owner with the place
    and the person, and once approved said in every chat."""
    svc = make_service(Settings(owner_ids=(OWNER,), blacklist_spaces=("g9",)))
    said = await self_commands.identity_propose(svc, event("x", "alice", "g9"), "I guard my friends' codes.",
                                                "Alice trusted me with her door code 4417")
    assert "opted out" in said and "Proposed" not in said, said
    assert svc.selfhood.proposals.all() == []
    # elsewhere the tool works as before
    said = await self_commands.identity_propose(svc, event("x", "bob", "g1"), "I like jokes.", "")
    assert said.startswith("Proposed"), said
