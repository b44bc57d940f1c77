"""Serving: the port is free after stop, a port in use is one clear log line, the CLI's rules,
and the dashboard's connection cannot write."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import aiohttp
import pytest

from astrbot_plugin_engram.dashboard import DashboardServer, DashboardSettings, make_app, stored_token
from astrbot_plugin_engram.memory import Engram, StoreError

from ..conftest import HashEmbedder
from .conftest import TOKEN


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_stop_frees_the_port_and_a_restart_takes_it_again(seeded):
    path, _ = seeded
    engram = await Engram.open(path, HashEmbedder(), background=False)
    port = free_port()
    try:
        for _ in range(3):  # what a plugin reload does: stop, then start on the same port
            server = DashboardServer(make_app(engram, DashboardSettings(token=TOKEN)), "127.0.0.1", port)
            assert await server.start()
            async with aiohttp.ClientSession() as http:  # a client keeps its connection open
                r = await http.get(f"{server.url}api/overview", headers={"Authorization": f"Bearer {TOKEN}"})
                assert r.status == 200
                await server.stop()
            with socket.socket() as s:  # nobody listens there any more (SO_REUSEADDR: TIME_WAIT is fine)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind(("127.0.0.1", port))
                s.listen()
    finally:
        await engram.close()


async def test_a_port_in_use_is_logged_and_start_returns_false(seeded, caplog):
    path, _ = seeded
    engram = await Engram.open(path, HashEmbedder(), background=False)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        server = DashboardServer(make_app(engram, DashboardSettings(token=TOKEN)), "127.0.0.1", port)
        with caplog.at_level(logging.ERROR, "engram.dashboard"):
            assert await server.start() is False
        assert f"cannot listen on 127.0.0.1:{port}" in caplog.text and "goes on without" in caplog.text
        assert not server.running
        await server.stop()  # harmless
    await engram.close()


@pytest.mark.parametrize("token", ["", "x" * 15])
def test_an_app_without_a_long_enough_token_is_refused(token):
    with pytest.raises(ValueError, match="token"):
        make_app(lambda: None, DashboardSettings(token=token))  # type: ignore[arg-type,return-value]


def test_the_token_is_made_once_and_kept_private(tmp_path: Path):
    token = stored_token(tmp_path)
    assert len(token) >= 24 and stored_token(tmp_path) == token
    assert (tmp_path / "dashboard_token").stat().st_mode & 0o077 == 0
    assert [p.name for p in tmp_path.iterdir()] == ["dashboard_token"]  # no temp file left beside it


def test_a_token_file_too_short_or_empty_is_replaced_whole(tmp_path: Path):
    (tmp_path / "dashboard_token").write_text("")  # a write cut short, or a hand edit
    token = stored_token(tmp_path)
    assert len(token) >= 24 and (tmp_path / "dashboard_token").read_text() == token + "\n"


async def test_the_dashboards_connection_cannot_write(seeded):
    path, ids = seeded
    engram = await Engram.open(path, HashEmbedder(), background=False)
    try:
        browser = await engram.browser()
        assert browser is not engram.store and browser.read_only  # its own connections, read-only
        for sql in ("DELETE FROM memories", "UPDATE memories SET text = 'x'",
                    "INSERT INTO aliases VALUES ('p', 'a', 0, 0)", "CREATE TABLE t(x)"):
            with pytest.raises(sqlite3.OperationalError, match="readonly"):
                await browser._reader.execute(sql)  # type: ignore[attr-defined]
            with pytest.raises(sqlite3.OperationalError, match="readonly"):
                browser._quick.execute(sql)  # type: ignore[attr-defined]
        with pytest.raises(StoreError, match="read-only"):
            async with browser.transaction() as tx:
                await tx.delete_memories([ids["second"]])
        assert (await engram.get(ids["second"])).text.startswith("王磊")
    finally:
        await engram.close()


async def test_a_read_only_engram_cannot_write_at_all(seeded):
    path, ids = seeded
    engram = await Engram.open(path, HashEmbedder(), read_only=True)
    try:
        assert await engram.browser() is engram.store
        with pytest.raises(StoreError, match="read-only"):
            await engram.forget([ids["second"]])
        assert await engram.recall("王磊 生日", engram_audience())  # recall works on what is stored
    finally:
        await engram.close()


def engram_audience():
    from astrbot_plugin_engram.memory import Audience

    return Audience(place="qq:group:5150")


def run_cli(
    *args: str, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "astrbot_plugin_engram.dashboard", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def test_cli_refuses_a_public_address_without_a_token(seeded):
    path, _ = seeded
    env = {"ENGRAM_DASHBOARD_TOKEN": ""}
    r = run_cli("--db", str(path), "--host", "0.0.0.0", env=env)
    assert r.returncode == 2
    assert "refusing to listen on 0.0.0.0 without a token" in r.stderr


def test_cli_refuses_a_short_token_that_could_be_guessed(seeded):
    path, _ = seeded
    r = run_cli("--db", str(path), "--host", "0.0.0.0", env={"ENGRAM_DASHBOARD_TOKEN": "secret"})
    assert r.returncode == 2
    assert "$ENGRAM_DASHBOARD_TOKEN is 6 characters; a token needs at least 16" in r.stderr


def test_cli_refuses_a_missing_store(tmp_path):
    r = run_cli(
        "--db", str(tmp_path / "none.db"), "--embedder", "none", env={"ENGRAM_DASHBOARD_TOKEN": TOKEN}
    )
    assert r.returncode == 2 and "no store at" in r.stderr
    assert not (tmp_path / "none.db").exists()


async def test_cli_serves_the_store_read_only_and_prints_a_generated_token(seeded):
    path, _ = seeded
    before = path.read_bytes()
    port = free_port()
    env = {**os.environ, "ENGRAM_DASHBOARD_TOKEN": ""}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "astrbot_plugin_engram.dashboard",
        "--db",
        str(path),
        "--port",
        str(port),
        "--embedder",
        "none",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    try:
        assert proc.stdout is not None
        token = url = ""
        while not url:
            line = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
            assert line, "the CLI ended early"
            if "this run's token:" in line:
                token = line.rsplit(":", 1)[1].strip()
            if line.startswith("Engram dashboard:"):
                url = line.split(": ", 1)[1].strip()
        assert token and url == f"http://127.0.0.1:{port}/?token={token}"
        # unsafe=True: aiohttp's client (unlike a browser) otherwise drops cookies set by an IP address
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
            r = await http.get(url)  # the link: cookie, redirect, page
            assert r.status == 200 and "Engram" in await r.text()
            assert str(r.url) == f"http://127.0.0.1:{port}/"
            r = await http.get(f"http://127.0.0.1:{port}/api/recall?q=生日&space=qq:group:5150")
            assert r.status == 200 and (await r.json())["hits"]
            r = await http.post(f"http://127.0.0.1:{port}/api/memories", data={"text": "x"})
            assert r.status == 405
    finally:
        proc.terminate()
        await proc.wait()
    assert path.read_bytes() == before  # nothing written to the store
