"""Hard forgetting along provenance: what a forget reaches, then one erase (``Store.erase``).

A memory is forgotten with every version of it (merged ones' originals too); ``with_sources`` also
takes the episodes it came from, and then every memory derived from any of those episodes (a diary
of that day included). A person: every line they said or that names them, every memory about them
and the lines those came from. A place: all its lines and its memories. Whatever drew on erased
memories and is rebuilt from what is left (a day's diary, the self-image) is told through
``Engram.after_forget``.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import TYPE_CHECKING

from .diary_files import data_folder, diary_day, diary_path
from .errors import InvalidInputError, UnknownIdError
from .identity import IMAGE_FILE, IdentityFolder
from .inner_state import load_state, state_path
from .scopes import space_scope

if TYPE_CHECKING:
    from .engram import Engram

log = logging.getLogger("engram.forget")
DIARY, SELF_IMAGE = "diary", "reflection"
MIN_NAME = 2  # shorter display names are not searched for in the text (too many false hits)


@dataclass
class Forgetting:
    """What one forget erases (``dry_run``: would erase) and what must be rebuilt afterwards."""

    episodes: list[int] = field(default_factory=list)
    memories: list[int] = field(default_factory=list)
    people: list[str] = field(default_factory=list)
    spaces: list[str] = field(default_factory=list)
    diary_days: list[date] = field(default_factory=list)  # days whose diary is to be rewritten
    self_image: bool = False  # a self-image (reflection) drew on what went: regenerate it
    done: bool = False

    def summary(self) -> str:
        return (f"{len(self.episodes)} line{'s' * (len(self.episodes) != 1)} and "
                f"{len(self.memories)} memor{'ies' if len(self.memories) != 1 else 'y'}")


async def memories_plan(engram: Engram, ids: list[int], with_sources: bool) -> Forgetting:
    """What forgetting the memories ``ids`` reaches; unknown ids are refused, nothing touched."""
    if not ids or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
        raise InvalidInputError("give memory ids (whole numbers)")
    found = await engram.store.get_memories(ids)
    missing = [i for i in ids if i not in found]
    if missing:
        raise UnknownIdError(f"no memory with id {', '.join(map(str, missing))}")
    mems = set(await engram.store.all_versions(ids))
    eps = set(await engram.store.source_ids(list(mems))) if with_sources else set()
    return await _along_provenance(engram, Forgetting(), eps, mems)


async def person_plan(engram: Engram, person: str) -> Forgetting:
    """Everything said by or about ``person`` (a person id)."""
    store = engram.store
    names = [n for n in await store.aliases(person) if len(n.strip()) >= MIN_NAME]
    rows = await store.episodes_where(actor=person, mentions=names)
    said = {i for i, _ in await store.episodes_where(actor=person)}
    eps = said | {i for i, text in rows if i not in said and _names_in(text, names)}
    about = await store.memories_where(subject=person)
    about += [i for i, text in await store.memories_mentioning(names) if _names_in(text, names)]
    mems = set(await store.all_versions(about))
    eps |= set(await store.source_ids(list(mems)))
    if not eps and not mems and not names:
        raise UnknownIdError(f"nothing is remembered by or about {person!r}; nothing was forgotten")
    return await _along_provenance(engram, Forgetting(people=[person]), eps, mems)


async def place_plan(engram: Engram, space: str) -> Forgetting:
    """Every line of ``space`` and every memory kept for it."""
    space = space.strip()
    if not space:
        raise InvalidInputError("name the place to forget")
    store = engram.store
    eps = {i for i, _ in await store.episodes_where(space=space)}
    mems = set(await store.all_versions(await store.memories_where(scope=space_scope(space))))
    if not eps and not mems:
        raise UnknownIdError(f"nothing is remembered of the place {space!r}; nothing was forgotten")
    return await _along_provenance(engram, Forgetting(spaces=[space]), eps, mems)


async def _along_provenance(engram: Engram, plan: Forgetting, eps: set[int], mems: set[int]) -> Forgetting:
    """Add every memory derived from the episodes (with all its versions), and what to rebuild."""
    derived = await engram.store.memories_citing(sorted(eps))
    mems |= set(await engram.store.all_versions(derived))
    plan.episodes, plan.memories = sorted(eps), sorted(mems)
    found = await engram.store.get_memories(plan.memories)
    days = {_day(engram, m.valid_from or m.created_at) for m in found.values() if m.kind == DIARY}
    plan.diary_days = sorted(d for d in days if d is not None)
    plan.self_image = any(m.kind == SELF_IMAGE for m in found.values())
    return plan


def _erase_files(engram: Engram, plan: Forgetting) -> None:
    """The files beside the store that hold what went: each diary file of a day whose diary went
    (a rewrite from what is left writes it again); the self-image and its history when the
    self-image went (every version of it left the store); the inner state when a diary it came from
    went (it is the baseline again until the next diary)."""
    folder = data_folder(engram)
    for day in plan.diary_days:
        diary_path(folder, day).unlink(missing_ok=True)
    if plan.self_image:
        ids = IdentityFolder(folder)
        for path in [ids.image_path, *ids.history(IMAGE_FILE.removesuffix(".md"))]:
            path.unlink(missing_ok=True)
    if plan.diary_days and state_path(folder).exists():
        state = load_state(folder)
        if state is None or state.day in {"", *(d.isoformat() for d in plan.diary_days)}:
            state_path(folder).unlink(missing_ok=True)


def _day(engram: Engram, t: datetime | None) -> date | None:
    """The day a diary dated ``t`` tells of, counted as the diaries count days (their zone and
    boundary hour, ``diary_files.day_rule``)."""
    return None if t is None else diary_day(data_folder(engram), t)


def _names_in(text: str, names: list[str]) -> bool:
    """Whether ``text`` names one of ``names`` (a Latin name as a whole word; a Chinese one anywhere)."""
    low = text.lower()
    for name in names:
        n = name.lower().strip()
        if re.search(r"\w", n, re.ASCII):
            if re.search(rf"(?<!\w){re.escape(n)}(?!\w)", low):
                return True
        elif n in low:
            return True
    return False


async def execute(engram: Engram, plan: Forgetting) -> Forgetting:
    """Erase what ``plan`` names (one transaction), drop it from memory, then tell the listeners."""
    eps, mems = await engram.store.erase(plan.episodes, plan.memories, people=plan.people, spaces=plan.spaces)
    plan.episodes, plan.memories, plan.done = eps, mems, True
    engram.drop_erased(mems)
    _erase_files(engram, plan)
    for listener in list(engram.after_forget):
        try:
            await listener(plan)
        except Exception:  # the erase is done; a rebuild that failed is logged, not undone
            log.exception("a listener after a forget failed")
    return plan
