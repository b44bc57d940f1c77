"""Which recalled hits earn their place in what the model reads (the injected block, ``memory_recall``).

Recall ranks; this decides what is worth a note, by what a note would carry:
- a line with no content of its own ("thanks!", "haha", "👍", "I'm back", ``text.no_content``) never
  goes in: whatever it seems to match, it borrows from the line it answered;
- a text already given (the same line said again, a memory and the line it was drawn from) goes in
  once: a memory stands for its own source lines, which are left out;
- a question (a line that ends with "?") comes after the lines that state something: someone's
  earlier question about the cat matches the question about the cat better than the answer does, and
  would otherwise take the answer's place under the budget.
"""

from __future__ import annotations

from collections.abc import Sequence

from .model import Episode, Hit, Memory
from .text.words import no_content, words


def empty(hit: Hit) -> bool:
    """A line with no content of its own (its words all acknowledgements or greetings, or none)."""
    return isinstance(hit.item, Episode) and no_content(words(hit.item.content))


def asks(hit: Hit) -> bool:
    """A line that asks a question rather than states something."""
    return isinstance(hit.item, Episode) and hit.item.content.rstrip().endswith(("?", "？"))


def worth_notes(hits: Sequence[Hit], k: int) -> list[Hit]:
    """The first ``k`` of ``hits`` that carry something (see the module), statements before questions,
    each group in recall's order (a question is not dropped for being one: it may be the evidence)."""
    sources = {s for h in hits if isinstance(h.item, Memory) for s in h.item.sources}
    seen: set[str] = set()
    kept: list[Hit] = []
    for h in hits:
        text = " ".join(h.text.split()).casefold()
        if empty(h) or text in seen or (isinstance(h.item, Episode) and h.item.id in sources):
            continue
        seen.add(text)
        kept.append(h)
        if len(kept) == k:
            break
    return [h for h in kept if not asks(h)] + [h for h in kept if asks(h)]
