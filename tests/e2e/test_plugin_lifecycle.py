"""The plugin's lifecycle in a real AstrBot, as its dashboard drives it: three reloads in a row, a
disable and an enable, an uninstall while it runs. Each time every line said before is in the file
once, the store's file handles, threads and the dashboard's port are given back (the next start binds
the same port and opens the same file), and one scheduler runs."""

from __future__ import annotations

import gc
import logging
import os
import sys
import threading
from typing import Any

import pytest

from .harness import ADMIN, PLUGIN_DIR, episodes, listening

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]


def store_handles() -> list[str]:
    """The open file handles of this process on the plugin's store (engram.db and its -wal, -shm)."""
    out = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if f"plugin_data/{PLUGIN_DIR}/engram.db" in target:
            out.append(target)
    return sorted(out)


def schedulers(runner: Any = None) -> list[Any]:
    """The plugin's running schedulers (``runner``: its scheduler module, kept across an uninstall)."""
    runner = runner or sys.modules[f"data.plugins.{PLUGIN_DIR}.scheduler.runner"]
    return [s for s in runner.LIVE.values() if s.running]


def threads() -> list[str]:
    """This process's threads, but the event loop's worker pool (it grows on demand, up to its cap)."""
    return sorted(t.name for t in threading.enumerate() if not t.name.startswith("asyncio_"))


def said(bot: Any, prefix: str) -> list[str]:
    return [e["content"] for e in episodes(bot.data) if e["content"].startswith(prefix)]


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts file handles through /proc")
async def test_three_reloads_leak_nothing_and_lose_nothing(bot, dashboard_port: int, caplog) -> None:
    caplog.set_level(logging.INFO, logger="engram")
    await bot.send("reload line start", "u1")
    await bot.settle()
    gc.collect()
    handles, before = store_handles(), len(threads())
    assert handles  # the store is open: the count below is of something
    for n in range(3):
        await bot.send(f"reload line {n}", "u1", "g-reload")
        await bot.reload_plugin()  # terminate(), then a fresh import and initialize()
        assert listening(dashboard_port)  # the same port bound again ("address in use" would leave it off)
        await bot.send(f"reload line after {n}", "u1", "g-reload")
        await bot.settle()
        gc.collect()
        assert store_handles() == handles, n
        assert len(threads()) <= before, threads()  # fewer is fine: the last module's core winding down
        live = schedulers()
        assert len(live) == 1 and live[0].running
    assert sorted(said(bot, "reload line")) == sorted(
        ["reload line start"] + [f"reload line {n}" for n in range(3)]
        + [f"reload line after {n}" for n in range(3)])
    assert (await bot.send("/mem stats", ADMIN)).text.startswith("Engram here (e2e:private:owner1)")
    engram = [r for r in caplog.records if r.name.startswith("engram")]
    assert engram  # the plugin's lines were caught: none of them is an error or a lock
    assert not [r.getMessage() for r in engram if r.levelno >= logging.ERROR or "locked" in r.getMessage()]


async def test_disabled_records_nothing_serves_nothing_and_enabled_again_goes_on(
        bot, dashboard_port: int) -> None:
    pm, name = bot.core.plugin_manager, bot.metadata().name
    await bot.send("before disable", "u2")
    await pm.turn_off_plugin(name)
    assert not listening(dashboard_port) and not schedulers() and not store_handles()
    reply = await bot.send("while disabled", "u2")
    assert reply.text == "noted"  # the bot still answers, without Engram
    await pm.turn_on_plugin(name)  # AstrBot reloads it; terminate() is called a second time
    bot.check_loaded()
    assert listening(dashboard_port) and len(schedulers()) == 1
    await bot.send("after enable", "u2")
    await bot.settle()
    assert said(bot, "before disable") == ["before disable"]
    assert said(bot, "after enable") == ["after enable"]
    assert not said(bot, "while disabled")


async def test_uninstall_while_running_writes_what_was_said_and_lets_go(bot,
                                                                       dashboard_port: int) -> None:
    await bot.send("said just before the uninstall", "u3")
    runner = sys.modules[f"data.plugins.{PLUGIN_DIR}.scheduler.runner"]  # AstrBot unloads the module
    await bot.core.plugin_manager.uninstall_plugin(bot.metadata().name)
    assert not listening(dashboard_port) and not schedulers(runner) and not store_handles()
    assert said(bot, "said just before the uninstall") == ["said just before the uninstall"]
