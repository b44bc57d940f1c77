"""Remembering a thing once: a memory that says (nearly) what one already kept in the same scope
says is not stored again. The same words come back as the memory that holds them; a slightly
fuller wording becomes that memory's new version.
"""

from __future__ import annotations

import re

from ..kernel import Kernel
from ..model import Memory
from ..scopes import Visibility
from ..text.words import query_words

SAME = 0.85  # Jaccard similarity of character pairs above which two memories say the same
LOOK_AT = 10  # the best keyword matches in the scope that are compared
_PLAIN = re.compile(r"[\W_]+", re.UNICODE)


def _pairs(text: str) -> set[str]:
    plain = _PLAIN.sub("", text.casefold())
    return {plain[i : i + 2] for i in range(len(plain) - 1)} or {plain}


_NUMBER = re.compile(r"\d+")


def similarity(a: str, b: str) -> float:
    """How much two texts say the same, from their character pairs (case and punctuation ignored);
    0 when they name different numbers ("the gate code is 4417" is not "... 4418")."""
    if sorted(_NUMBER.findall(a)) != sorted(_NUMBER.findall(b)):
        return 0.0
    x, y = _pairs(a), _pairs(b)
    return len(x & y) / len(x | y) if x | y else 1.0


async def near_duplicate(engram: Kernel, memory: Memory) -> Memory | None:
    """The active memory in ``memory``'s scope most like it, if they say the same."""
    only_scope = Visibility(frozenset({memory.scope}), frozenset())
    found = await engram.indexes.keywords.search_memories(engram.store, query_words(memory.text), only_scope,
                                                          LOOK_AT, False)
    kept = await engram.store.get_memories([i for i, _ in found])
    best = max(((similarity(m.text, memory.text), m) for m in kept.values()
                if m.scope == memory.scope and m.status == "active"), key=lambda sm: sm[0], default=None)
    return best[1] if best is not None and best[0] >= SAME else None


async def remember(engram: Kernel, memory: Memory) -> tuple[int, str]:
    """Store ``memory`` unless its scope holds it already: (id, ``new`` | ``kept`` | ``updated``).

    ``kept``: the same words were there (its id comes back); ``updated``: a longer wording of it
    was given, and becomes the old memory's new version (the old one is kept, superseded).
    """
    old = await near_duplicate(engram, memory)
    if old is None or old.id is None:
        return await engram.add_memory(memory), "new"
    if len(_PLAIN.sub("", memory.text)) <= len(_PLAIN.sub("", old.text)):
        return old.id, "kept"
    return await engram.update(old.id, memory.text), "updated"
