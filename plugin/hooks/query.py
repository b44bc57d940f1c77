"""What the plugin asks recall before a reply: the query text and how many hits.

Kept apart from ``inject.py`` (which imports AstrBot) so benchmarks can build the plugin's own
queries without loading AstrBot.
"""

from __future__ import annotations

from collections.abc import Sequence

QUERY_TURNS = 4  # earlier turns of the conversation that join the latest message in the recall query
QUERY_CHARS = 1200


def recall_query(prompt: str | None, turns: Sequence[str]) -> str:
    """The latest user message first, then the recent turns, newest first, capped."""
    parts = [(prompt or "").strip(), *reversed([t[:300] for t in turns])]
    return "\n".join(p for p in parts if p)[:QUERY_CHARS]


def pool_depth(k: int, seen: int) -> int:
    """How many hits to ask recall for, so that ``k`` remain after the ``seen`` lines the model already
    reads are left out (``already_in_context``)."""
    return min(200, 2 * k + min(seen, 40))
