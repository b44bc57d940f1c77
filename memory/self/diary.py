"""The daily diary: one first-person entry per day of the bot's life, from that day's episodes everywhere.

A day ends at the boundary hour (4 am by default: a late night belongs to the day before). The entry
is a ``diary`` memory scoped ``owner`` (it may hold private details of any place, so only the owner's
private chat recalls it) with its source episodes, and the file ``diary/<date>.md``. Writing a day
twice changes nothing; ``force`` writes a new version that supersedes the old one (what a forget
that touched the day's episodes calls). A failed call or an answer of the wrong shape changes nothing.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, tzinfo
from pathlib import Path

from ..chat import ChatModel
from ..clock import DEFAULT_BOUNDARY_HOUR, day_bounds
from ..errors import MovedMeanwhile
from ..kernel import Kernel
from ..model import Episode, Memory, aware, next_version
from ..outage import Outage
from ..prompts.answers import json_object, text_field
from ..prompts.templates import episode_line, language, templates
from ..scopes import OWNER
from .diary_files import data_folder, day_rule, diary_path, rewritten
from .identity import IdentityFolder, atomic_write

log = logging.getLogger("engram.diary")


def _file_outage() -> Outage:
    """A full disk or a read-only folder fails every hourly run until it is fixed: said once, then
    its end."""
    return Outage(log, "Engram: a diary file could not be written (%s); the memory holds the entry and the "
                  "file is written from it once that is fixed", "Engram: diary files are written again",
                  level=logging.ERROR, trace=True)


_FILES = _file_outage()

MAX_EPISODES = 5000  # of one day read (sources)
MAX_LINES = 300  # of them shown to the model (evenly spread over the day when there are more)
MAX_CHARS = 24_000  # of lines in one prompt (~8k tokens): a day of long messages shows fewer of them
MAX_ENTRY = 6000  # characters of an entry
TIMEOUT = 120.0
VERSION = "diary.version:"  # a cursor per day, moved by each entry written of it
SAME_DAY = timedelta(hours=12)  # a diary starting this near a day's start is that day's (a rule changed)
NO_PERSONA = {"en": "(no identity written yet)", "zh": "（还没有写身份）"}


@dataclass(frozen=True)
class DiaryResult:
    """What happened for one day: ``status`` is ``written``, ``rewritten``, ``exists`` or ``empty``."""

    day: date
    status: str
    memory_id: int | None = None
    text: str = ""
    episodes: int = 0
    path: Path | None = None
    sources: tuple[int, ...] = field(default=(), repr=False)


async def diary_of(engram: Kernel, day: date, tz: tzinfo | None,
                   boundary_hour: int = DEFAULT_BOUNDARY_HOUR) -> Memory | None:
    """The active diary memory of ``day``: its ``valid_from`` is the day's start, or (the zone or the
    boundary hour changed since it was written) the nearest to it within 12 hours; None if none."""
    start, _ = day_bounds(day, tz, boundary_hour)
    found = await engram.store.get_memories(await engram.store.memory_ids_of_kind(
        "diary", after=start - SAME_DAY, before=start + SAME_DAY))  # not every diary ever written
    near = [(abs(aware(m.valid_from) - start), m.id or 0, m) for m in found.values()
            if m.valid_from is not None and abs(aware(m.valid_from) - start) < SAME_DAY]
    return min(near, key=lambda x: x[:2])[2] if near else None


async def recent_diaries(engram: Kernel, n: int) -> list[Memory]:
    """The ``n`` latest active diary entries, oldest first."""
    if n <= 0:
        return []
    found = await engram.store.get_memories(await engram.store.memory_ids_of_kind("diary", latest=n))
    dated = sorted(found.values(), key=lambda m: aware(m.valid_from or m.created_at))
    return dated


def _spread(episodes: list[Episode], n: int) -> list[Episode]:
    if len(episodes) <= n:
        return episodes
    step = len(episodes) / n
    return [episodes[int(i * step)] for i in range(n)]


def diary_messages(day: date, episodes: list[Episode], persona: str,
                   tz: tzinfo | None) -> list[dict[str, str]]:
    """The prompt: who the bot is and the day's lines grouped by place, in the language of the day."""
    lang = language([e.content for e in episodes])
    system, user = templates("diary", lang)
    n = MAX_LINES
    while True:
        places: dict[str, list[str]] = {}
        for e in _spread(episodes, n):
            places.setdefault(e.place, []).append(episode_line(e, lang, tz))
        lines = "\n\n".join(f"[{place}]\n" + "\n".join(ls) for place, ls in places.items())
        if len(lines) <= MAX_CHARS or n <= 10:
            break
        n = n * 3 // 4
    filled = user.safe_substitute(persona=persona or NO_PERSONA[lang], day=day.isoformat(), lines=lines)
    return [{"role": "system", "content": system}, {"role": "user", "content": filled}]


def _write_file(path: Path, day: date, text: str) -> None:
    try:
        atomic_write(path, f"# {day.isoformat()}\n\n{text.strip()}\n")
    except OSError as e:  # the memory is the truth; the file is written again on the next run
        if e.filename is None:
            e.filename = str(path)  # which file, in the one line the log gets
        _FILES.failed(e)
    else:
        _FILES.recovered()


def _rewritten(folder: Path, day: date) -> None:
    """A forget's pending rewrite of ``day`` is done (``diary_files.rewrite_later``)."""
    try:
        rewritten(folder, day)
    except OSError:  # the note stays; the day is written once more (then "exists") next time
        log.exception("Engram: updating the diaries to rewrite after a forget failed")


async def write_diary(engram: Kernel, chat_model: ChatModel, date: date, *, force: bool = False,
                      tz: tzinfo | None = None, boundary_hour: int | None = None,
                      folder: Path | None = None, persona: str | None = None,
                      now: datetime | None = None) -> DiaryResult:
    """Write the diary of ``date`` (once; ``force``: again, superseding the old entry).

    ``tz`` and ``boundary_hour`` default to the ones the diaries were last written with (``day_rule``).
    Raises ``ChatError`` or ``replies.WrongShape`` when the model fails; nothing is changed then.
    """
    folder = folder or data_folder(engram)
    given = (tz, boundary_hour)
    tz, boundary_hour = day_rule(folder, tz, boundary_hour)
    path = diary_path(folder, date)
    written = VERSION + date.isoformat()  # read before the entry: a write after it moves it
    version = (await engram.store.cursors(written)).get(written, 0)
    old = await diary_of(engram, date, tz, boundary_hour)
    if old is not None and not force:
        on_file = path.read_text("utf-8", "replace") if path.exists() else ""
        if on_file.strip().split("\n", 2)[-1].strip() != old.text:
            _write_file(path, date, old.text)  # the file follows the memory
        _rewritten(folder, date)
        return DiaryResult(date, "exists", old.id, old.text, len(old.sources), path, old.sources)
    start, end = day_bounds(date, tz, boundary_hour)
    episodes = await engram.store.episodes_between(start, end, MAX_EPISODES)
    if not episodes:
        _rewritten(folder, date)
        return DiaryResult(date, "empty", old.id if old else None, old.text if old else "")
    if persona is None:
        persona = IdentityFolder(folder).core().text
    reply = await chat_model.complete(diary_messages(date, episodes, persona, tz), json=True, timeout=TIMEOUT)
    entry = text_field(json_object(reply.text, ("entry",)), "entry", MAX_ENTRY)
    sources = tuple(e.id for e in episodes if e.id is not None)
    made = aware(now) if now else engram.clock()
    if old is not None and old.id is not None:
        # the rewrite tells of the same day: valid from its start too (as ``Engram.update`` writes it)
        new = next_version(old, made, text=entry, sources=sources, valid_from=start, valid_to=None)
        status = "rewritten"
    else:
        new = Memory(text=entry, scope=OWNER, kind="diary", sources=sources, importance=0.6,
                     created_at=made, valid_from=start)
        status = "written"
    try:  # only if no other writer (the command line beside the bot) wrote this day meanwhile
        [mid] = await engram.commit_memories([(new, old.id if old is not None else None)],
                                             {written: version + 1}, expect={written: version})
    except MovedMeanwhile:  # theirs stands: one entry a day (the file follows it)
        log.info("Engram: the diary of %s was written by another writer meanwhile; kept", date)
        return await write_diary(engram, chat_model, date, tz=tz, boundary_hour=boundary_hour,
                                 folder=folder, persona=persona, now=now)
    _write_file(path, date, entry)
    _rewritten(folder, date)
    day_rule(folder, *given, remember=True)
    log.info("Engram: diary of %s %s (m%d, from %d lines)", date, status, mid, len(sources))
    return DiaryResult(date, status, mid, entry, len(sources), path, sources)
