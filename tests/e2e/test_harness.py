"""The harness itself, proven with a throwaway plugin: loads, hooks run, model requests are seen."""

from __future__ import annotations

import textwrap
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from ..fake_openai import FakeOpenAI
from .harness import PluginLoadError, copy_plugin, injected_text

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]

PROBE = "astrbot_plugin_probe"
PROBE_MAIN = '''
from astrbot.api.event import AstrMessageEvent, filter
from astrbot.api.star import Context, Star


class Probe(Star):
    def __init__(self, context: Context, config=None):
        super().__init__(context)

    @filter.on_llm_request()
    async def inject(self, event: AstrMessageEvent, req):
        req.system_prompt = (req.system_prompt or "") + "\\nPROBE-NOTE for " + event.get_sender_id()

    @filter.command("probe")
    async def probe(self, event: AstrMessageEvent):
        yield event.plain_result("pong " + ("admin" if event.is_admin() else "member"))
'''
META = "name: {name}\ndesc: probe\nversion: 0.0.1\nauthor: tests\n"


def write_plugin(root: Path, main: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "main.py").write_text(textwrap.dedent(main))
    (root / "metadata.yaml").write_text(META.format(name=root.name))
    return root


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def probe_bot(server: FakeOpenAI, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[object]:
    from .bot import Bot

    src = write_plugin(tmp_path_factory.mktemp("probe") / PROBE, PROBE_MAIN)
    b = Bot(server, plugin=PROBE)
    b.install(src)
    await b.start()
    yield b
    await b.stop()


async def test_command_answers_and_knows_the_admin(probe_bot) -> None:
    assert (await probe_bot.send("/probe", "owner1")).text == "pong admin"
    assert (await probe_bot.send("/probe", "stranger")).text == "pong member"


async def test_llm_request_hook_reaches_the_fake_model(probe_bot, server: FakeOpenAI) -> None:
    server.replies.append("hello there")
    reply = await probe_bot.send("hi", "alice")
    assert reply.text == "hello there"
    assert "PROBE-NOTE for alice" in injected_text(reply.requests[-1])


async def test_group_line_without_mention_does_not_reach_the_model(probe_bot) -> None:
    reply = await probe_bot.send("just chatting", "alice", "g1", at_bot=False)
    assert reply.requests == [] and reply.texts == []


async def test_a_broken_plugin_fails_loudly_with_its_traceback(probe_bot, tmp_path: Path) -> None:
    from .bot import Bot

    src = write_plugin(tmp_path / "astrbot_plugin_broken", "raise RuntimeError('broken on purpose')\n")
    broken = Bot(probe_bot.server, plugin=src.name)
    broken.core = probe_bot.core
    copy_plugin(src, broken.data / "plugins", src.name)
    await probe_bot.core.plugin_manager.load(specified_dir_name=src.name)
    with pytest.raises(PluginLoadError, match="broken on purpose"):
        broken.check_loaded()
