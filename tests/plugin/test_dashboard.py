"""The dashboard inside the plugin: started and stopped with it, its link only in the owner's DM,
and a port in use never stops the bot."""

from __future__ import annotations

import socket

import aiohttp

from astrbot_plugin_engram.plugin.config import Settings
from astrbot_plugin_engram.plugin.dashboard import start_dashboard, stop_dashboard
from astrbot_plugin_engram.plugin.service import EngramService

from .conftest import OWNER, MakeService, event, request
from .test_commands import mem
from .test_jobs import context, jobs_for, say


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def settings(port: int, **more: object) -> Settings:
    return Settings(owner_ids=(OWNER,), dashboard_port=port, **more)  # type: ignore[arg-type]


async def test_the_link_is_given_only_in_the_owners_private_chat(make_service: MakeService) -> None:
    svc = make_service(settings(free_port()))
    server = await start_dashboard(svc)
    try:
        assert server is not None
        answer = await mem(svc, "mem dashboard")
        token = (svc.data_dir / "dashboard_token").read_text().strip()
        assert answer.startswith(f"Engram dashboard (this machine only): {server.url}?token={token}")
        refusal = "Engram: /mem dashboard answers only in the owner's private chat."
        assert await mem(svc, "mem dashboard", group="g1") == refusal
        assert await mem(svc, "mem dashboard", sender="admin2") == refusal  # an admin, not the owner
        assert token not in await mem(svc, "mem help")
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
            r = await http.get(answer.split(": ", 1)[1].split()[0])
            assert r.status == 200 and "Engram" in await r.text()
    finally:
        await stop_dashboard(svc)
    assert svc.dashboard is None


async def test_the_link_holds_the_running_servers_token_when_the_file_is_gone(
        make_service: MakeService) -> None:
    svc = make_service(settings(free_port()))
    server = await start_dashboard(svc)
    try:
        assert server is not None
        (svc.data_dir / "dashboard_token").unlink()  # deleted by hand, or by a cleanup, while it runs
        link = (await mem(svc, "mem dashboard")).split(": ", 1)[1].split()[0]
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
            r = await http.get(link)
            assert r.status == 200 and "Engram" in await r.text()  # was 401: a new file's new token
    finally:
        await stop_dashboard(svc)


async def test_the_token_survives_a_restart(make_service: MakeService, tmp_path) -> None:
    port = free_port()
    first = make_service(settings(port), data_dir=tmp_path / "d")
    await start_dashboard(first)
    await stop_dashboard(first)
    await first.close()
    token = (tmp_path / "d" / "dashboard_token").read_text()
    second = make_service(settings(port), data_dir=tmp_path / "d")
    assert await start_dashboard(second) is not None  # the same port again: the reload freed it
    await stop_dashboard(second)
    assert (tmp_path / "d" / "dashboard_token").read_text() == token


async def test_a_port_in_use_leaves_the_bot_working(make_service: MakeService, caplog) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        svc: EngramService = make_service(settings(taken.getsockname()[1]))
        assert await start_dashboard(svc) is None
        assert "cannot listen on" in caplog.text
        assert "not running" in await mem(svc, "mem dashboard")
        svc.record_message(event("My cat is called Miso", OWNER))
        await svc.flush()
        req = request("what is my cat called?")
        inj = await svc.inject(event("what is my cat called?", OWNER), req)
        assert inj is not None and "Miso" in inj.text


async def test_disabled_means_no_server(make_service: MakeService) -> None:
    svc = make_service(settings(free_port(), dashboard_enabled=False))
    assert await start_dashboard(svc) is None
    assert "disabled" in await mem(svc, "mem dashboard")


async def test_the_overview_shows_the_jobs_last_runs_as_mem_stats_does(make_service: MakeService) -> None:
    svc, jobs = await jobs_for(make_service, context(), dashboard_port=free_port())
    server = await start_dashboard(svc)
    try:
        assert server is not None
        auth = {"Authorization": f"Bearer {(svc.data_dir / 'dashboard_token').read_text().strip()}"}
        async with aiohttp.ClientSession() as http:
            before = (await (await http.get(server.url + "api/overview", headers=auth)).json())["jobs"]
            assert [(j["name"], j["status"]) for j in before] == [  # not run yet
                ("consolidate", None), ("fade", None), ("merge", None), ("check", None), ("backup", None),
                ("ranking", None)]
            await say(svc, "I just adopted a kitten named Miso")
            await say(svc, "My birthday is on June 3rd", "bob")
            assert "2 added" in await mem(svc, "mem consolidate", group="g1")
            jobs_now = (await (await http.get(server.url + "api/overview", headers=auth)).json())["jobs"]
            [job] = [j for j in jobs_now if j["name"] == "consolidate"]
            page = await (await http.get(server.url, headers={**auth, "Accept-Language": "en"})).text()
        assert job["status"] == "ok" and (job["runs"], job["failures"]) == (1, 0)
        assert job["last"]["added"] == 2 and job["totals"]["added"] == 2
        assert "job consolidate: last run" in await mem(svc, "mem stats", group="g1")  # the same record
        assert "<code>consolidate</code>" in page and "1 / 0" in page
    finally:
        await stop_dashboard(svc)
        await jobs.stop()
