"""People's names: every name a person went by, and the one each place knows them by (a note names a
person as the place it is read in knows them, never by a name from another chat)."""

from __future__ import annotations

from collections.abc import Sequence

from ...text import holds_name
from .base import Connections
from .codec import in_list


class NameReads(Connections):
    """The ``aliases`` and ``place_names`` tables."""

    async def aliases(self, person: str) -> list[str]:
        async with self._reader.execute(
            "SELECT alias FROM aliases WHERE person = ? ORDER BY last_seen DESC", (person,)) as cur:
            return [r[0] for r in await cur.fetchall()]

    async def people_named(self, name: str) -> list[str]:
        """The people who have gone by ``name`` (case ignored)."""
        rows = self._read("SELECT DISTINCT person FROM aliases WHERE lower(alias) = lower(?)", (name,))
        return [r[0] for r in rows]

    async def people_named_in(self, space: str, name: str) -> list[str]:
        """Who went by ``name`` (case folded) in ``space``, the latest first."""
        rows = self._read("SELECT person FROM place_names WHERE space = ? AND lower(name) = lower(?)"
                          " ORDER BY last_seen DESC", (space, name.strip()))
        return [r[0] for r in rows]

    async def people_mentioned_in(self, space: str, text: str) -> list[str]:
        """Who went by a name (two characters or more) in ``space`` that ``text`` holds; a Latin name
        only as a whole word ("Al" is not in "Also")."""
        rows = self._read("SELECT person, name FROM place_names WHERE space = ? AND length(name) >= 2"
                          " AND instr(lower(?), lower(name)) > 0", (space, text))
        low = text.lower()
        return list(dict.fromkeys(person for person, name in rows if holds_name(low, name.lower())))

    async def names_in_space(self, space: str, people: Sequence[str]) -> dict[str, str]:
        """The display name each of ``people`` last went by in ``space``, for those who spoke there: a
        name from one chat is not shown in another."""
        if not people:
            return {}
        ins, vals = in_list(list(people))
        return dict(self._read(f"SELECT person, name FROM place_names WHERE space = ? AND person IN {ins}",
                               [space, *vals]))
