"""The model's ``memory_forget``: a person asks the bot itself to forget ("forget what I told you about
my ex", "把我刚才说的那件事忘掉"). It erases their own lines here that share a word with what they named
(or their latest lines), the bot's answers to them and the memories here about them, at once for the
next recall, and says what it removed; another person's lines, another chat, the owner's notes and the
asking message itself stay; a wrong argument gets a sentence back."""

from __future__ import annotations

from astrbot_plugin_engram.memory import Memory, place_scope
from astrbot_plugin_engram.plugin.service import EngramService
from astrbot_plugin_engram.plugin.tools import memory_forget, memory_recall

from .conftest import event, request
from .test_inject import injected

GROUP = "qq:group:g1"


async def said(svc: EngramService, text: str, sender: str = "alice", group: str | None = "g1") -> None:
    svc.record_message(event(text, sender, group))
    await svc.flush()


async def block(svc: EngramService, text: str, sender: str = "alice", group: str | None = "g1") -> str:
    req = request(text)
    await svc.inject(event(text, sender, group), req)
    return injected(req)


async def test_forget_what_i_told_you_about_my_ex_erases_her_lines_and_the_memory_about_her(
        service: EngramService) -> None:
    await said(service, "my ex Marcus still texts me every week")
    service.record_reply(event("x", "alice", "g1"), "That sounds tiring, Marcus should stop.")
    await said(service, "Marcus from the band is playing tonight", "bob")  # Bob's line: not hers
    await said(service, "my ex Marcus lives in Leeds", "alice", None)  # her private chat: another place
    mem = await service.memory()
    about = await mem.add_memory(Memory("Alice's ex Marcus texts her weekly", place_scope(GROUP),
                                        subjects=("qq:alice",)))
    owners = await mem.add_memory(Memory("Alice's ex is Marcus", "owner", subjects=("qq:alice",)))
    assert "texts me every week" in await block(service, "what about Marcus?", "carol")

    asking = event("forget what I told you about my ex Marcus", "alice", "g1")
    service.record_message(asking)
    reply = await memory_forget(service, asking, "my ex Marcus", 0)

    assert reply.startswith("Forgotten for good"), reply
    assert '- their line: "my ex Marcus still texts me every week"' in reply
    assert '- your reply: "That sounds tiring, Marcus should stop."' in reply
    assert "- memory: \"Alice's ex Marcus texts her weekly\"" in reply
    assert "band" not in reply and "Leeds" not in reply and "forget what I told you" not in reply
    later = await block(service, "what about Marcus?", "carol")
    assert "texts me every week" not in later and "texts her weekly" not in later and "tiring" not in later
    assert "band is playing tonight" in later  # Bob's line stays
    assert (await mem.get(owners)).status == "active"  # the owner's note stays
    assert [m for m in (await mem.memories([about]))] == []
    recalled = await memory_recall(service, event("x", "alice"), "Marcus Leeds", 5, False)
    assert "Leeds" in recalled  # her private chat's line stays: another place


async def test_forget_what_i_just_said_takes_her_latest_line_not_the_asking_one(
        service: EngramService) -> None:
    await said(service, "我对猫毛过敏")
    await said(service, "今天天气不错", "bob")
    asking = event("把我刚才说的那件事忘掉", "alice", "g1")
    service.record_message(asking)
    reply = await memory_forget(service, asking, "", 1)
    assert '- their line: "我对猫毛过敏"' in reply and "忘掉" not in reply, reply
    assert "猫毛" not in await block(service, "猫毛过敏", "carol")
    assert "天气" in await block(service, "今天天气", "carol")
    assert "把我刚才说的那件事忘掉" in await block(service, "忘掉", "carol")  # the asking line is no fact


async def test_nothing_of_hers_matching_says_so_and_erases_nothing(service: EngramService) -> None:
    await said(service, "Bob's sister is called Jenna", "bob")
    reply = await memory_forget(service, event("forget Jenna", "alice", "g1"), "Jenna", 0)
    assert reply.startswith("Nothing of theirs here matched; nothing was forgotten."), reply
    assert "Jenna" in await block(service, "who is Jenna?", "carol")


async def test_every_argument_is_checked(service: EngramService) -> None:
    ev = event("forget it", "alice", "g1")
    assert (await memory_forget(service, ev, 5, 0)) == "error: what must be a string, not int"
    assert (await memory_forget(service, ev, "", 0)).startswith("error: give what")
    assert (await memory_forget(service, ev, "x", 11)) == (
        "error: recent must be a whole number from 0 to 10, not 11")
    assert (await memory_forget(service, ev, "x", "two")).startswith("error: recent must be a whole number")
    assert (await memory_forget(service, ev, "x", True)).startswith("error: recent must be a whole number")
    assert (await memory_forget(service, ev, "x" * 1001, 0)).startswith("error: what is too long")
