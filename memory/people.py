"""Who is who: the names people went by in each place, as the store keeps them (``People``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .store import Store
from .validate import clean


class People:
    """Names and aliases: who went by which name, where, read from the store."""

    def __init__(self, store: Store):
        self.store = store

    async def aliases(self, person: str) -> list[str]:
        """The display names a person was seen under, most recent first."""
        return await self.store.aliases(person)

    async def named(self, name: str) -> list[str]:
        """The people who have gone by ``name`` (case ignored)."""
        return await self.store.people_named(clean(name))

    async def named_in(self, place: str, name: str) -> list[str]:
        """Who went by ``name`` (case ignored) in ``place``, the latest first."""
        return await self.store.people_named_in(clean(place), clean(name))  # a model's "\ud83d" too

    async def mentioned_in(self, place: str, text: str) -> list[str]:
        """The people seen in ``place`` whose name there ``text`` holds."""
        return await self.store.people_mentioned_in(clean(place), clean(text))

    async def names_in_place(self, place: str, people: Sequence[str]) -> dict[str, str]:
        """The name each of ``people`` last went by in ``place`` (those who spoke there only): a note
        shows the name this chat knows, never one from another chat."""
        return await self.store.names_in_place(place, people)

    async def names(self, people: Iterable[str]) -> dict[str, str]:
        """The latest display name of each person that has one."""
        out = {}
        for person in people:
            aliases = await self.store.aliases(person)
            if aliases:
                out[person] = aliases[0]
        return out
