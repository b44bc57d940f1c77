"""A forget of a person or a place while messages are kept beside the store (the store could not
take them: a full disk) must reach those messages too: they are written first, or the forget waits."""

from __future__ import annotations

import re

from astrbot_plugin_engram.memory import Episode
from astrbot_plugin_engram.plugin.commands.registry import COMMANDS
from astrbot_plugin_engram.plugin.service import EngramService

from .conftest import OWNER, event
from .test_recording import disk_full

GROUP = "qq:group:g1"


async def mem(svc: EngramService, line: str, group: str | None = "g1") -> str:
    return await COMMANDS.dispatch(svc, event(line, OWNER, group, admin=True), line)


async def test_a_forget_while_messages_are_kept_does_not_let_them_come_back_later(
        service: EngramService) -> None:
    """Before: the forget erased what the store held, and Carol's line kept meanwhile was written
    once there was room: her words were back, after the owner had been told they were forgotten."""
    await (await service.memory()).record_many([
        Episode(place=GROUP, content="my bike lock code is 4471", actor="qq:carol", actor_name="Carol")])
    await disk_full(service, True)
    for _ in range(3):
        service.record_message(event("my new lock code is 9911 " + "and more " * 3000, "carol", "g1",
                                     name="Carol"))
    await service.flush()
    assert service.recording.pending == 3
    asked = await mem(service, "mem forget-person Carol")
    code = re.search(r"/mem confirm (\d+)", asked)
    assert code, asked
    refused = await mem(service, f"mem confirm {code.group(1)}")
    assert "(3)" in refused and "try again" in refused, refused
    await disk_full(service, False)  # room again: the same code now forgets everything of hers
    done = await mem(service, f"mem confirm {code.group(1)}")
    assert done.startswith("Forgot qq:carol: 4 lines"), done
    service.record_message(event("hello", "dave", "g1", name="Dave"))
    await service.flush()
    left = await (await service.memory()).store.get_episodes(list(range(1, 20)))  # ids are not reused
    assert [e.content for e in left.values()] == ["hello"]
