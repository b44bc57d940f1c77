"""A forget reaches what the bot wrote about its days: the diary file, the self-image and its
history, the inner state, and the identity proposals the model made from what is forgotten. None of
them keeps a byte of the forgotten line, searched on disk in every file of the data folder
(``tests/marker.py``); and a diary or self-image job running while the owner forgets cannot write
the forgotten text back (the job and the forget take turns).

The model here repeats what it is shown: an answer tells of the marker only when its prompt held it.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from astrbot_plugin_engram.memory import Memory
from astrbot_plugin_engram.plugin import tools as self_commands  # identity_propose, the model's tool
from astrbot_plugin_engram.plugin.commands.registry import COMMANDS
from astrbot_plugin_engram.plugin.config import Settings
from astrbot_plugin_engram.plugin.jobs.background import Jobs
from astrbot_plugin_engram.plugin.jobs.self_jobs import SelfJobs
from astrbot_plugin_engram.plugin.service import EngramService
from astrbot_plugin_engram.scheduler.self_jobs import DIARY, SELF_IMAGE

from ..marker import MARK, ZH, files_with_marker, traces
from .conftest import OWNER, FakeContext, FakeProvider, MakeService, event
from .test_commands import mem

GROUP = "qq:group:g1"  # public: the self-image may then repeat what was said there (the marker)
ENTRY, IMAGE, MOOD = "entry", "self_image", "mood"
FOLLOWS = "this forget waits for it and follows right after."  # a waiting forget's line (English only)


@dataclass
class EchoContext(FakeContext):
    """AstrBot's chat provider as a model that repeats what it was shown. A call asking for ``held``
    (``entry``: the diary, ``self_image``) tells ``waiting`` and waits for ``gate``."""

    held: str = ""
    gate: asyncio.Event = field(default_factory=asyncio.Event)
    waiting: asyncio.Event = field(default_factory=asyncio.Event)

    async def llm_generate(self, *, chat_provider_id: str, **kwargs: Any) -> Any:
        self.prompts.append({"provider": chat_provider_id, **kwargs})
        prompt = str(kwargs.get("prompt", ""))
        asked = ENTRY if '"entry"' in str(kwargs) else IMAGE if '"self_image"' in str(kwargs) else MOOD
        if asked == self.held:
            self.waiting.set()
            await self.gate.wait()
        seen = " ".join(w for w in (MARK, ZH) if w in prompt)  # what it read, it repeats
        answer = {ENTRY: {"entry": f"A day at the gym with friends. {seen}".strip()},
                  IMAGE: {"self_image": f"I like days with people in them. {seen}".strip()},
                  MOOD: {"mood": "content", "valence": 0.4, "energy": 0.6,
                         "on_mind": f"the gym {seen}".strip()}}[asked]
        return type("Resp", (), {"completion_text": json.dumps(answer, ensure_ascii=False)})()


@dataclass
class Bot:
    svc: EngramService
    ctx: EchoContext
    jobs: Jobs

    async def run(self, job: str) -> Any:
        result = await self.jobs.scheduler.run_now(job)
        await self.jobs.scheduler.idle()  # the self-image follows a new diary
        return result


@pytest.fixture
async def bot(make_service: MakeService) -> AsyncIterator[Bot]:
    """The plugin with the diary and self-image jobs, a day two days ago on which Alice told the
    public group her locker code (the marker) and Bob answered."""
    ctx = EchoContext(chats=[FakeProvider("chat1")])
    # the chats here are Chinese (the markers): the replies these tests read are pinned to English
    svc = make_service(Settings(owner_ids=(OWNER,), timezone="UTC", public_spaces=(GROUP,),
                                reply_language="en"), ctx)
    svc.tz = timezone.utc
    noon = (datetime.now(timezone.utc) - timedelta(days=2)).replace(hour=12)  # a finished day
    svc.record_message(event(f"my locker code is {MARK} {ZH}", "alice", "g1",
                             timestamp=int(noon.timestamp())))
    svc.record_message(event("see you at the gym", "bob", "g1", timestamp=int(noon.timestamp()) + 60))
    await svc.flush()
    jobs = Jobs(svc, catch_up_delay=3600)
    SelfJobs(jobs)
    await jobs.start()
    try:
        yield Bot(svc, ctx, jobs)
    finally:
        ctx.gate.set()  # a test that failed while a job waited for the model: let it end
        await jobs.stop()


async def confirmed(svc: EngramService, line: str, group: str | None = "g1") -> asyncio.Task[str]:
    """Ask for a wide forget, then send the confirmation (running: it may wait for a job)."""
    asked = await mem(svc, line, group=group)
    code = re.search(r"/mem confirm (\d+)", asked)
    assert code, asked
    return asyncio.create_task(mem(svc, f"mem confirm {code.group(1)}", group=group))


async def settled(svc: EngramService, forget: asyncio.Task[str]) -> None:
    """Until the forget is done or waits for the job running now."""
    for _ in range(300):
        lock = getattr(svc, "days_lock", None)
        if forget.done() or (lock is not None and lock.waiting):
            return
        await asyncio.sleep(0.01)


def diary_files(bot: Bot) -> list[str]:
    return [p.read_text("utf-8") for p in sorted((bot.svc.data_dir / "diary").glob("*.md"))]


# ---- the marker search over every file the plugin writes ---------------------------------------
FORGETS = ["forget-person Alice", "forget-place", "forget the diary --with-sources"]


@pytest.mark.parametrize("how", FORGETS)
async def test_a_forget_leaves_no_byte_in_the_diary_self_image_history_inner_state_or_proposals(
        bot: Bot, how: str) -> None:
    await bot.run(DIARY)  # the diary, the inner state, then the self-image: all tell of the marker
    await bot.run(SELF_IMAGE)  # once more: the first self-image goes to identity/history/
    answer = await self_commands.identity_propose(  # the model, answering Alice in the group
        bot.svc, event("remember it for me", "alice", "g1"), f"I keep my friends' codes, like {MARK} {ZH}.",
        "Alice trusted me with hers")
    assert answer.startswith("Proposed (#1)")
    held = files_with_marker(bot.svc.data_dir)
    history = [f for f in held if f.startswith("identity/history/self-image.")]
    assert {"identity/self-image.md", "identity/inner-state.json", "identity/proposals.json"} <= held, held
    assert history, held
    assert any(f.startswith("diary/") for f in held) and any(f.startswith("engram.db") for f in held)

    if how == "forget the diary --with-sources":
        owner = await bot.svc.memory()
        [diary] = await owner.store.memory_ids_of_kind("diary")
        done = await mem(bot.svc, f"mem forget m{diary} --with-sources")  # the owner's private chat
        assert "with the lines it came from: 2 lines" in done
    else:
        done = await (await confirmed(bot.svc, f"mem {how}"))
        assert done.startswith("Forgot ")

    assert traces(bot.svc.data_dir) == []  # open: no file holds any piece of it
    assert "and 1 identity proposal" in done and "erased" in done
    assert all(MARK not in text for text in diary_files(bot))
    await bot.svc.close()
    assert traces(bot.svc.data_dir) == []


async def test_forgetting_a_person_drops_the_proposals_made_answering_them(bot: Bot) -> None:
    """A proposal the model made while answering Alice drew on what she said, even when it neither
    names her nor repeats her words: forgetting her drops it; Bob's stays. The confirmation says so."""
    propose = self_commands.identity_propose
    await propose(bot.svc, event("what should you be?", "alice"), "I want to be braver.", "")
    await propose(bot.svc, event("and you?", "bob"), "I like rainy days.", "")
    asked = await mem(bot.svc, "mem forget-person Alice")
    assert "1 line, 0 memories and 1 identity proposal" in asked
    done = await (await confirmed(bot.svc, "mem forget-person Alice", group=None))
    assert done == "Forgot qq:alice: 1 line, 0 memories and 1 identity proposal erased."
    listed = await mem(bot.svc, "mem proposals")
    assert "I like rainy days." in listed and "braver" not in listed


async def test_forgetting_a_memory_drops_a_proposal_repeating_it(bot: Bot) -> None:
    """The memory was injected in another group and the model repeated it in a proposal there."""
    mid = await (await bot.svc.memory()).add_memory(Memory(f"Alice's locker code is {MARK}", "public"))
    await self_commands.identity_propose(bot.svc, event("hm", "bob", "g2"), f"I guard codes like {MARK}.", "")
    await self_commands.identity_propose(bot.svc, event("hm", "bob", "g2"), "I like rainy days.", "")
    done = await mem(bot.svc, f"mem forget m{mid}")
    assert done == f"Forgot m{mid} (1 version; and 1 identity proposal drawn from it)."
    listed = await mem(bot.svc, "mem proposals")
    assert "I like rainy days." in listed and "guard codes" not in listed


async def test_after_a_forget_the_days_are_told_again_from_what_is_left(bot: Bot) -> None:
    await bot.run(DIARY)
    done = await (await confirmed(bot.svc, "mem forget-person Alice"))
    assert done.startswith("Forgot qq:alice")
    [diary] = diary_files(bot)  # Bob's line is left: the day's diary is written again from it
    assert "A day at the gym" in diary and MARK not in diary
    image = (bot.svc.data_dir / "identity/self-image.md").read_text("utf-8")
    assert image.strip() == "I like days with people in them."
    assert traces(bot.svc.data_dir) == []


# ---- a job running while the owner forgets ---------------------------------------------------
async def forget_alice_while_the_model_writes(bot: Bot, job_name: str, held: str) -> None:
    """Forget Alice while the job ``job_name`` waits for the model's ``held`` answer, then let it end:
    the forget is done and no trace of her is left anywhere."""
    bot.ctx.held = held
    job = asyncio.create_task(bot.jobs.scheduler.run_now(job_name))
    await bot.ctx.waiting.wait()  # the model is writing from what it read, the marker included
    forget = await confirmed(bot.svc, "mem forget-person Alice")
    await settled(bot.svc, forget)
    bot.ctx.gate.set()
    await job
    assert (await forget).startswith("Forgot qq:alice")
    await bot.jobs.scheduler.idle()
    assert traces(bot.svc.data_dir) == []


async def test_a_diary_job_running_during_a_forget_cannot_write_the_forgotten_line_back(bot: Bot) -> None:
    await forget_alice_while_the_model_writes(bot, DIARY, ENTRY)  # from the day's lines
    assert all(MARK not in text for text in diary_files(bot))


def recording_sends(line: str, sent: list[str], monkeypatch: pytest.MonkeyPatch, group: str | None) -> Any:
    """The owner's command event; what the plugin sends through it at once goes to ``sent``."""
    ev = event(line, OWNER, group, admin=True)

    async def send(chain: Any) -> None:
        sent.append(chain.get_plain_text())

    monkeypatch.setattr(ev, "send", send)
    return ev


async def first_said(sent: list[str]) -> None:
    for _ in range(300):
        if sent:
            return
        await asyncio.sleep(0.01)


async def sent_at_once(bot: Bot, line: str, monkeypatch: pytest.MonkeyPatch,
                       group: str | None) -> tuple[asyncio.Task[str], list[str]]:
    """The owner's ``line`` dispatched in the background; once it said something (or 3 s passed): its
    task, and what it sent before its answer."""
    sent: list[str] = []
    ev = recording_sends(line, sent, monkeypatch, group)
    task = asyncio.create_task(COMMANDS.dispatch(bot.svc, ev, line))
    await first_said(sent)
    return task, sent


@pytest.mark.parametrize("job", [DIARY, SELF_IMAGE])
async def test_a_forget_waiting_for_a_job_says_so_at_once_and_then_completes(
        bot: Bot, job: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """While the diary (or self-image) job waits for a slow model, ``/mem confirm`` (or ``/mem forget``)
    is told at once that the forget waits for it; the forget's own answer follows when it is done."""
    if job == SELF_IMAGE:
        await bot.run(DIARY)  # the self-image job needs a diary to tell of
        [diary] = await (await bot.svc.memory()).store.memory_ids_of_kind("diary")
        line, group, answer = f"mem forget m{diary} --with-sources", None, f"Forgot m{diary} with the lines"
    else:
        asked = await mem(bot.svc, "mem forget-person Alice", group="g1")
        code = re.search(r"/mem confirm (\d+)", asked)
        assert code, asked
        line, group, answer = f"mem confirm {code.group(1)}", "g1", "Forgot qq:alice"
    bot.ctx.held = ENTRY if job == DIARY else IMAGE
    running = asyncio.create_task(bot.jobs.scheduler.run_now(job))
    await bot.ctx.waiting.wait()  # the job waits for a slow model, holding the days' turn
    forget, sent = await sent_at_once(bot, line, monkeypatch, group)
    what = "diary" if job == DIARY else "self-image"  # in English, as every /mem reply
    assert sent == [f"Engram: the {what} job is writing now; {FOLLOWS}"]
    assert not forget.done() and not running.done()  # told while the job still waits for the model
    bot.ctx.gate.set()
    await running
    assert (await forget).startswith(answer)  # the answer that follows: the forget is done
    await bot.jobs.scheduler.idle()
    assert traces(bot.svc.data_dir) == [] and len(sent) == 1


async def test_forgetting_a_line_while_the_diary_job_writes_waits_then_leaves_nothing_of_it(
        bot: Bot, monkeypatch: pytest.MonkeyPatch) -> None:
    """``/mem forget e<id>`` sent while the diary job waits for the model (which read that line) is
    told at once that it waits; when the job is done the line is erased, and the diary the job wrote
    from it is written again from what is left: no file keeps a byte of the line."""
    store = (await bot.svc.memory()).store
    [eid] = [i for i, text in await store.episodes_where(place=GROUP) if MARK in text]
    bot.ctx.held = ENTRY
    running = asyncio.create_task(bot.jobs.scheduler.run_now(DIARY))
    await bot.ctx.waiting.wait()  # the model is writing the diary from the day's lines, the marker's too
    forget, sent = await sent_at_once(bot, f"mem forget e{eid}", monkeypatch, "g1")
    assert sent == [f"Engram: the diary job is writing now; {FOLLOWS}"]
    assert not forget.done() and not running.done()  # told at once, while the job still waits
    bot.ctx.gate.set()
    await running
    done = await forget
    assert done == (f"Forgot e{eid}, the line from {GROUP}, with what was drawn from it: "
                    "1 line and 0 memories here (plus whatever other chats hold, not counted here) erased.")
    # (the diary the job wrote from it went too: kept for the owner, it is not counted in the group)
    await bot.jobs.scheduler.idle()
    assert "no episode" in await mem(bot.svc, f"mem show e{eid}", group="g1")
    [diary] = diary_files(bot)  # written again from Bob's line, which stays
    assert "A day at the gym" in diary and MARK not in diary
    assert traces(bot.svc.data_dir) == [] and len(sent) == 1


async def test_a_forget_waiting_for_another_forget_says_so_then_both_complete(
        bot: Bot, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first forget rewrites the day's diary and the model is slow: a second forget sent meanwhile
    is told at once, in English like every /mem reply, that it waits for the first."""
    await bot.run(DIARY)
    lines = await (await bot.svc.memory()).store.episodes_where(place=GROUP)
    [marked] = [i for i, text in lines if MARK in text]
    [gym] = [i for i, text in lines if "gym" in text]
    bot.ctx.held = ENTRY
    first = asyncio.create_task(mem(bot.svc, f"mem forget e{marked}", group="g1"))
    await bot.ctx.waiting.wait()  # the first forget's rewrite: the model writes the day again
    second, sent = await sent_at_once(bot, f"mem forget e{gym}", monkeypatch, "g1")
    assert sent == [f"Engram: another forget is running now; {FOLLOWS}"]
    assert not first.done() and not second.done()
    bot.ctx.gate.set()
    assert (await first).startswith(f"Forgot e{marked}, ")
    assert (await second).startswith(f"Forgot e{gym}, ")
    await bot.jobs.scheduler.idle()
    assert traces(bot.svc.data_dir) == [] and len(sent) == 1


async def test_a_forget_with_no_job_running_says_nothing_before_its_answer(
        bot: Bot, monkeypatch: pytest.MonkeyPatch) -> None:
    await bot.run(DIARY)
    owner = await bot.svc.memory()
    [diary] = await owner.store.memory_ids_of_kind("diary")
    sent: list[str] = []
    line = f"mem forget m{diary} --with-sources"
    done = await COMMANDS.dispatch(bot.svc, recording_sends(line, sent, monkeypatch, None), line)
    assert done.startswith(f"Forgot m{diary} with the lines it came from") and sent == []


async def test_a_self_image_job_running_during_a_forget_cannot_write_the_forgotten_line_back(
        bot: Bot) -> None:
    await bot.run(DIARY)  # a diary (and a self-image) that tell of the marker
    await forget_alice_while_the_model_writes(bot, SELF_IMAGE, IMAGE)  # from that diary


@pytest.mark.parametrize("seed", range(8))
async def test_a_forget_landing_at_any_moment_of_a_job_leaves_nothing(bot: Bot, seed: int) -> None:
    """The forget is sent at a moment picked by ``seed``: before the job reads, while the model
    answers, or while the job writes its answer (the model answers at once here)."""
    rnd = random.Random(seed)
    if seed % 2:
        await bot.run(DIARY)  # then the self-image job races the forget
    job = asyncio.create_task(bot.jobs.scheduler.run_now(SELF_IMAGE if seed % 2 else DIARY))
    for _ in range(rnd.randrange(40)):
        await asyncio.sleep(0)  # a few turns of the loop: the job gets that far
    forget = await confirmed(bot.svc, "mem forget-person Alice")
    await job
    assert (await forget).startswith("Forgot qq:alice")
    await bot.jobs.scheduler.idle()
    assert traces(bot.svc.data_dir) == []
