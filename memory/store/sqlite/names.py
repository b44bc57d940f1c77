"""People's names: every name a person went by, and the one each place knows them by (a note names a
person as the place it is read in knows them, never by a name from another chat)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

import aiosqlite

from ...model import Episode, aware
from ...text.person_names import given_names
from ...text.words import holds_name
from .codec import chunks, fetch_rows, in_list, quick_rows

TITLE_CHARS = 200  # a place title longer than this is cut (a platform's names are far shorter)
UPSERT_TITLES = ("INSERT INTO place_titles VALUES (?,?,?) ON CONFLICT(space) DO UPDATE SET"
                 " title = excluded.title, seen = excluded.seen"
                 " WHERE excluded.seen >= place_titles.seen AND excluded.title != place_titles.title")


def titles_of(episodes: Sequence[Episode]) -> list[tuple[str, str, float]]:
    """(place, title, time) of the latest titled episode of each place in a batch (``UPSERT_TITLES``)."""
    latest: dict[str, tuple[str, str, float]] = {}
    for ep in episodes:
        if not ep.place_title:  # most lines (private chats, the bot's own): nothing to work out
            continue
        t = aware(ep.time).timestamp()
        if ep.place_title.strip() and t >= latest.get(ep.place, ("", "", t))[2]:
            latest[ep.place] = (ep.place, ep.place_title.strip()[:TITLE_CHARS], t)
    return list(latest.values())


class Names:
    """The ``aliases``, ``place_names`` and ``place_titles`` tables."""

    def __init__(self, reader: aiosqlite.Connection, quick: sqlite3.Connection):
        self._reader = reader
        self._quick = quick

    async def place_titles(self) -> dict[str, str]:
        """Each place's latest title (a group's name), for the places that have one."""
        return dict(await fetch_rows(self._reader, "SELECT space, title FROM place_titles"))

    async def aliases(self, person: str) -> list[str]:
        async with self._reader.execute(
            "SELECT alias FROM aliases WHERE person = ? ORDER BY last_seen DESC", (person,)) as cur:
            return [r[0] for r in await cur.fetchall()]

    async def people_named(self, name: str) -> list[str]:
        """The people who have gone by ``name`` (case ignored)."""
        rows = quick_rows(self._quick, "SELECT DISTINCT person FROM aliases WHERE lower(alias) = lower(?)",
                          (name,))
        return [r[0] for r in rows]

    async def people_named_in(self, place: str, name: str) -> list[str]:
        """Who went by ``name`` (case folded) in ``space``, the latest first."""
        rows = quick_rows(self._quick,
                          "SELECT person FROM place_names WHERE space = ? AND lower(name) = lower(?)"
                          " ORDER BY last_seen DESC", (place, name.strip()))
        return [r[0] for r in rows]

    async def people_mentioned_in(self, place: str, text: str) -> list[str]:
        """Who went by a name (two characters or more) in ``space`` that ``text`` holds, or by the
        given name friends call them (张婷婷: 婷婷, Mei Chen: Mei: ``person_names.given_names``); a
        Latin name only as a whole word ("Al" is not in "Also")."""
        rows = quick_rows(self._quick,
                          "SELECT person, name FROM place_names WHERE space = ? AND length(name) >= 2",
                          (place,))
        low = text.lower()
        return list(dict.fromkeys(person for person, name in rows
                                  if any(holds_name(low, n.lower()) for n in {name, *given_names(name)})))

    async def names_in_place(self, place: str, people: Sequence[str]) -> dict[str, str]:
        """The display name each of ``people`` last went by in ``space``, for those who spoke there: a
        name from one chat is not shown in another."""
        if not people:
            return {}
        ins, vals = in_list(list(people))
        return dict(quick_rows(self._quick,
                               f"SELECT person, name FROM place_names WHERE space = ? AND person IN {ins}",
                               [place, *vals]))


async def speakers_of(db: aiosqlite.Connection, episode_ids: Sequence[int]) -> set[str]:
    """Who said the lines ``episode_ids`` (lines recorded without a speaker left out)."""
    out: set[str] = set()
    for chunk in chunks(list(episode_ids)):
        q, v = in_list(chunk)
        out.update(r[0] for r in await fetch_rows(
            db, f"SELECT DISTINCT actor FROM episodes WHERE id IN {q} AND actor != ''", v))
    return out


async def drop_unspoken_names(db: aiosqlite.Connection, people: Sequence[str]) -> None:
    """After lines were erased: the names ``people`` went by that no line of theirs left carries, in
    all (``aliases``) or in one place (``place_names``). A name comes only from the lines; erased
    with the last of them, it must not stay in the file (``forget_place``, a forgotten line)."""
    for person in people:
        await db.execute("DELETE FROM aliases WHERE person = ? AND NOT EXISTS (SELECT 1 FROM episodes"
                         " WHERE actor = aliases.person AND actor_name = aliases.alias)", (person,))
        await db.execute("DELETE FROM place_names WHERE person = ? AND NOT EXISTS (SELECT 1 FROM episodes"
                         " WHERE actor = place_names.person AND space = place_names.space)", (person,))


async def drop_from_meta(db: aiosqlite.Connection, person: str, append_only: str) -> int:
    """A forgotten ``person`` out of the meta of the lines left (others' lines): the mentions of them
    (their id and the name they were mentioned by) and the speaker of a line answered (``reply_to``'s
    actor; the message id stays). Their names must not stay in the file, nor reach a later prompt
    (the self-image's private-detail check reads the mentions). Episodes are append-only, so the
    guard (``append_only``, its SQL) is lifted for this inside the erase's transaction, as only a
    hard forget may. Returns how many lines changed."""
    needle = json.dumps(person, ensure_ascii=False)
    rows = await fetch_rows(db, "SELECT id, meta FROM episodes WHERE instr(meta, ?) > 0", (needle,))
    changed = []
    for eid, raw in rows:
        meta = json.loads(raw)
        if not isinstance(meta, dict):
            continue
        new = dict(meta)
        mentions = meta.get("mentions")
        if isinstance(mentions, list):
            kept = [m for m in mentions if not (isinstance(m, dict) and m.get("id") == person)]
            if kept:
                new["mentions"] = kept
            else:
                new.pop("mentions")
        reply = meta.get("reply_to")
        if isinstance(reply, dict) and reply.get("actor") == person:
            new["reply_to"] = {k: v for k, v in reply.items() if k != "actor"}
        if new != meta:
            changed.append((json.dumps(new, ensure_ascii=False) if new else "{}", eid))
    if changed:
        await db.execute("DROP TRIGGER IF EXISTS episodes_append_only")
        await db.executemany("UPDATE episodes SET meta = ? WHERE id = ?", changed)
        await db.execute(append_only)
    return len(changed)


async def drop_place_names(db: aiosqlite.Connection, place: str) -> None:
    """A forgotten place's names: who went by what there, and its own title."""
    await db.execute("DELETE FROM place_names WHERE space = ?", (place,))
    await db.execute("DELETE FROM place_titles WHERE space = ?", (place,))
