"""Recording: every message becomes an episode in the background, in order, durably, once."""

from __future__ import annotations

import asyncio
import logging
import signal
import sqlite3
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import numpy as np
import pytest

from astrbot_plugin_engram.memory import SELF, EmbeddingError
from astrbot_plugin_engram.plugin.config import Settings
from astrbot_plugin_engram.plugin.events import IMAGE_TEXT

from .conftest import OWNER, FakeContext, FakeProvider, Image, MakeService, Plain, episodes, event, request


async def test_group_and_private_lines_are_recorded_in_their_places(service) -> None:
    service.record_message(event("I overheard this", "u1", "g1", name="Ann"))
    service.record_message(event("a secret", "u2"))
    eps = await episodes(service)
    assert [(e.place, e.actor, e.actor_name, e.content) for e in eps] == [
        ("qq:group:g1", "qq:u1", "Ann", "I overheard this"), ("qq:private:u2", "qq:u2", "U2", "a secret")]


async def test_recording_returns_before_the_write(service) -> None:
    await service.memory()
    service.record_message(event("first words", "u1"))
    with sqlite3.connect(service.path) as db:  # read at once, without yielding to the event loop
        assert db.execute("SELECT count(*) FROM episodes").fetchone()[0] == 0  # queued, not yet written
    assert len(await episodes(service)) == 1


async def test_the_bots_reply_is_message_out_by_self_in_the_same_place(service) -> None:
    ev = event("how are you", "u1", "g1")
    service.record_message(ev)
    ev.set_extra("engram_injected", ["m3"])
    service.record_reply(ev, "fine, thanks")
    _, out = await episodes(service)
    assert (out.kind, out.actor, out.place) == ("message_out", SELF, "qq:group:g1")
    assert out.content == "fine, thanks"
    assert out.meta["injected"] == ["m3"]


async def test_blacklisted_places_record_nothing(make_service: MakeService) -> None:
    svc = make_service(Settings(blacklist_spaces=("g9",)))
    ev = event("do not keep this", "u1", "g9")
    svc.record_message(ev)
    svc.record_reply(ev, "ok")
    svc.record_message(event("keep this", "u1", "g1"))
    assert [e.content for e in await episodes(svc)] == ["keep this"]


async def test_engram_commands_are_not_conversation(service) -> None:
    command = event("mem remember the sky is blue", OWNER, admin=True)
    command.is_at_or_wake_command = True  # a DM wakes the bot, so AstrBot routes this to /mem
    service.record_message(command)
    service.record_message(event("/mem stats", OWNER, "g1", admin=True))
    service.record_message(event("memories fade", OWNER))
    assert [e.content for e in await episodes(service)] == ["memories fade"]


async def test_close_keeps_everything_queued_and_a_reload_duplicates_nothing(make_service: MakeService,
                                                                             tmp_path) -> None:
    first = make_service(data_dir=tmp_path / "d")
    for i in range(50):
        first.record_message(event(f"line {i}", "u1", "g1"))
    await first.close()  # no flush: close itself drains the queue
    second = make_service(data_dir=tmp_path / "d")
    second.record_message(event("after reload", "u1", "g1"))
    eps = await episodes(second)
    assert [e.content for e in eps] == [f"line {i}" for i in range(50)] + ["after reload"]
    assert [e.seq for e in eps] == list(range(1, 52))


async def test_a_vision_provider_captions_an_image_in_its_place(make_service: MakeService) -> None:
    vision = FakeProvider("vis", config={"modalities": ["text", "image"]}, delay=0.2,
                          answer="A cat\non a sofa.")
    ctx = FakeContext(chats=[vision])
    svc = make_service(context=ctx)
    svc.record_message(event("", "u1", "g1", components=[Image(file="https://x/cat.png")]))
    svc.record_message(event("cute!", "u2", "g1"))
    eps = await episodes(svc)
    assert [(e.kind, e.content) for e in eps] == [("image", f"{IMAGE_TEXT}: A cat on a sofa."),
                                                  ("message_in", "cute!")]
    assert ctx.prompts[0]["image_urls"] == ["https://x/cat.png"]


async def test_without_a_vision_provider_an_image_is_just_sent(make_service: MakeService) -> None:
    ctx = FakeContext(chats=[FakeProvider("text-only", config={"modalities": ["text"]})])
    svc = make_service(context=ctx)
    svc.record_message(event("", "u1", components=[Plain(""), Image(file="https://x/a.png")]))
    [ep] = await episodes(svc)
    assert (ep.kind, ep.content) == ("image", IMAGE_TEXT) and ctx.prompts == []


async def test_a_chat_provider_that_times_out_still_records_the_image(make_service: MakeService,
                                                                      monkeypatch) -> None:
    monkeypatch.setattr("astrbot_plugin_engram.plugin.providers.CAPTION_TIMEOUT", 0.1)
    slow = FakeProvider("vis", config={"modalities": ["image"]}, delay=5)
    svc = make_service(context=FakeContext(chats=[slow]))
    svc.record_message(event("", "u1", components=[Image(file="https://x/a.png")]))
    [ep] = await episodes(svc)
    assert ep.content == IMAGE_TEXT


class CancelSwallowingEmbedder:
    """Turns a cancel into another error, as the store's rollback can when a cancel hits mid-commit."""

    name = "swallow"

    async def embed(self, texts: list[str], kind: str = "passage") -> np.ndarray:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            raise EmbeddingError("interrupted") from None
        raise AssertionError


async def test_close_never_hangs_when_a_cancel_surfaces_as_another_error(make_service: MakeService) -> None:
    svc = make_service(embedder=CancelSwallowingEmbedder())
    svc.record_message(event("something to embed", "u1"))
    await svc.flush()
    await asyncio.sleep(0.05)  # the indexer is now inside embed()
    await asyncio.wait_for(svc.close(), 10)
    assert svc.engram is None


async def test_a_very_long_message_is_kept_capped_and_odd_events_do_not_crash(service) -> None:
    service.record_message(event("tea " * 20_000, "u1"))
    service.record_message(event("no sender here", None, ""))
    long, odd = await episodes(service)
    assert len(long.content) == 16_000 and long.meta["truncated_from"] == 79_999  # stripped
    assert (odd.place, odd.actor) == ("qq:group:unknown", "qq:unknown")
    assert await service.inject(event("who?", None, ""), request("who?")) is not None


@contextmanager
def alarm(seconds: float) -> Iterator[None]:
    """Interrupts code that never yields to the event loop (``asyncio.wait_for`` cannot)."""
    def ring(signum: int, frame: Any) -> None:
        raise TimeoutError(f"still running after {seconds} s without yielding to the event loop")
    old = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


async def _record_at_once(svc: Any, monkeypatch: Any) -> None:
    """The core acknowledges in the write task's first step: the task is finished before the
    recorder's own bookkeeping for it (a done-callback, one loop turn later) has run."""
    mem = await svc.memory()

    async def record(ep: Any) -> int:
        return 1
    monkeypatch.setattr(mem, "record", record)


async def test_flush_returns_when_a_write_finished_before_its_callback_ran(service, monkeypatch) -> None:
    await _record_at_once(service, monkeypatch)
    service.record_message(event("hello", "u1"))
    with alarm(5):
        await service.flush()
    assert service.recording._writes == set()


async def test_close_returns_when_a_write_finished_before_its_callback_ran(service, monkeypatch) -> None:
    await _record_at_once(service, monkeypatch)
    service.record_message(event("hello", "u1"))
    with alarm(5):
        await service.close()
    assert service.engram is None


async def test_close_is_bounded_and_logs_what_it_could_not_write(make_service: MakeService, monkeypatch,
                                                                 caplog) -> None:
    svc = make_service()
    stuck = asyncio.Event()

    async def never_captioned(event: Any, parsed: Any, umo: Any) -> list[Any]:
        stuck.set()
        await asyncio.Event().wait()
        return []
    monkeypatch.setattr(svc, "_captioned", never_captioned)
    svc.record_message(event("", "u1", components=[Image(file="https://x/a.png")]))
    svc.record_message(event("after the image", "u1"))
    await stuck.wait()
    t = asyncio.get_running_loop().time()
    await svc.close(timeout=0.5)
    assert asyncio.get_running_loop().time() - t < 3
    assert "without recording 2 queued messages" in caplog.text


async def test_a_command_astrbot_matched_for_any_plugin_is_not_conversation(service) -> None:
    from astrbot.core.star.filter.command import CommandFilter
    from astrbot.core.star.star_handler import EventType, StarHandlerMetadata

    async def handler(event: Any) -> None:
        return None
    reset = StarHandlerMetadata(EventType.AdapterMessageEvent, "builtin_commands", "reset", "reset",
                                handler, event_filters=[CommandFilter("reset")])
    command = event("reset", "u1")
    command.set_extra("activated_handlers", [reset])
    service.record_message(command)
    service.record_message(event("reset my password please", "u1"))
    assert [e.content for e in await episodes(service)] == ["reset my password please"]


async def qq_event(segments: list[dict[str, Any]], group: int | None = 5) -> Any:
    """A message event exactly as AstrBot's aiocqhttp adapter builds it from a OneBot (NapCat) event."""
    from types import SimpleNamespace

    from aiocqhttp import Event
    from astrbot.api.platform import AstrMessageEvent, PlatformMetadata
    from astrbot.core.platform.sources.aiocqhttp.aiocqhttp_platform_adapter import AiocqhttpAdapter

    payload = {"post_type": "message", "message_type": "group" if group else "private", "sub_type": "normal",
               "message_id": 1, "user_id": 10001, "self_id": 9, "time": 1, "font": 0, "raw_message": "",
               "message": segments, "sender": {"user_id": 10001, "nickname": "Ann"},
               **({"group_id": group} if group else {})}
    adapter = SimpleNamespace(bot=None)  # only text and image segments: the adapter never asks the bot
    abm = await AiocqhttpAdapter._convert_handle_message_event(adapter, Event.from_payload(payload))  # type: ignore[arg-type]
    return AstrMessageEvent(abm.message_str, abm, PlatformMetadata("aiocqhttp", "QQ", "qq1"), abm.session_id)


PHOTO = {"type": "image", "data": {"summary": "", "file": "5A1B.jpg", "sub_type": 0, "file_size": "80211",
                                   "url": "https://multimedia.nt.qq.com.cn/download?fileid=photo"}}
STICKER = {"type": "image", "data": {"summary": "[动画表情]", "file": "9C2D.gif", "sub_type": 1,
                                     "file_size": "4512",
                                     "url": "https://multimedia.nt.qq.com.cn/download?fileid=sticker"}}


async def test_qq_stickers_are_not_recorded_or_captioned_but_photos_are(make_service: MakeService) -> None:
    vision = FakeProvider("vis", config={"modalities": ["text", "image"]}, answer="a mountain lake")
    ctx = FakeContext(chats=[vision], platforms=["aiocqhttp"])
    svc = make_service(context=ctx)
    svc.record_message(await qq_event([STICKER]))
    svc.record_message(await qq_event([{"type": "text", "data": {"text": "lol"}}, STICKER]))
    svc.record_message(await qq_event([PHOTO]))
    eps = await episodes(svc)
    assert [(e.kind, e.content) for e in eps] == [("message_in", "lol"),
                                                  ("image", f"{IMAGE_TEXT}: a mountain lake")]
    assert [p["image_urls"] for p in ctx.prompts] == [[PHOTO["data"]["url"]]]  # type: ignore[index]


async def test_finished_writes_are_not_kept_without_a_flush(service) -> None:
    for i in range(20):
        service.record_message(event(f"line {i}", "u1", "g1"))
    rec = service.recording
    for _ in range(200):  # a bot never flushes: the writes must still let go of their tasks
        await asyncio.sleep(0.01)
        if not rec._writes and rec._queue is not None and rec._queue.empty():
            break
    assert rec._writes == set()


async def test_a_store_that_cannot_open_is_said_once_in_full_then_its_recovery(
        make_service: MakeService, caplog: pytest.LogCaptureFixture) -> None:
    """The lines said while it could not open were lost; now they are kept beside it (``-kept``) and
    written, before the newer one, once a store opens there."""
    svc = make_service()
    svc.path.parent.mkdir(parents=True, exist_ok=True)
    svc.path.write_bytes(b"not a database, " * 512)  # a file that is not SQLite: every open fails
    with caplog.at_level(logging.DEBUG, "engram"):
        for n in range(3):
            svc.record_message(event(f"lost line {n}", "u1"))
        await svc.flush()
        loud = [r for r in caplog.records if r.levelno >= logging.WARNING and "record" in r.getMessage()]
        assert len(loud) == 1 and loud[0].exc_info is not None  # once, with its traceback, not 3 times
        assert "messages are not being recorded" in loud[0].getMessage() and "kept in" in loud[0].getMessage()
        svc.path.unlink()  # the owner moves the broken file away
        svc.record_message(event("new line", "u1"))
        assert [e.content for e in await episodes(svc)] == ["lost line 0", "lost line 1", "lost line 2",
                                                            "new line"]
    assert "messages are recorded again (3 failed meanwhile)" in caplog.text
    assert "3 kept messages written" in caplog.text


async def test_a_store_found_damaged_while_running_is_said_once_not_per_message(
        service, caplog: pytest.LogCaptureFixture) -> None:
    """After the weekly check found the store damaged (every write is refused from then on), the
    recorder logged an error for every message the bot saw, all day long."""
    service.record_message(event("before", "u1"))
    await service.flush()
    (await service.memory()).store.damage = "the store is damaged (found by the check in the background)"
    with caplog.at_level(logging.DEBUG, "engram"):
        for n in range(5):  # one at a time, as a quiet chat's messages come
            service.record_message(event(f"after {n}", "u1"))
            await service.flush()
    loud = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(loud) == 1 and "not being recorded" in loud[0] and "damaged" in loud[0], loud
    assert "recorded again" not in caplog.text


async def disk_full(svc: Any, full: bool) -> None:
    """The store's file may not grow (SQLite's ``max_page_count``: the SQLITE_FULL error a full disk
    gives), or may again."""
    writer = (await svc.memory()).store._writer
    [(pages,)] = await writer.execute_fetchall("PRAGMA page_count")
    await writer.execute_fetchall(f"PRAGMA max_page_count={pages if full else 1 << 30}")


async def test_messages_said_while_the_disk_is_full_are_kept_and_written_once_there_is_room(
        service, caplog: pytest.LogCaptureFixture) -> None:
    """A full disk (here SQLite's page limit) failed every message: each was dropped, with an error
    line apiece, and none of them was written when space came back."""
    service.record_message(event("before", "u1"))
    await service.flush()
    await disk_full(service, True)
    with caplog.at_level(logging.DEBUG, "engram"):
        for n in range(5):
            service.record_message(event(f"while full {n} " + "words " * 200, "u1"))
        await service.flush()
        loud = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
        assert len([m for m in loud if "not being recorded" in m]) == 1, loud
        assert "full" in loud[0] and "kept" in loud[0] and not [m for m in loud if "was not recorded" in m]
        await disk_full(service, False)
        service.record_message(event("after", "u1"))
        said = [e.content.split(" words")[0] for e in await episodes(service)]
    assert said == ["before", *(f"while full {n}" for n in range(5)), "after"]  # all of them, in order
    assert "messages are recorded again" in caplog.text and "5 kept messages written" in caplog.text


async def test_kept_messages_are_written_when_room_returns_without_a_new_message(
        service, monkeypatch: pytest.MonkeyPatch) -> None:
    from astrbot_plugin_engram.plugin.hooks import record_queue as recording

    monkeypatch.setattr(recording, "RETRY", 0.2)
    service.record_message(event("before", "u1"))
    await service.flush()
    await disk_full(service, True)
    service.record_message(event("while full " + "words " * 200, "u1"))
    await service.flush()
    await disk_full(service, False)
    for _ in range(50):
        await asyncio.sleep(0.05)
        if not service.recording.held:
            break
    assert [e.content.split(" words")[0] for e in await episodes(service)] == ["before", "while full"]


async def test_messages_said_while_the_data_folder_is_read_only_are_kept_until_it_opens(
        make_service: MakeService, tmp_path: Any, caplog: pytest.LogCaptureFixture) -> None:
    """The data folder read-only when the bot starts (a real read-only tmpfs): the store could not
    be opened and every message was dropped."""
    from ..small_disk import remount, small_disk

    with small_disk(tmp_path / "disk", 8192) as disk:
        first = make_service(data_dir=disk / "data")
        first.record_message(event("before", "u1"))
        await first.flush()
        await first.close()
        remount(disk, "ro")
        try:
            svc = make_service(data_dir=disk / "data")
            with caplog.at_level(logging.DEBUG, "engram"):
                for n in range(3):
                    svc.record_message(event(f"while read-only {n}", "u1"))
                await svc.flush()
            loud = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING
                    and "not being recorded" in r.getMessage()]
            assert len(loud) == 1 and "read-only" in loud[0] and "kept" in loud[0], loud
        finally:
            remount(disk, "rw")
        svc.record_message(event("after", "u1"))
        said = [e.content for e in await episodes(svc)]
        await svc.close()
    assert said == ["before", "while read-only 0", "while read-only 1", "while read-only 2", "after"]


async def test_a_message_whose_write_was_under_way_when_the_disk_filled_keeps_its_place(
        service, monkeypatch: pytest.MonkeyPatch) -> None:
    """A long message's commit fails for want of room while a short one said just after it waits for
    the next commit, which fits in the room left in the file's pages: the short one was stored, and
    the long one written after it once there was room, so the two were stored out of order."""
    service.record_message(event("before", "u1"))
    await service.flush()
    store = (await service.memory()).store
    real_transaction, started, gate = store.transaction, asyncio.Event(), asyncio.Event()

    class FirstHeld:  # a transaction's writes, its first batch of episodes held before it is written
        def __init__(self, tx: Any):
            self.tx = tx

        def __getattr__(self, name: str) -> Any:  # every other write as it is
            return getattr(self.tx, name)

        async def add_episodes(self, *args: Any, **kw: Any) -> Any:
            if not started.is_set():
                started.set()
                await gate.wait()
            return await self.tx.add_episodes(*args, **kw)

    @asynccontextmanager
    async def first_held_at_its_commit(*args: Any, **kw: Any) -> AsyncIterator[Any]:
        async with real_transaction(*args, **kw) as tx:
            yield FirstHeld(tx)

    real_append = store.append_episodes

    async def first_held_append(*args: Any, **kw: Any) -> Any:  # recording's shortcut, held the same way
        if not started.is_set():
            started.set()
            await gate.wait()
        return await real_append(*args, **kw)

    monkeypatch.setattr(store, "transaction", first_held_at_its_commit)
    monkeypatch.setattr(store, "append_episodes", first_held_append)
    await disk_full(service, True)
    service.record_message(event("long " + "words " * 3000, "u1"))
    await asyncio.wait_for(started.wait(), 5)
    service.record_message(event("short", "u1"))  # queued behind the long one's commit
    for _ in range(20):
        await asyncio.sleep(0)
    gate.set()
    await service.flush()
    await disk_full(service, False)
    service.record_message(event("after", "u1"))
    assert [e.content.split(" ")[0] for e in await episodes(service)] == ["before", "long", "short", "after"]
