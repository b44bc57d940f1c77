"""What each page shows, as plain JSON-able data (the JSON endpoints return it; the pages render it).

The overview, memories, a memory, a place and the graph are the owner's view and see everything.
Recall explained shows what one audience would get, so it reads through ``Engram.recall``, which
applies the one scope function (``memory.scopes.visibility``) before anything is ranked.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from contextvars import ContextVar
from datetime import datetime, timezone, tzinfo
from pathlib import Path
from typing import Any

from ..memory import Audience, Block, BrowseReads, Engram, Episode, Hit, Memory
from ..memory.compose import Composed, Composer
from ..memory.self.diary_files import data_folder, diary_day
from ..memory.self.selfhood import Selfhood
from ..memory.strength import strength_now
from ..memory.wording import Said
from . import identity_files
from .i18n import MESSAGES
from .params import DEFAULT_PAGE_SIZE, BadParam, MemoryFilter
from .settings import DashboardSettings, Explain

GRAPH_PEOPLE = 12  # people the graph draws (the ones the bot knows most about)
GRAPH_MAX_PEOPLE = 60
GRAPH_EACH = 5  # memories drawn around each of them, the most firmly held first
GRAPH_POOL = 400  # memories read to choose them from (the most important first)
GRAPH_TALKS = 200  # pairs of people who answer each other, the busiest first
GRAPH_LABEL = 80
PLACE_MEMORIES = 50
PLACE_PAGE = DEFAULT_PAGE_SIZE  # a place's timeline page


class NotFound(Said, LookupError):
    """An id or a place that does not exist (404)."""

    texts = MESSAGES

    def __init__(self, key: str, **values: object) -> None:  # mypy sees the core's Said as Any from here
        super().__init__(key, **values)


# the bot's zone, set for each request (``app._open``): times are given in it, so that the pages, which
# show an ISO time's date and minute, show the bot's own
ZONE: ContextVar[tzinfo | None] = ContextVar("engram_dashboard_zone", default=None)


def iso(t: datetime | float | None) -> str | None:
    if t is None:
        return None
    if isinstance(t, int | float):
        t = datetime.fromtimestamp(t, timezone.utc)
    zone = ZONE.get()
    return (t.astimezone(zone) if zone is not None else t).isoformat(timespec="seconds")


def zone_name() -> str:
    """The zone this request's times are in, as a page names it: "Asia/Shanghai (UTC+08:00)"."""
    zone = ZONE.get()
    offset = datetime.now(zone or timezone.utc).strftime("%z")
    utc = f"UTC{offset[:3]}:{offset[3:]}" if offset != "+0000" else "UTC"
    name = str(zone) if zone is not None else "UTC"
    return utc if name in (utc, "UTC", "Etc/UTC") or name.startswith("UTC") else f"{name} ({utc})"


def _iso_text(v: Any) -> str | None:
    """An ISO time kept as text (a file stamp, a proposal's time) in this request's zone."""
    try:
        return iso(datetime.fromisoformat(str(v))) if v else None
    except ValueError:
        return str(v)


def episode_json(e: Episode) -> dict[str, Any]:
    return {
        "key": f"e{e.id}",
        "id": e.id,
        "time": iso(e.time),
        "space": e.place,
        "seq": e.seq,
        "actor": e.actor,
        "name": e.actor_name,
        "kind": e.kind,
        "text": e.content,
    }


def memory_json(m: Memory, names: dict[str, str], days: float, titles: dict[str, str],
                sources: bool = True) -> dict[str, Any]:
    """A memory; list pages leave ``sources`` out (they do not read them). Its strength is the one it
    has now (``days``: the half-life), not the one stored at its last recall; ``titles``: the places'
    titles (``scope_title``: its place's, for a memory kept to one place)."""
    out: dict[str, Any] = {
        "key": f"m{m.id}",
        "id": m.id,
        "text": m.text,
        "kind": m.kind,
        "scope": m.scope,
        "scope_title": titles.get(m.scope[6:], "") if m.scope.startswith("space:") else "",
        "status": m.status,
        "subjects": [{"id": s, "name": names.get(s, "")} for s in m.subjects],
        "importance": round(m.importance, 3),
        "strength": round(strength_now(m, days), 3),
        "created_at": iso(m.created_at),
        "valid_from": iso(m.valid_from),
        "valid_to": iso(m.valid_to),
        "last_recalled": iso(m.last_recalled),
        "supersedes": m.supersedes,
    }
    if sources:
        out["sources"] = list(m.sources)
    return out


def page_json(items: list[Any], total: int, page: int, size: int) -> dict[str, Any]:
    return {"items": items, "total": total, "page": page, "size": size, "pages": max(1, -(-total // size))}


async def _names(engram: Engram, memories: Iterable[Memory]) -> dict[str, str]:
    return await engram.names({s for m in memories for s in m.subjects})


def _count(v: Any) -> int:
    return int(v) if isinstance(v, int | float) and not isinstance(v, bool) else 0


def _counts(v: Any, prefix: str = "") -> dict[str, int]:
    """A record's counts (those under ``prefix``, without it); anything that is not a count is left out."""
    if not isinstance(v, dict):
        return {}
    return {str(k)[len(prefix):]: _count(n) for k, n in sorted(v.items())
            if str(k).startswith(prefix) and _count(n)}


def _time(v: Any) -> str | None:
    try:
        return iso(float(v)) if isinstance(v, int | float) and not isinstance(v, bool) else None
    except (OverflowError, OSError, ValueError):
        return None


def job_json(name: str, record: Any) -> dict[str, Any]:
    """One job's last run as ``/mem stats`` tells it: when, how it ended, what it did, its failures."""
    r = record if isinstance(record, dict) else {}
    totals = r.get("totals")
    return {
        "name": name,
        "status": str(r["status"]) if r.get("status") else None,  # None: never run yet
        "last_started": _time(r.get("last_started")),
        "last_finished": _time(r.get("last_finished")),
        "error": str(r.get("error") or ""),
        "runs": _count(r.get("runs")),
        "failures": _count(r.get("failures")),
        "last": _counts(r.get("stats")),
        "totals": {k: v for k, v in _counts(totals).items() if "." not in k},
        "failed_calls": _counts(totals, "failed."),
        "refused": _counts(totals, "refused."),
    }


async def job_runs(browser: BrowseReads, settings: DashboardSettings) -> list[dict[str, Any]]:
    """Every job's last run (read from the store, as the scheduler keeps it), the latest first;
    jobs the host schedules that never ran come last."""
    records = await browser.job_runs()
    names = dict.fromkeys([*settings.jobs(), *records])

    def started(name: str) -> float:
        r = records.get(name)
        t = r.get("last_started") if isinstance(r, dict) else None
        return float(t) if isinstance(t, int | float) and not isinstance(t, bool) else float("-inf")

    return [job_json(name, records.get(name)) for name in sorted(names, key=started, reverse=True)]


async def overview(engram: Engram, browser: BrowseReads, settings: DashboardSettings) -> dict[str, Any]:
    """Every count, episodes per day, places and people: counted as the writer keeps them (the counts
    beside the episodes, ``summaries.py``), so nothing here reads every episode."""
    counts = {axis: await browser.memory_counts(axis) for axis in ("kind", "scope", "status")}
    episodes = await browser.count_episodes()
    indexed = engram.index.findable() if engram.index else 0  # not superseded versions' vectors
    live = episodes + counts["status"].get("active", 0) + counts["status"].get("archived", 0)
    titles = await browser.place_titles()
    return {
        "counts": counts,
        "episodes": episodes,
        # active, as the start-up line and /mem stats count them; the rest said beside it
        "memories": counts["status"].get("active", 0),
        "archived": counts["status"].get("archived", 0),
        "superseded": counts["status"].get("superseded", 0),
        "episodes_per_day": await browser.episodes_per_day(),
        "places": [{"space": s, "title": titles.get(s, ""), "episodes": n, "last": iso(t)}
                   for s, n, t in await browser.places()],
        "people": [{"id": p, "name": name, "episodes": n} for p, name, n in await browser.people()],
        "jobs": await job_runs(browser, settings),
        "embedder": engram.embedder.name,
        "chat_model": settings.chat_model or None,
        "index": {
            "indexed": indexed,
            "items": live,
            "coverage": round(indexed / live, 4) if live else None,
        },
    }


async def memories(engram: Engram, browser: BrowseReads, f: MemoryFilter, page: int, size: int
                   ) -> dict[str, Any]:
    args = f.store_args()
    if f.person:  # an id, or a name as people are called where they speak
        args["people"] = (f.person, *await browser.people_named(f.person))
    found, total = await browser.list_memories(None, **args, limit=size, offset=(page - 1) * size)
    names = await _names(engram, found)
    days = engram.settings.strength_days
    titles = await browser.place_titles()
    d = page_json([memory_json(m, names, days, titles, sources=False) for m in found], total, page, size)
    if f.person:  # whose memories these are, as the page's heading says
        d["person"] = (await engram.names({f.person})).get(f.person) or f.person
    return d


async def memory(engram: Engram, browser: BrowseReads, memory_id: int) -> dict[str, Any]:
    try:
        versions = await engram.history(memory_id)
        m = await engram.get(memory_id)
    except KeyError as e:
        raise NotFound("no_memory", id=memory_id) from e
    sources = await engram.sources(memory_id)
    names = await _names(engram, versions)
    days, titles = engram.settings.strength_days, await browser.place_titles()
    return {
        "memory": memory_json(m, names, days, titles),
        "scale": {"half_life_days": days, "archive_below": engram.metabolism.archive_below,
                  "protected_importance": engram.metabolism.protected_importance},
        "sources": [episode_json(ep) for ep in sources],
        "conversations": await conversations(browser, sources),
        "versions": [memory_json(v, names, days, titles) for v in versions],
    }


async def conversations(browser: BrowseReads, sources: list[Episode]) -> list[dict[str, Any]]:
    """The source episodes with the lines around them; sources close together share one conversation."""
    out: list[dict[str, Any]] = []
    for ep in sorted(sources, key=lambda e: (e.place, e.seq or 0)):
        lines = await browser.episodes_around(ep)
        last = out[-1] if out else None
        if last and last["space"] == ep.place and last["episodes"][-1]["seq"] >= (lines[0].seq or 0) - 1:
            seen = {e["id"] for e in last["episodes"]}
            last["episodes"] += [episode_json(e) for e in lines if e.id not in seen]
            last["sources"].append(ep.id)
        else:
            out.append({"space": ep.place, "sources": [ep.id], "episodes": [episode_json(e) for e in lines]})
    for c in out:  # the page of its place (as the place pages it) that holds the first source
        first = next(e for e in c["episodes"] if e["id"] in c["sources"])
        before = await browser.count_place_episodes(c["space"], before_seq=first["seq"] or 0)
        c["page"], c["size"] = before // PLACE_PAGE + 1, PLACE_PAGE
    return out


async def place(engram: Engram, browser: BrowseReads, place: str, page: int | None, size: int
                ) -> dict[str, Any]:
    """A place's episodes in order, one page (``None``: the latest page), and what was learned there."""
    if not place or not await browser.has_place(place):
        raise NotFound("no_place", place=place[:80])
    total = await browser.count_place_episodes(place)
    page = page or max(1, -(-total // size))
    eps = await browser.place_episodes(place, size, (page - 1) * size)
    learned, learned_total = await browser.list_memories(None, place=place, status=None, limit=PLACE_MEMORIES)
    names, titles = await _names(engram, learned), await browser.place_titles()
    return {
        "space": place,
        "title": titles.get(place, ""),
        "episodes": page_json([episode_json(e) for e in eps], total, page, size),
        "memories": [memory_json(m, names, engram.settings.strength_days, titles, sources=False)
                     for m in learned],
        "memories_total": learned_total,
    }


def hit_json(h: Hit, injected: bool) -> dict[str, Any]:
    item = h.item
    where = item.place if isinstance(item, Episode) else item.scope
    who = item.actor_name if isinstance(item, Episode) else ""
    return {
        "key": h.key,
        "kind": h.kind,
        "id": h.id,
        "text": h.text,
        "score": round(h.score, 4),
        "features": {k: round(v, 4) for k, v in h.features.items()},
        "where": where,
        "name": who,
        "time": iso(h.time),
        "injected": injected,
    }


def folder_explain(engram: Engram, settings: DashboardSettings) -> Explain:
    """The block as the plugin would make it, from what the data folder holds (no plugin running:
    the command line): the same ``Composer``, with the identity, self-image and inner state read
    from the folder, never written. The abilities line lists AstrBot's tools, which only a running
    plugin knows: it is left out, and the page says so."""
    folder = settings.data_dir or data_folder(engram)
    composer = Composer(Selfhood(folder, settings.block, read_only=True), settings.tz)

    async def explain(place: str, query: str, owner: bool | None, person: str) -> Composed:
        audience = Audience(place=place, owner_private=bool(owner), people=(person,) if person else ())
        return await composer.explain(engram, audience, query)

    return explain


async def recall(
    engram: Engram, browser: BrowseReads, settings: DashboardSettings, query: str, place: str,
    owner: bool | None, person: str = ""
) -> dict[str, Any]:
    """What ``space`` would recall for ``query`` and exactly the block the host would inject there,
    made by ``memory.compose``: through the plugin's own injection path when it runs
    (``settings.explain``), else from the data folder (``folder_explain``)."""
    if not query:
        raise BadParam("query_empty")
    if not place or not await browser.has_place(place):
        raise BadParam("unknown_audience", place=place[:80])
    if owner is None:
        owner = settings.owner_places(place) if settings.owner_places else False
    explain = settings.explain or folder_explain(engram, settings)
    shown = await explain(place, query, owner, person)
    taken = {h.key for h in shown.injected}
    block = settings.block
    return {
        "query": query,
        "audience": {"space": place, "owner_private": owner, "person": person},
        "hits": [hit_json(h, h.key in taken) for h in shown.hits],
        "block": shown.text,
        "tokens": Block(shown.text, []).tokens,
        "budget": block.inject_budget_tokens,
        "recall_k": block.recall_k,
        # lines only the running plugin can add (the command line has no AstrBot tools to list)
        "left_out": [] if settings.explain is not None or not block.abilities_enabled else ["abilities"],
    }


def held(m: Memory, days: float) -> float:
    """How firmly the bot holds a memory now: its importance times its strength now."""
    return max(m.importance, 0.05) * strength_now(m, days)


async def graph(engram: Engram, browser: BrowseReads, place: str = "", person: str = "",
                n: int = GRAPH_PEOPLE) -> dict[str, Any]:
    """People and what the bot knows about them: the ``n`` people it knows most about (held most
    firmly, see ``held``; then the most talkative), the ``GRAPH_EACH`` memories it holds most firmly
    about each, and who answers whom among them. ``place``: only what was learned there; ``person``
    (an id, or a name someone has gone by): that person and those known together with them."""
    if not 1 <= n <= GRAPH_MAX_PEOPLE:
        raise BadParam("graph_people", n=GRAPH_MAX_PEOPLE)
    focus: tuple[str, ...] = ()
    if person:
        focus = (person, *await browser.people_named(person))
        pool, total = await browser.list_memories(None, people=focus, status="active", limit=GRAPH_POOL)
    elif place:
        if not await browser.has_place(place):
            raise NotFound("no_place", place=place[:80])
        pool, total = await browser.list_memories(None, place=place, status="active", limit=GRAPH_POOL)
    else:
        pool, total = await browser.memories_about(GRAPH_POOL), await browser.count_memories_about()
    days = engram.settings.strength_days
    said = {p: (name, k) for p, name, k in await browser.people()}
    talks = await browser.talks(GRAPH_TALKS)
    by_person: dict[str, list[Memory]] = {}
    for m in sorted((m for m in pool if m.subjects), key=lambda m: -held(m, days)):
        for s in m.subjects:
            by_person.setdefault(s, []).append(m)
    known = {p: sum(held(m, days) for m in ms) for p, ms in by_person.items()}
    talked: dict[str, int] = {}
    for a, b, k in talks:
        talked[a], talked[b] = talked.get(a, 0) + k, talked.get(b, 0) + k
    candidates = set(by_person) | (set() if person or place else set(talked))
    if person:  # whoever was found under that name comes first, even with nothing known yet
        candidates |= {p for p in focus if p in said or p in by_person}
    ranked = sorted(candidates, key=lambda p: (p not in focus, -known.get(p, 0.0), -talked.get(p, 0), p))
    chosen = ranked[:n]
    shown = set(chosen)
    memories: dict[int, Memory] = {}
    for p in chosen:
        for m in by_person.get(p, [])[:GRAPH_EACH]:
            if m.id is not None:  # stored memories: always
                memories[m.id] = m
    nodes = [
        {
            "id": p,
            "type": "person",
            "label": said.get(p, ("", 0))[0] or p.rsplit(":", 1)[-1],
            "weight": said.get(p, ("", 0))[1],  # lines said, in all
            "known": len(by_person.get(p, [])),  # memories about them (of those read)
            "focus": p in focus,
        }
        for p in chosen
    ]
    nodes += [{"id": f"m{m.id}", "type": "memory", "label": m.text[:GRAPH_LABEL],
               "weight": round(held(m, days), 3)} for m in memories.values()]
    pairs = [(a, b, k) for a, b, k in talks if a in shown and b in shown]
    links = [{"source": a, "target": b, "type": "talks", "weight": k} for a, b, k in pairs]
    links += [{"source": f"m{m.id}", "target": s, "type": "about", "weight": 1}
              for m in memories.values() for s in m.subjects if s in shown]
    return {
        "nodes": nodes,
        "links": links,
        "focus": {"space": place, "person": person, "n": n},
        "shown": {"people": len(chosen), "people_total": len(ranked), "each": GRAPH_EACH,
                  "memories": len(memories), "memories_total": total,
                  "talks": len(pairs), "talks_total": await browser.count_talks()},
    }


async def diary(engram: Engram, browser: BrowseReads, page: int, size: int,
                folder: Path | None = None) -> dict[str, Any]:
    """The diary entries, each with the ``day`` it tells of (counted as the diaries count days: its
    start's UTC date is the day before in a zone east of UTC)."""
    # the current entry of each day (a rewrite after a forget supersedes it; diaries never fade): a day
    # is listed once, its earlier versions are on its memory page
    d = await memories(engram, browser, MemoryFilter(kind="diary", status="active"), page, size)
    folder = folder or data_folder(engram)
    for m in d["items"]:
        start = m["valid_from"]
        m["day"] = diary_day(folder, datetime.fromisoformat(start)).isoformat() if start else None
    return d


async def identity(engram: Engram, settings: DashboardSettings) -> dict[str, Any]:
    """The core identity, the self-image with its earlier versions, and the open proposals, read from
    the data folder (the host's, or the one holding the store file)."""
    folder = settings.data_dir or data_folder(engram)
    d = await asyncio.to_thread(identity_files.identity, folder, settings.identity())
    for v in [*d["history"], *d["core_history"]]:  # file stamps are UTC; the pages speak the bot's zone
        v["replaced_at"] = _iso_text(v["replaced_at"])
    for p in d["proposals"]:
        p["at"] = _iso_text(p.get("at"))
    return d
