"""End-to-end fixtures: a temp AstrBot root (set before astrbot is imported), the fake server, a core,
and a free port for the plugin's dashboard (never the default 8765: parallel runs would collide)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio

from .._astrbot_root import use_temp_astrbot_root
from ..fake_openai import FakeOpenAI
from .harness import Lines, astrbot_root, free_port, server_for_module, write_plugin_config

# AstrBot creates data/, its config and its database under $ASTRBOT_ROOT when first imported, so
# the root must be a temp dir before any astrbot import in this process.
use_temp_astrbot_root("engram-astrbot-")


@pytest.fixture(scope="module")
def log_lines() -> Iterator[Lines]:
    """What the engram logger says while the module's bot runs."""
    handler = Lines()
    logging.getLogger("engram").addHandler(handler)
    yield handler
    logging.getLogger("engram").removeHandler(handler)


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAI]:
    """The fake OpenAI server for one module (chat and embeddings)."""
    s = server_for_module()
    yield s
    s.stop()


@pytest.fixture(scope="module")
def dashboard_port() -> int:
    """The port the module's plugin serves its dashboard on: free when the module starts."""
    return free_port()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def bot(server: FakeOpenAI, dashboard_port: int) -> AsyncIterator[object]:
    """A real AstrBot core with the plugin installed from this checkout, on the module's loop."""
    astrbot_root()
    from .bot import Bot  # imports astrbot: only after ASTRBOT_ROOT is set

    b = Bot(server)
    b.install()
    write_plugin_config(b.data, {"dashboard_port": dashboard_port})
    await b.start()
    yield b
    await b.stop()
