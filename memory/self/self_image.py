"""The self-image: a short "how I see myself", rewritten from the recent diaries after each diary.

It may be read in any chat (scope ``self``), so code checks it carries no private details
(``private_details``): an answer that names anyone or repeats a private fact is refused and nothing changes.
The prompt lists the private names to leave out, so fewer answers are refused; the check decides.
The memory (kind ``reflection``, scope ``self``, about the bot) gets a new superseding version
first, then the file (its previous version to ``identity/history/``); a stop between the two is
repaired at the next open (``self_image_file``). The current version cites the diaries' episodes (the
why the dashboard shows); an earlier version keeps its text but no sources (it would cite each line
seven times more than its diary does: most of the store's growth). A forget that reaches a diary
takes every version of the self-image (``forgetting``), as when each version cited its lines.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from ..chat import ChatModel
from ..kernel import Kernel
from ..model import SELF, Memory, aware, next_version, now_utc
from ..prompts.answers import json_object, text_field
from ..prompts.templates import language, templates
from ..scopes import SELF as SELF_SCOPE
from .diary import TIMEOUT, recent_diaries
from .diary_files import data_folder, diary_day
from .identity import IdentityFolder
from .private_details import (
    PrivateDetails,
    kinds,
    known_names,
    leaks,
    names_to_leave_out,
    private_details,
)
from .self_image_file import DIARIES, KIND, current_self_image, done, finish_self_image, note_pending

log = logging.getLogger("engram.self_image")

MAX_IMAGE = 1500  # characters
NOTHING = {"en": "(nothing yet)", "zh": "（还没有）"}


@dataclass(frozen=True)
class SelfImageResult:
    """``status``: ``written``, ``no_diaries`` or ``refused`` (it leaked: ``leaked`` says what)."""

    status: str
    text: str = ""
    memory_id: int | None = None
    kept: Path | None = None
    leaked: list[str] = field(default_factory=list)

    def stats(self) -> dict[str, int]:
        return {"written": int(self.status == "written"), "refused": int(self.status == "refused")}


async def write_self_image(engram: Kernel, chat_model: ChatModel, *, folder: Path | None = None,
                           diaries: int = DIARIES, is_public: Callable[[str], bool] = lambda place: False,
                           now: datetime | None = None) -> SelfImageResult:
    """Rewrite ``identity/self-image.md`` from the recent diaries (ChatError, WrongShape: no change)."""
    folder = folder or data_folder(engram)
    await finish_self_image(engram, folder, now)  # the last one stopped before its file: it follows first
    ids = IdentityFolder(folder)
    recent = await recent_diaries(engram, diaries)
    if not recent:
        return SelfImageResult("no_diaries")
    lang = language([d.text for d in recent])
    details = await _details(engram, recent, is_public, ids.core().text)
    system, user = templates("self_image", lang)
    filled = user.safe_substitute(
        persona=ids.core().text or NOTHING[lang], previous=ids.self_image().text or NOTHING[lang],
        diaries="\n\n".join(f"[{_day(folder, d)}]\n{d.text}" for d in recent),
        leave_out=names_to_leave_out(details, lang))
    prompt = [{"role": "system", "content": system}, {"role": "user", "content": filled}]
    reply = await chat_model.complete(prompt, json=True, timeout=TIMEOUT)
    text = text_field(json_object(reply.text, ("self_image",)), "self_image", MAX_IMAGE)
    found = leaks(text, details)
    if found:
        # what kind of detail and from which diaries, never the detail: the log is shown in AstrBot's WebUI
        log.warning("Engram: a new self-image was refused, it carried private details (%s); written from "
                    "the diaries %s", kinds(found), ", ".join(f"m{d.id}" for d in recent))
        return SelfImageResult("refused", text, leaked=found)
    old = await current_self_image(engram)
    sources = tuple(sorted({s for d in recent for s in d.sources}))
    note_pending(folder, old)  # the memory first, then the file (``self_image_file``)
    if old is not None and old.id is not None:  # made ``now`` (the forget's reach counts from it)
        at = aware(now or now_utc())
        [mid] = await engram.commit_memories(
            [(next_version(old, at, text=text, sources=sources, valid_from=at, valid_to=None), old.id)], {})
        await _unlink_earlier(engram, mid)
    else:
        mid = await engram.add_memory(Memory(text=text, scope=SELF_SCOPE, kind=KIND, subjects=(SELF,),
                                             sources=sources, importance=0.5,
                                             created_at=aware(now or now_utc())))
    kept = ids.replace(ids.image_path, text, now)
    done(folder)
    return SelfImageResult("written", text, mid, kept)


async def _unlink_earlier(engram: Kernel, current: int) -> None:
    """The earlier versions' sources dropped (all of them: a run stopped before this, or a store
    written before session 12, is made up for)."""
    earlier = [i for i in await engram.store.all_versions([current]) if i != current]
    if earlier and await engram.store.source_ids(earlier):
        async with engram.store.transaction() as tx:
            await tx.drop_sources(earlier)


def _day(folder: Path, diary: Memory) -> str:
    """The day a diary tells of (its start, counted as the diaries count days; not its UTC date)."""
    day = diary_day(folder, diary.valid_from) if diary.valid_from else aware(diary.created_at).date()
    return day.isoformat()


async def _details(engram: Kernel, diaries: list[Memory], is_public: Callable[[str], bool],
                   persona: str) -> PrivateDetails:
    """The names and private facts of the diaries' days (a name in the core identity is not private)."""
    episodes = await engram.store.get_episodes(sorted({s for d in diaries for s in d.sources}))
    people = {e.actor for e in episodes.values() if e.actor != SELF}
    aliases = {a: await engram.store.aliases(a) for a in people}
    return await asyncio.to_thread(private_details, list(episodes.values()), aliases, is_public,
                                   known=persona, names=await known_names(engram.store))
