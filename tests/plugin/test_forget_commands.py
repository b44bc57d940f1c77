"""/mem forget (with the lines a memory came from, or --keep-lines), forget-person and forget-place
with a confirmation code bound to the chat and expiring; /mem recall --archived and the tool's
archived=true; touching on recall."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from astrbot_plugin_engram.memory import Audience, Episode, Memory, place_scope
from astrbot_plugin_engram.plugin.commands.registry import COMMANDS
from astrbot_plugin_engram.plugin.service import EngramService
from astrbot_plugin_engram.plugin.tools import memory_recall

from .conftest import OWNER, event, request

GROUP = "qq:group:g1"
T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


async def mem(svc: EngramService, line: str, sender: str = OWNER, group: str | None = None) -> str:
    return await COMMANDS.dispatch(svc, event(line, sender, group, admin=True), line)


async def seed(svc: EngramService) -> list[int]:
    e = await svc.memory()
    return await e.record_many([
        Episode(place=GROUP, content="my bike lock code is 4471", actor="qq:carol", actor_name="Carol"),
        Episode(place=GROUP, content="carol always forgets her code", actor="qq:dave", actor_name="Dave"),
        Episode(place=GROUP, content="the weather is fine", actor="qq:dave", actor_name="Dave")])


def code_of(reply: str) -> str:
    found = re.search(r"/mem confirm (\d+)", reply)
    assert found, reply
    return found.group(1)


async def test_a_wide_forget_waits_for_the_code_from_the_same_chat(service: EngramService) -> None:
    ids = await seed(service)
    asked = await mem(service, "mem forget-person Carol", group="g1")
    assert "2 lines and 0 memories" in asked and "within 5 minutes" in asked
    assert len(await (await service.memory()).store.get_episodes(ids)) == 3  # nothing yet
    code = code_of(asked)
    elsewhere = await mem(service, f"mem confirm {code}")  # the owner's private chat: another chat
    assert "another chat" in elsewhere and "Nothing was forgotten" in elsewhere
    assert len(await (await service.memory()).store.get_episodes(ids)) == 3
    asked = await mem(service, "mem forget-person Carol", group="g1")
    done = await mem(service, f"mem confirm {code_of(asked)}", group="g1")
    assert done == ("Forgot qq:carol: 2 lines and 0 memories here (plus whatever other chats hold, not "
                    "counted here) erased.")  # a group counts what it sees (tests/plugin/test_red_team.py)
    left = await (await service.memory()).store.get_episodes(ids)
    assert [e.content for e in left.values()] == ["the weather is fine"]
    again = await mem(service, f"mem confirm {code_of(asked)}", group="g1")  # used up
    assert "no pending confirmation" in again


async def test_an_expired_or_unknown_code_is_refused(service: EngramService) -> None:
    await seed(service)
    clock = [1000.0]
    service.confirmations.clock = lambda: clock[0]
    code = code_of(await mem(service, "mem forget-place", group="g1"))
    clock[0] += 301
    assert "expired" in await mem(service, f"mem confirm {code}", group="g1")
    assert "no pending confirmation" in await mem(service, "mem confirm 123456", group="g1")
    assert len(await (await service.memory()).store.episodes_where(place=GROUP)) == 3


async def test_forget_place_erases_this_place_after_confirmation(service: EngramService) -> None:
    await seed(service)
    e = await service.memory()
    await e.add_memory(Memory(text="the group meets on Fridays", scope=place_scope(GROUP)))
    code = code_of(await mem(service, "mem forget-place", group="g1"))
    assert await mem(service, f"mem confirm {code}", group="g1") == \
        f"Forgot {GROUP}: 3 lines and 1 memory here (plus whatever other chats hold, not counted here) " \
        "erased."
    assert await e.recall("Fridays code weather", Audience(GROUP), k=5) == []
    assert "no place" in await mem(service, "mem forget-place qq:group:zz", group="g1")


async def test_someone_talked_about_who_never_spoke_can_be_forgotten_from_the_owners_chat(
        service: EngramService) -> None:
    """"Forget everything about 小红": she never spoke to the bot, only others spoke of her. The owner
    was told "no one called '小红' is remembered" and the lines about her stayed."""
    e = await service.memory()
    ids = await e.record_many([
        Episode(place=GROUP, content="小红昨天和我分手了", actor="qq:dave", actor_name="Dave"),
        Episode(place=GROUP, content="别难过，红红火火的日子还在后面", actor="qq:erin", actor_name="Erin"),
        Episode(place="qq:private:dave", content="我还是忘不了小红", actor="qq:dave", actor_name="Dave")])
    mid = await e.add_memory(Memory(text="Dave的前女友叫小红", scope="owner", sources=(ids[0],)))
    in_group = await mem(service, "mem forget-person 小红", group="g1")  # a group: refused as before
    assert "小红" in in_group and "/mem confirm" not in in_group
    asked = await mem(service, "mem forget-person 小红")
    assert "2 lines and 1 memory" in asked or "2 条消息和 1 条记忆" in asked, asked
    await mem(service, f"mem confirm {code_of(asked)}")
    left = await e.store.get_episodes(ids)
    assert [x.content for x in left.values()] == ["别难过，红红火火的日子还在后面"]
    assert await e.store.get_memories([mid]) == {}


async def test_unknown_people_and_ids_get_a_clear_message(service: EngramService) -> None:
    await seed(service)
    assert "nothing is remembered by or about 'Zed'" in await mem(service, "mem forget-person Zed")
    assert "no one called 'Zed'" in await mem(service, "mem forget-person Zed", group="g1")
    assert await mem(service, "mem forget m999 --with-sources") == "Engram: no memory m999 here"
    assert await mem(service, "mem forget-person") == "Usage: /mem forget-person <name or id>"


async def test_forget_takes_the_lines_and_what_else_came_from_them_and_names_each(
        service: EngramService) -> None:
    """Issue 27: ``/mem forget m4`` answered "Forgot m4 (1 version)." and the next recall ranked its
    source line first: the fact was back in the next reply. The lines go too by default, and the reply
    names what went."""
    ids = await seed(service)
    e = await service.memory()
    mid = await e.add_memory(Memory(text="Carol's bike lock code is 4471", scope="owner", sources=(ids[0],)))
    other = await e.add_memory(Memory(text="Carol locks her bike", scope="owner", sources=(ids[0], ids[2])))
    assert "4471" in await mem(service, "mem recall bike lock code")
    reply = await mem(service, f"mem forget m{mid}")
    assert reply == (f"Forgot m{mid} with the lines it came from: 1 line and 2 memories erased "
                     f"(e{ids[0]}, m{mid}, m{other}).")
    assert sorted((await e.store.get_memories([mid, other])).keys()) == []
    assert list((await e.store.get_episodes(ids)).keys()) == ids[1:]
    assert "4471" not in await mem(service, "mem recall bike lock code")
    # the old flag, the default now, is still understood
    again = await e.add_memory(Memory(text="Dave's code too", scope="owner", sources=(ids[1],)))
    assert (await mem(service, f"mem forget m{again} --with-sources")).startswith(
        f"Forgot m{again} with the lines it came from: 1 line and 1 memory erased (e{ids[1]}, m{again})")


async def test_forget_keep_lines_takes_the_memory_alone_and_names_the_lines_left(
        service: EngramService) -> None:
    ids = await seed(service)
    e = await service.memory()
    mid = await e.add_memory(Memory(text="Carol's bike lock code is 4471", scope="owner", sources=(ids[0],)))
    reply = await mem(service, f"mem forget m{mid} --keep-lines")
    assert reply == (f"Forgot m{mid} (1 version). The lines it came from stay (e{ids[0]}; "
                     "/mem forget e<id> erases one).")
    assert list((await e.store.get_episodes(ids)).keys()) == ids
    zh = await mem(service, f"mem forget m{mid} --keep-lines --with-sources")
    assert zh.startswith("Usage: /mem forget <id> [--keep-lines]"), zh


async def test_deliberate_searches_revive_archived_memories_and_recall_touches(
        service: EngramService) -> None:
    e = await service.memory()
    mid = await e.add_memory(Memory(text="Dana's first car was a red Fiat", scope="public", created_at=T0))
    await e.embed_pending()
    await e.fade(T0 + timedelta(days=365))
    assert (await e.get(mid)).status == "archived"
    nothing = await memory_recall(service, event("x", "alice"), "Fiat car", 5)
    assert nothing == "No memories found for 'Fiat car'."
    found = await memory_recall(service, event("x", "alice"), "Fiat car", 5, "true")
    assert "red Fiat" in found
    assert (await e.get(mid)).status == "active"
    await e.fade(T0 + timedelta(days=365))
    assert "red Fiat" in await mem(service, "mem recall Fiat car")  # shown: strengthened (after a moment)
    await e.toucher.flush()
    assert (await e.get(mid)).last_recalled is not None
    assert await memory_recall(service, event("x", "alice"), "Fiat", 5, "maybe") == \
        "error: archived must be true or false, not 'maybe'"


async def test_a_forget_leaves_no_copy_in_the_last_injection_and_injected_memories_are_strengthened(
        service: EngramService) -> None:
    e = await service.memory()
    mid = await e.add_memory(Memory(text="Carol's bike lock code is 4471", scope=place_scope(GROUP)))
    await e.embed_pending()
    inj = await service.inject(event("what was the bike lock code", "alice", "g1"),
                               request("what was the bike lock code"))
    assert inj is not None and f"m{mid}" in inj.keys and service.last_injection
    await e.toucher.flush()  # the touch of the injected memory, written together a moment later
    assert (await e.get(mid)).last_recalled is not None
    code = code_of(await mem(service, "mem forget-place", group="g1"))
    assert "1 memory" in await mem(service, f"mem confirm {code}", group="g1")
    assert service.last_injection == {}  # /mem why can no longer show the erased text
    # and says why, not "Nothing was injected in this chat since Engram started" (issue 27)
    assert (await mem(service, "mem why", group="g1")).startswith(
        "Nothing was injected in this chat since the last forget (")
