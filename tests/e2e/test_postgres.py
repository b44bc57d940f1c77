"""The plugin in the real AstrBot with its memory in PostgreSQL (the ``database_url`` setting, on the
session's throwaway server): a representative subset of ``test_engram`` run again on it (privacy of
injection and of the tools, /mem, restarts keeping everything), and the lines in the database, with
no SQLite file made. The tests that read the SQLite file directly stay SQLite's."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest
import pytest_asyncio

from ..fake_openai import FakeOpenAI
from .harness import ADMIN, PLUGIN_DIR, astrbot_root, injected_text, write_plugin_config
from .test_engram import (  # noqa: F401  (run again here, with this module's bot)
    test_admin_remembers_and_recalls,
    test_group_fact_reaches_only_that_group,
    test_memory_recall_tool_returns_only_what_this_chat_may_see,
    test_memory_remember_tool_stores_in_this_place_only,
    test_non_admin_cannot_forget,
    test_private_fact_reaches_only_its_own_chat,
)

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]


@pytest.fixture(scope="module")
def database(postgres_server: Any) -> str:
    return str(postgres_server.fresh_database())


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def bot(server: FakeOpenAI, dashboard_port: int, database: str) -> AsyncIterator[object]:
    astrbot_root()
    from .bot import Bot

    b = Bot(server)
    b.install()
    write_plugin_config(b.data, {"dashboard_port": dashboard_port, "database_url": database})
    await b.start()
    yield b
    await b.stop()


def lines(database: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(database) as db:
        return db.execute("SELECT id, space, actor, content FROM episodes ORDER BY id").fetchall()


async def test_lines_go_to_the_database_and_survive_a_restart(bot: Any, database: str) -> None:
    await bot.send("/mem remember The boiler was serviced in March", ADMIN)
    await bot.send("My locker number is 5150.", "kim")
    await bot.settle()
    before = lines(database)
    assert any("5150" in r[3] for r in before)
    assert not list((bot.data / "plugin_data" / PLUGIN_DIR).rglob("*.db"))  # no SQLite file beside it

    await bot.stop()
    await bot.start()
    assert lines(database)[: len(before)] == before  # nothing lost, nothing duplicated
    assert "March" in (await bot.send("/mem recall boiler serviced", ADMIN)).text
    await bot.send("/reset", "kim")
    asked = await bot.send("What is my locker number?", "kim")
    assert "5150" in injected_text(asked.requests[-1])


async def test_a_forget_erases_the_line_from_the_database(bot: Any, database: str) -> None:
    await bot.send("My old bank PIN hint was Quokka77, please forget it later.", ADMIN)
    await bot.settle()
    eid = next(r[0] for r in lines(database) if "Quokka77" in r[3])
    with psycopg.connect(database) as db:
        assert db.execute("SELECT 1 FROM episode_words WHERE word = 'quokka77'").fetchall()
    gone = (await bot.send(f"/mem forget e{eid}", ADMIN)).text
    assert gone.startswith(f"Forgot e{eid}")
    assert not [r for r in lines(database) if "Quokka77" in r[3]]
    assert "Quokka77" not in (await bot.send("/mem recall bank PIN hint", ADMIN)).text
    with psycopg.connect(database) as db:  # nor in its keyword rows
        assert not db.execute("SELECT 1 FROM episodes_kw WHERE id = %s", (eid,)).fetchall()
        assert not db.execute("SELECT 1 FROM episode_words WHERE word = 'quokka77'").fetchall()
