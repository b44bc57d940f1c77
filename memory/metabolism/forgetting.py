"""Hard forgetting along provenance: what a forget reaches, then one erase (``Store.erase``).

A memory is forgotten with every version of it (merged ones' originals too); ``with_sources`` also
takes the episodes it came from, and then every memory derived from any of those episodes (a diary
of that day included). Episodes named by id go the same way, with every memory derived from them.
A person: every line they said or that names them (by any name they went by, or the given name
friends call them: 张婷婷's 婷婷), every memory about them and the lines those came from. A place:
all its lines and its memories. Whatever drew on erased memories and is rebuilt from what is left
(a day's diary, the self-image) is told through the listeners given to ``execute`` (``Engram.after_forget``).

The identity proposals the model made (``identity/proposals.json``) have no sources; a forget drops
one, pending or decided, when it drew on what goes: made in a forgotten place, while answering a
forgotten person or naming them, or holding a piece of a forgotten text (a number, five words or six
Chinese characters in a row: the self-image's leak rule). Nothing else links a proposal to a line:
one made in the same chat the same day as a forgotten line, sharing none of its words, is not drawn
from it (a forget never touches what it did not name: issue 27, where ``/mem forget e15`` dropped an
approved proposal that had nothing to do with the line). Dropped, not rewritten: the change is the
model's, the owner never decided on the new text, and the model can propose again. An approved one's
words are in ``identity/self.md`` already, which is the owner's file and stays as it is (logged).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path

from ..backups import erase_in_backups, note_erase
from ..errors import InvalidInputError, UnknownIdError
from ..kernel import Kernel
from ..model import Memory, aware, possible_ids
from ..scopes import place_scope, private_place_of
from ..self.diary_files import data_folder, diary_day, diary_path, rewrite_later
from ..self.identity import IMAGE_FILE, IdentityFolder, atomic_write, temporaries
from ..self.inner_state import load_state, state_path
from ..self.private_details import PrivateDetails, leaks
from ..self.proposals import APPROVED, Proposal, Proposals
from ..self.self_image_file import DIARIES as SELF_IMAGE_DIARIES
from ..text.person_names import common_word, given_names
from ..text.words import holds_name

log = logging.getLogger("engram.forget")
DIARY, SELF_IMAGE = "diary", "reflection"
MIN_NAME = 2  # shorter display names are not searched for in the text (too many false hits)
CHUNK = 500  # episodes read at a time when looking for a proposal's words in them
PENDING_FILE = ".forget-pending.json"  # beside the store: the files a forget under way still erases
WITNESSES = 64  # erased ids kept in that note: all gone means the erase went through (it is one transaction)


@dataclass
class Forgetting:
    """What one forget erases (``dry_run``: would erase) and what must be rebuilt afterwards."""

    episodes: list[int] = field(default_factory=list)
    memories: list[int] = field(default_factory=list)
    people: list[str] = field(default_factory=list)
    places: list[str] = field(default_factory=list)
    diary_days: list[date] = field(default_factory=list)  # days whose diary is to be rewritten
    self_image: bool = False  # a self-image (reflection) drew on what went: regenerate it
    proposals: list[int] = field(default_factory=list)  # identity proposals drawn from what goes
    done: bool = False
    files_left: bool = False  # erased in the store; the files beside it could not be written yet

    def summary(self) -> str:
        parts = [f"{len(self.episodes)} line{'s' * (len(self.episodes) != 1)}",
                 f"{len(self.memories)} memor{'ies' if len(self.memories) != 1 else 'y'}"]
        if self.proposals:
            parts.append(f"{len(self.proposals)} identity proposal{'s' * (len(self.proposals) != 1)}")
        left = (" (the files beside the store, such as the diary, could not be written now: they are "
                "finished at the next start; see the log)") if self.files_left else ""
        return f"{', '.join(parts[:-1])} and {parts[-1]}{left}"


async def memories_plan(engram: Kernel, ids: list[int], with_sources: bool) -> Forgetting:
    """What forgetting the memories ``ids`` reaches; unknown ids are refused, nothing touched."""
    _known(ids, "memory", await engram.store.get_memories(possible_ids(_whole(ids, "memory"))))
    mems = set(await engram.store.all_versions(ids))
    eps = set(await engram.store.source_ids(list(mems))) if with_sources else set()
    return await _along_provenance(engram, Forgetting(), eps, mems)


async def episodes_plan(engram: Kernel, ids: list[int]) -> Forgetting:
    """What forgetting the episodes (lines) ``ids`` reaches: them and every memory derived from them
    (a diary of their day too); unknown ids are refused, nothing touched."""
    known = await engram.store.get_episodes(possible_ids(_whole(ids, "episode")))
    _known(ids, "episode", known)
    return await _along_provenance(engram, Forgetting(), set(known), set())


async def items_plan(engram: Kernel, episodes: Iterable[int], memories: Iterable[int]) -> Forgetting:
    """What forgetting the lines ``episodes`` (known ids) and the memories ``memories`` (with every
    version) reaches, as the plans above do (``own_forget`` chooses the ids and checks the reach)."""
    mems = set(await engram.store.all_versions(sorted(set(memories)))) if memories else set()
    return await _along_provenance(engram, Forgetting(), set(episodes), mems)


def _whole(ids: list[int], kind: str) -> list[int]:
    """``ids`` when they are a non-empty list of whole numbers, else a clear error."""
    if not ids or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
        raise InvalidInputError(f"give {kind} ids (whole numbers)", code="ids_not_numbers")
    return ids


def _known(ids: list[int], kind: str, found: Mapping[int, object]) -> None:
    """Refuse the forget when any of ``ids`` is not in ``found`` (nothing is touched)."""
    if missing := [i for i in ids if i not in found]:
        said = ", ".join(map(str, missing))
        raise UnknownIdError(f"no {kind} with id {said}", code=f"no_{kind}", id=said)


async def person_plan(engram: Kernel, person: str) -> Forgetting:
    """Everything said by or about ``person``: a person id, or the name of someone only talked about
    (who never spoke, so has no id: the lines and memories that name them).

    Their lines, the memories about them (subject: their id), and the lines and memories that name
    them by a name that is theirs alone (``their_names``): not a name someone else went by too, not
    an ordinary word. Their private chat goes whole (the bot's side of it too), as a forgotten place."""
    if not person.strip():  # "" is the actor of every line recorded without one
        raise InvalidInputError("name the person to forget", code="name_person")
    store = engram.store
    names = await their_names(engram, person)
    only_named = not await store.aliases(person)
    rows = await store.episodes_where(actor=person, mentions=names)
    said = {i for i, _ in await store.episodes_where(actor=person)}
    eps = said | {i for i, text in rows if i not in said and _names_in(text, names)}
    about = await store.memories_where(subject=person)
    about += [i for i, text in await store.memories_mentioning(names) if _names_in(text, names)]
    mems = set(await store.all_versions(about))
    eps |= set(await store.source_ids(list(mems)))
    plan = Forgetting(people=[person])
    private = private_place_of(person)
    if private is not None and await store.has_place(private):
        place_eps, place_mems = await _place_items(engram, private)
        eps, mems = eps | place_eps, mems | place_mems
        plan.places = [private]
    if not eps and not mems and (only_named or not names):
        raise UnknownIdError(f"nothing is remembered by or about {person!r}; nothing was forgotten",
                             code="nothing_of_person", person=repr(person))
    return await _along_provenance(engram, plan, eps, mems)


async def place_plan(engram: Kernel, place: str) -> Forgetting:
    """Every line of ``space`` and every memory kept for it."""
    place = place.strip()
    if not place:
        raise InvalidInputError("name the place to forget", code="name_place")
    eps, mems = await _place_items(engram, place)
    if not eps and not mems:
        raise UnknownIdError(f"nothing is remembered of the place {place!r}; nothing was forgotten",
                             code="nothing_of_place", place=repr(place))
    return await _along_provenance(engram, Forgetting(places=[place]), eps, mems)


async def _place_items(engram: Kernel, place: str) -> tuple[set[int], set[int]]:
    """The lines of ``place`` and the memories kept for it (every version)."""
    store = engram.store
    eps = {i for i, _ in await store.episodes_where(place=place)}
    return eps, set(await store.all_versions(await store.memories_where(scope=place_scope(place))))


async def _along_provenance(engram: Kernel, plan: Forgetting, eps: set[int], mems: set[int]) -> Forgetting:
    """Add every memory derived from the episodes (with all its versions), and what to rebuild."""
    derived = await engram.store.memories_citing(sorted(eps))
    mems |= set(await engram.store.all_versions(derived))
    plan.episodes, plan.memories = sorted(eps), sorted(mems)
    found = await engram.store.get_memories(plan.memories)
    diaries = [m for m in found.values() if m.kind == DIARY]
    if diaries and await _self_image_drew_on(engram, diaries, mems):
        mems |= set(await engram.store.all_versions(await engram.store.memory_ids_of_kind(SELF_IMAGE)))
        plan.memories = sorted(mems)
        found = await engram.store.get_memories(plan.memories)
    days = {_day(engram, m.valid_from or m.created_at) for m in found.values() if m.kind == DIARY}
    plan.diary_days = sorted(d for d in days if d is not None)
    plan.self_image = any(m.kind == SELF_IMAGE for m in found.values())
    plan.proposals = await _proposals_reached(engram, plan, found.values())
    return plan


async def _self_image_drew_on(engram: Kernel, diaries: list[Memory], taken: set[int]) -> bool:
    """Whether a version of the self-image was written from one of ``diaries`` (only its current
    version cites lines, ``self_image``): each version is written from the diaries before it, so any
    diary from those its first version was written from on; one told of before (the self-image was
    forgotten and written again since) is not."""
    images = await engram.store.memory_ids_of_kind(SELF_IMAGE)
    versions = await engram.store.get_memories(await engram.store.all_versions(images)) if images else {}
    if not versions or set(versions) <= taken:
        return False
    first = min(aware(v.created_at) for v in versions.values())
    read = await engram.store.get_memories(await engram.store.memory_ids_of_kind(
        DIARY, before=first, latest=SELF_IMAGE_DIARIES))  # what the first version was written from
    since = min((aware(d.valid_from or d.created_at) for d in read.values()), default=first)
    return any(aware(d.valid_from or d.created_at) >= since for d in diaries)


async def _proposals_reached(engram: Kernel, plan: Forgetting, memories: Iterable[Memory]) -> list[int]:
    """The identity proposals drawn from what ``plan`` erases (the module's docstring says which)."""
    try:
        proposals = Proposals(IdentityFolder(data_folder(engram))).all()
    except (OSError, ValueError, TypeError, AttributeError) as e:  # unreadable: left alone, and said so
        log.error("Engram: identity/proposals.json cannot be read (%s); a forget cannot look into it", e)
        return []
    names = [n for person in plan.people for n in await their_names(engram, person)]
    reached = {p.id for p in proposals if p.place in plan.places or p.person in plan.people
               or (names and _names_in(f"{p.change}\n{p.reason}", names))}
    left = [p for p in proposals if p.id not in reached]
    if not left:
        return sorted(reached)
    pieces, anyones = {p.id: _pieces([p]) for p in left}, _pieces(left)
    async for text in _erased_texts(engram, plan, memories):
        if not leaks(text, anyones):  # one look for all of them; which one, only on a hit
            continue
        for p in left:
            if p.id not in reached and leaks(text, pieces[p.id]):
                reached.add(p.id)
        if len(reached) == len(proposals):
            break
    return sorted(reached)


def _pieces(proposals: list[Proposal]) -> PrivateDetails:
    """The proposals' pieces a forgotten text may hold: numbers, five words, six Chinese characters."""
    out = PrivateDetails()
    for p in proposals:
        out.add_private_text(p.change)
        out.add_private_text(p.reason)
    return out


async def _erased_texts(engram: Kernel, plan: Forgetting, memories: Iterable[Memory]) -> AsyncIterator[str]:
    """Each text ``plan`` erases: the memories', then the lines'."""
    for m in memories:
        yield m.text
    for i in range(0, len(plan.episodes), CHUNK):
        found = await engram.store.get_episodes(plan.episodes[i:i + CHUNK])
        for e in found.values():
            yield e.content


def _erase_files(engram: Kernel, plan: Forgetting) -> None:
    """The files beside the store that hold what went: each diary file of a day whose diary went
    (a rewrite from what is left writes it again); the self-image and its history when the
    self-image went (every version of it left the store); the inner state when a diary it came from
    went (the baseline again until the diary job moves it from the diaries left); the identity
    proposals drawn from it. The erased days are noted for the diary job (``rewrite_later``)."""
    folder = data_folder(engram)
    for day in plan.diary_days:
        _unlink(diary_path(folder, day))
    rewrite_later(folder, plan.diary_days)  # written again from what is left, even if that is stopped
    if plan.self_image:
        ids, name = IdentityFolder(folder), IMAGE_FILE.removesuffix(".md")
        cut = ids.history_dir.glob(f".{name}.*.tmp") if ids.history_dir.is_dir() else []  # a version
        for path in [ids.image_path, *ids.history(name), *cut]:  # being kept when a kill came
            _unlink(path)
    if plan.diary_days and state_path(folder).exists():
        state = load_state(folder)
        if state is None or state.day in {"", *(d.isoformat() for d in plan.diary_days)}:
            _unlink(state_path(folder))
    if plan.proposals:
        for p in Proposals(IdentityFolder(folder)).drop(plan.proposals):
            if p.status == APPROVED:
                log.warning("Engram: a forget dropped identity proposal #%d; it was approved, so its words "
                            "are in identity/self.md, the owner's file, which a forget does not change", p.id)


def _unlink(path: Path) -> None:
    """``path`` and what writes of it killed midway left beside it (``identity.temporaries``)."""
    path.unlink(missing_ok=True)
    for cut in temporaries(path):
        cut.unlink(missing_ok=True)


def _day(engram: Kernel, t: datetime | None) -> date | None:
    """The day a diary dated ``t`` tells of, counted as the diaries count days (their zone and
    boundary hour, ``diary_files.day_rule``)."""
    return None if t is None else diary_day(data_folder(engram), t)


async def their_names(engram: Kernel, person: str) -> list[str]:
    """The names that identify ``person`` alone, searched for in the text of others' lines and of
    memories: every name they went by (``MIN_NAME`` characters or more) and the given names friends
    call them by (张婷婷: 婷婷, Mei Chen: Mei: ``person_names.given_names``); someone who never spoke
    (a name, not an id: only talked about) by the name given. Left out: a name another person went by
    or that another's name holds (someone who renamed themself "Alice" for a message does not take
    the real Alice's lines with them; 婷婷 is not 张婷婷's alone when 王婷婷 spoke too), and an ordinary
    word ("the", "Will", 今天: ``person_names.common_word``). docs/privacy.md states the rule."""
    store = engram.store
    went_by = [n.strip() for n in await store.aliases(person) if len(n.strip()) >= MIN_NAME]
    talked_about = ":" not in person and len(person.strip()) >= MIN_NAME
    names = went_by or ([person.strip()] if talked_about else [])
    names += sorted({g for n in names for g in given_names(n)} - set(names))
    out = []
    for name in dict.fromkeys(names):
        if common_word(name):
            continue
        low = name.lower()
        if any(other != person and holds_name(alias.lower(), low)
               for other, alias in await store.names_holding(name)):
            continue
        out.append(name)
    return out


def _names_in(text: str, names: list[str]) -> bool:
    """Whether ``text`` names one of ``names`` (``text.holds_name``: a Latin name as a whole word, also
    written against Chinese, as in "Bart和同学们"; a Chinese one anywhere)."""
    low = text.lower()
    return any(holds_name(low, n.lower().strip()) for n in names)


def _pending_path(engram: Kernel) -> Path:
    return data_folder(engram) / PENDING_FILE


def _note_pending(engram: Kernel, plan: Forgetting) -> bool:
    """Before the erase: what ``_erase_files`` is to do (days, flags, proposal ids, and a few of the
    erased ids, which tell a later open whether the erase went through; no text), so that a kill
    between the erase and the files leaves a note the next open finishes; False if nothing to do."""
    if not (plan.diary_days or plan.self_image or plan.proposals):
        return False
    atomic_write(_pending_path(engram), json.dumps({
        "episodes": plan.episodes[:WITNESSES], "memories": plan.memories[:WITNESSES],
        "diary_days": [d.isoformat() for d in plan.diary_days], "self_image": plan.self_image,
        "proposals": plan.proposals}))
    return True


async def finish_pending(engram: Kernel) -> None:
    """At open: a forget killed after its erase, before the files beside the store, is finished
    (its diary files, self-image and proposals erased); one killed before the erase left the store
    as it was, and its note is dropped. A note that cannot be acted on stays for the next open."""
    path = _pending_path(engram)
    if not path.exists():
        return
    try:
        note = json.loads(path.read_text("utf-8"))
        eps, mems = [int(i) for i in note["episodes"]], [int(i) for i in note["memories"]]
        store = engram.store
        async with store.transaction() as tx:
            erased = not await tx.existing("episodes", eps) and not await tx.existing("memories", mems)
        if erased:
            plan = Forgetting(diary_days=[date.fromisoformat(d) for d in note["diary_days"]],
                              self_image=bool(note["self_image"]),
                              proposals=[int(i) for i in note["proposals"]])
            _erase_files(engram, plan)
            log.warning("Engram: a forget was stopped after its erase; the files beside the store it "
                        "reached (%d diary days, %d proposals%s) are erased now", len(plan.diary_days),
                        len(plan.proposals), ", the self-image" if plan.self_image else "")
        path.unlink()
    except Exception:  # never a reason not to open; tried again at the next open
        log.exception("Engram: finishing an interrupted forget (%s) failed", path)


async def execute(engram: Kernel, plan: Forgetting,
                  after: Sequence[Callable[[Forgetting], Awaitable[None]]] = ()) -> Forgetting:
    """Erase what ``plan`` names (one transaction), drop it from memory, then tell the listeners."""
    noted = _note_pending(engram, plan)
    # on the erase list before the erase: a backup restored later is erased the same way (``backups``)
    note_erase(Path(engram.store.path), plan.episodes, plan.memories, people=plan.people, places=plan.places)
    async with engram.store.transaction() as tx:
        eps, mems = await tx.erase(plan.episodes, plan.memories, people=plan.people, places=plan.places)
    plan.episodes, plan.memories, plan.done = eps, mems, True
    engram.drop_erased(mems)
    await erase_in_backups(Path(engram.store.path), eps, mems, people=plan.people, places=plan.places)
    try:
        _erase_files(engram, plan)
    except OSError as e:  # a full disk, a read-only folder: the erase stands; its note finishes the files
        plan.files_left = True
        log.error("Engram: a forget erased its lines and memories, but the files beside the store could "
                  "not be written (%s); the next open finishes them", e)
    else:
        if noted:
            _pending_path(engram).unlink(missing_ok=True)
    for listener in list(after):
        try:
            await listener(plan)
        except Exception:  # the erase is done; a rebuild that failed is logged, not undone
            log.exception("a listener after a forget failed")
    return plan
