"""Merging duplicates: similar memories of one scope, which the chat model says record the same
thing, become one memory that keeps every detail and cites all their sources; the originals stay
as its superseded versions. Groups the model keeps apart are remembered and not asked again.
Never across scopes: each scope is searched on its own.

Vectors find the candidates (a memory and its near neighbours in its scope); the model decides.
A failed or malformed answer changes nothing (the group is asked again next time).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from ..chat import ChatModel
from ..errors import ChatError
from ..index.vectors import normalise
from ..kernel import Kernel
from ..model import Memory
from ..prompts.answers import WrongShape, json_object
from ..prompts.templates import language, templates
from ..text.display import flat
from ..text.words import MAX_TEXT

log = logging.getLogger("engram.merge")

MERGED_KINDS = ("fact", "preference", "event", "relation", "plan", "note")  # diaries, reflections: never
CURSOR = "merge:last_id"  # memories up to this id were compared with their scope already
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")


@dataclass(frozen=True)
class MergeSettings:
    similarity: float = 0.9  # cosine from which two memories of a scope are shown to the model
    max_group: int = 5  # memories asked about at once
    max_calls: int = 50  # model calls per run; the rest waits for the next run
    timeout: float = 90.0


@dataclass
class MergeReport:
    groups: int = 0
    merged: int = 0  # groups merged
    superseded: int = 0  # originals now superseded
    kept_apart: int = 0
    failed: int = 0  # calls that failed or answered malformed JSON (nothing changed)
    calls: int = 0

    def stats(self) -> dict[str, int]:
        return dict(vars(self))


class Malformed(ValueError):
    """The model's answer is not the JSON asked for."""


async def merge_duplicates(engram: Kernel, chat: ChatModel, settings: MergeSettings | None = None
                           ) -> MergeReport:
    """Ask the model about each group of similar memories of one scope; merge those it says are one."""
    s, report = settings or MergeSettings(), MergeReport()
    if engram.index is None:
        return report  # no vectors (no embedder): nothing to compare
    store = engram.store  # what is embedded so far (the background indexer embeds; never waited for here)
    seen_up_to = (await store.cursors(CURSOR)).get(CURSOR, 0)
    top = seen_up_to
    for scope in await store.memory_scopes():
        rows = await store.scope_memories(scope, MERGED_KINDS)
        blobs = await store.memory_vectors(engram.embedder.name, [i for i, _ in rows])
        ids = [i for i, _ in rows if i in blobs]
        top = max([top, *ids])
        if len(ids) < 2 or max(ids) <= seen_up_to:
            continue
        mat = normalise(np.frombuffer(b"".join(blobs[i] for i in ids), np.float32).reshape(len(ids), -1))
        apart = await store.kept_apart(ids)
        for group in _groups(np.array(ids), mat, seen_up_to, s):
            if all((a, b) in apart for a in group for b in group if a < b):
                continue
            if report.calls >= s.max_calls:
                return report  # the cursor stays: the rest is compared next run
            report.groups += 1
            await _ask(engram, chat, group, s, report)
    if not report.failed:  # a group whose answer failed is compared (and asked) again next run
        async with store.transaction() as tx:
            await tx.set_cursor(CURSOR, top)
    return report


def _groups(ids: np.ndarray, mat: np.ndarray, seen_up_to: int, s: MergeSettings) -> list[list[int]]:
    """Each new memory (id past ``seen_up_to``) with its not yet grouped neighbours above the
    similarity, greedily, at most ``max_group`` each."""
    taken = np.zeros(len(ids), bool)
    out = []
    for start in range(0, len(ids), 512):
        sims = mat[start : start + 512] @ mat.T
        for r, row in enumerate(sims):
            j = start + r
            if taken[j] or ids[j] <= seen_up_to:
                continue
            near = np.flatnonzero((row >= s.similarity) & ~taken)
            near = near[near != j][np.argsort(-row[near[near != j]], kind="stable")][: s.max_group - 1]
            if len(near):
                group = [j, *near.tolist()]
                taken[group] = True
                out.append(sorted(int(ids[g]) for g in group))
    return out


async def _ask(engram: Kernel, chat: ChatModel, group: list[int], s: MergeSettings,
               report: MergeReport) -> None:
    found = await engram.store.get_memories(group)
    mems = [found[i] for i in group if i in found and found[i].status == "active"]
    if len(mems) < 2:
        return
    try:
        report.calls += 1
        result = await chat.complete(_messages(mems), json=True, timeout=s.timeout)
        text = _answer(result.text, mems)
    except (ChatError, Malformed) as e:
        report.failed += 1
        log.warning("merge: %s (nothing merged; asked again next run)", e)
        return
    if text is None:
        async with engram.store.transaction() as tx:
            await tx.keep_apart(group)
        report.kept_apart += 1
        return
    mid = await engram.merge(_merged(text, mems, engram.clock()), [m.id for m in mems if m.id is not None])
    if mid is not None:
        report.merged += 1
        report.superseded += len(mems)


def _messages(mems: Sequence[Memory]) -> list[dict[str, str]]:

    system, user = templates("merge", language([m.text for m in mems]))
    lines = "\n".join(f"{n + 1}. {flat(m.text)}" for n, m in enumerate(mems))  # one line each
    return [{"role": "system", "content": system},
            {"role": "user", "content": user.substitute(memories=lines)}]


def _answer(raw: str, mems: Sequence[Memory]) -> str | None:
    """The merged text, or None when the model keeps them apart; ``Malformed`` for anything else."""
    try:
        data = json_object(raw, ("same",))
    except WrongShape as e:
        raise Malformed(f"the answer holds no JSON object with 'same': {raw[:80]!r}") from e
    if not isinstance(data.get("same"), bool):
        raise Malformed(f"the answer has no true/false 'same': {raw[:80]!r}")
    if not data["same"]:
        return None
    text = data.get("text")
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_TEXT:
        raise Malformed("a merge without a usable 'text'")
    lost = {n for m in mems for n in _NUMBER.findall(m.text)} - set(_NUMBER.findall(text))
    if lost:
        raise Malformed(f"the merged text drops details ({', '.join(sorted(lost))})")
    return text.strip()


def _merged(text: str, mems: Sequence[Memory], now: datetime) -> Memory:
    first = mems[0]
    froms = [m.valid_from for m in mems if m.valid_from is not None]
    return Memory(text=text, scope=first.scope, kind=first.kind,
                  subjects=tuple(dict.fromkeys(p for m in mems for p in m.subjects)),
                  sources=tuple(sorted({e for m in mems for e in m.sources})),
                  importance=max(m.importance for m in mems), strength=max(m.strength for m in mems),
                  created_at=now, valid_from=min(froms) if froms else None)
