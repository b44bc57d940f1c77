"""Server-rendered pages: the overview, memories, a memory, a place, the graph, the diary, errors
(recall explained and identity are in ``recall_page`` and ``identity_page``); the pieces they are
made of are in ``markup``.

Charts and the graph are drawn by ``static/app.js`` from JSON placed in a non-executed
``<script type="application/json">`` element (``<`` escaped, so no text can close it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..memory import MEMORY_KINDS, MEMORY_STATUSES
from .i18n import counter, host_word, job_name, label, value
from .identity_page import identity
from .markup import (
    data_script,
    empty,
    episode_line,
    esc,
    layout,
    link,
    memory_table,
    pager,
    place_link,
    scope,
    shown_of,
    stamp,
    table,
    who,
)
from .recall_page import recall

__all__ = ["diary", "error", "graph", "identity", "memories", "memory", "overview", "place", "recall"]


# ---- pages ----------------------------------------------------------------------------------------
def _pairs(lang: str, counts: Mapping[str, int]) -> str:
    return ("，" if lang == "zh" else ", ").join(f"{counter(lang, k)} {v}" for k, v in counts.items())


def _did(lang: str, j: Mapping[str, Any]) -> list[str]:
    """What a job's last run did (its counters in words), what failed or was refused in it, and in all."""
    last = j["last"]
    parts = [_pairs(lang, {k: v for k, v in last.items() if "." not in k})]
    for prefix, key in (("failed.", "failed_last"), ("refused.", "refused_last"),
                        ("", "failed_calls"), ("", "refused")):
        counts = ({k[len(prefix):]: v for k, v in last.items() if k.startswith(prefix)} if prefix
                  else j[key])
        if counts:
            parts.append(label(lang, key).format(pairs=", ".join(f"{k} {v}" for k, v in counts.items())))
    return [p for p in parts if p]


def _job(lang: str, name: str) -> str:
    """A job by its name in the page's language, with the name the log and ``/mem`` use beside it."""
    said = job_name(lang, name)
    return f"<code>{esc(name)}</code>" if said == name else f"{esc(said)} <code>{esc(name)}</code>"


def job_table(lang: str, jobs: Sequence[Mapping[str, Any]]) -> str:
    """Each job's last run: when, how it ended (and why it failed), what it did, failures in all."""
    if not jobs:
        return empty(lang, "no_jobs")
    rows = []
    for j in jobs:
        if j["status"] is None:
            rows.append([_job(lang, j["name"]), esc(label(lang, "never_run")), "", "", ""])
            continue
        status = esc(value(lang, j["status"]))
        if j["error"]:
            status += f'<div class="error">{esc(j["error"])}</div>'
        did = _did(lang, j)
        rows.append([
            _job(lang, j["name"]),
            stamp(j["last_started"], seconds=True),
            f'<span class="job-{esc(j["status"])}">{status}</span>',
            f"{j['runs']} / {j['failures']}",
            "<br>".join(esc(x) for x in did),
        ])
    head = [label(lang, k) for k in ("job", "last_run", "status", "runs_failed", "last_did")]
    return table([esc(h) for h in head], rows, "jobs")


COUNT_ROWS = 30  # rows of each count table on the overview
LIST_ROWS = 50  # places and people on the overview


def overview(lang: str, d: Mapping[str, Any]) -> str:
    titles = {p["space"]: p.get("title", "") for p in d["places"]}

    def counts(axis: str) -> str:
        rows = [[scope(lang, k, titles.get(k[6:], "")) if axis == "scope" else esc(value(lang, k)), esc(n)]
                for k, n in sorted(d["counts"][axis].items(), key=lambda kv: -kv[1])[:COUNT_ROWS]]
        return (
            f'<section class="card"><h3>{esc(label(lang, "by_" + axis))}</h3>'
            f"{table([esc(label(lang, k)) for k in (axis, 'memories')], rows) if rows else ''}"
            f"{'' if rows else empty(lang, 'none')}"
            f"{shown_of(lang, len(rows), len(d['counts'][axis]))}</section>"
        )

    places = [
        [
            place_link(p["space"], p.get("title", "")),
            esc(p["episodes"]),
            stamp(p["last"]),
        ]
        for p in d["places"][:LIST_ROWS]
    ]
    people = [
        [
            f'<a href="{link("/memories", person=p["id"])}">{esc(p["name"] or p["id"])}</a>',
            esc(p["id"]),
            esc(p["episodes"]),
        ]
        for p in d["people"][:LIST_ROWS]
    ]
    place_head = [esc(label(lang, k)) for k in ("place", "episodes", "last_said")]
    jobs = job_table(lang, d["jobs"])
    ix = d["index"]
    coverage = "—" if ix["coverage"] is None else f"{ix['coverage'] * 100:.1f}%"
    body = (
        f'<p class="big">{d["episodes"]} {esc(label(lang, "episodes"))} · {d["memories"]}'
        f" {esc(label(lang, 'active_memories'))}"
        f' <small>{esc(label(lang, "besides").format(archived=d["archived"], superseded=d["superseded"]))}'
        "</small></p>"
        f'<section class="card wide"><h3>{esc(label(lang, "episodes_per_day"))}</h3>'
        f'<svg id="chart" class="chart" role="img" aria-label="{esc(label(lang, "episodes_per_day"))}"></svg>'
        f"{data_script('chart-data', d['episodes_per_day'])}</section>"
        f'<div class="cards">{counts("kind")}{counts("scope")}{counts("status")}</div>'
        f'<div class="cards"><section class="card"><h3>{esc(label(lang, "models"))}</h3>'
        f"<p>{esc(label(lang, 'embedder'))}: <code>{esc(d['embedder'])}</code></p>"
        f"<p>{esc(label(lang, 'chat_model'))}: "
        f"<code>{esc(host_word(lang, d['chat_model']) if d['chat_model'] else label(lang, 'not_yet'))}"
        "</code></p>"
        f"<h3>{esc(label(lang, 'index'))}</h3><p>{ix['indexed']} / {ix['items']}"
        f" {esc(label(lang, 'indexed'))} ({coverage})</p></section>"
        f'<section class="card"><h3>{esc(label(lang, "jobs"))}</h3>{jobs}</section></div>'
        f'<div class="cards"><section class="card"><h3>{esc(label(lang, "places"))}</h3>'
        f"{table(place_head, places) if places else ''}"
        f"{'' if places else empty(lang, 'no_places')}"
        f"{shown_of(lang, len(places), len(d['places']))}</section>"
        f'<section class="card"><h3>{esc(label(lang, "people"))}</h3>'
        f"{table([esc(label(lang, k)) for k in ('person', 'id', 'episodes')], people) if people else ''}"
        f"{'' if people else empty(lang, 'none')}"
        f"{shown_of(lang, len(people), len(d['people']))}</section></div>"
    )
    return layout(lang, label(lang, "overview"), body, "overview")


def _select(lang: str, name: str, options: Sequence[str], chosen: str, any_label: str) -> str:
    opts = "".join(
        f'<option value="{esc(o)}"{" selected" if o == chosen else ""}>{esc(value(lang, o))}</option>'
        for o in options
    )
    return f'<select name="{name}"><option value="">{esc(any_label)}</option>{opts}</select>'


def memories(lang: str, d: Mapping[str, Any], filters: Mapping[str, str]) -> str:
    any_ = label(lang, "any")
    form = (
        f'<form class="filters" method="get" action="/memories">'
        f'<input name="q" placeholder="{esc(label(lang, "search"))}" value="{esc(filters.get("q", ""))}">'
        f"<label>{esc(label(lang, 'kind'))} "
        f"{_select(lang, 'kind', MEMORY_KINDS, filters.get('kind', ''), any_)}"
        f"</label><label>{esc(label(lang, 'status'))} "
        f"{_select(lang, 'status', MEMORY_STATUSES, filters.get('status', ''), any_)}</label>"
        f'<label>{esc(label(lang, "scope"))} <input name="scope" value="{esc(filters.get("scope", ""))}"'
        f' placeholder="public, owner, space:…"></label>'
        f'<label>{esc(label(lang, "place"))} <input name="place" value="{esc(filters.get("place", ""))}">'
        f'</label><label>{esc(label(lang, "person"))} <input name="person"'
        f' value="{esc(filters.get("person", ""))}"></label>'
        f"<button>{esc(label(lang, 'filter'))}</button></form>"
    )
    body = form + memory_table(lang, d["items"]) + pager(lang, "/memories", d, filters)
    whose = d.get("person")
    title = label(lang, "memories_about").format(who=whose) if whose else label(lang, "memories")
    return layout(lang, title, body, "memories")


def memory(lang: str, d: Mapping[str, Any]) -> str:
    m, scale = d["memory"], d["scale"]
    strength = label(lang, "strength_scale").format(value=m["strength"], days=scale["half_life_days"],
                                                    below=scale["archive_below"])
    importance = label(lang, "importance_scale").format(value=m["importance"],
                                                        protected=scale["protected_importance"])
    facts = table(
        [],
        [
            [esc(label(lang, "scope")), scope(lang, m["scope"], m.get("scope_title", ""))],
            [esc(label(lang, "kind")), esc(value(lang, m["kind"]))],
            [esc(label(lang, "status")), esc(value(lang, m["status"]))],
            [esc(label(lang, "subjects")), who(m["subjects"]) or "—"],
            [esc(label(lang, "strength")), esc(strength)],
            [esc(label(lang, "importance")), esc(importance)],
            [esc(label(lang, "created")), stamp(m["created_at"])],
        ],
        "facts",
    )
    if d["conversations"]:
        src = "".join(
            f'<ol class="conversation"><li class="where">'
            f'<a href="{link("/place", space=c["space"], page=c["page"], size=c["size"])}'
            f'#e{c["sources"][0]}">'
            f'{esc(c["space"])}</a>'
            f"</li>{''.join(episode_line(e, e['id'] in c['sources']) for e in c['episodes'])}</ol>"
            for c in d["conversations"]
        )
    else:
        src = empty(lang, "no_sources")
    versions = table(
        [esc(label(lang, k)) for k in ("id", "text", "status", "created")],
        [
            [
                f'<a href="/memories/{v["id"]}">{esc(v["key"])}</a>',
                f'<span class="text">{esc(v["text"])}</span>',
                esc(value(lang, v["status"])),
                stamp(v["created_at"]),
            ]
            for v in d["versions"]
        ],
        "versions",
    )
    body = (
        f'<blockquote class="text memory-text">{esc(m["text"])}</blockquote>{facts}'
        f"<h2>{esc(label(lang, 'sources'))}</h2>{src}<h2>{esc(label(lang, 'versions'))}</h2>{versions}"
    )
    return layout(lang, f"{label(lang, 'memory')} {m['key']}", body, "memories")


def place(lang: str, d: Mapping[str, Any]) -> str:
    eps = d["episodes"]
    timeline = "".join(episode_line(e) for e in eps["items"])
    body = (
        f'<h2>{esc(label(lang, "timeline"))}</h2><ol class="timeline">{timeline}</ol>'
        f"{pager(lang, '/place', eps, {'space': d['space'], 'size': eps['size']}, 'latest')}"
        f"<h2>{esc(label(lang, 'learned_here'))} ({d['memories_total']})</h2>"
        f"{memory_table(lang, d['memories'])}"
    )
    if d["memories_total"] > len(d["memories"]):  # the rest, on the memories page filtered to here
        body += (f'<p><a href="{link("/memories", place=d["space"])}">'
                 f'{esc(label(lang, "all_n").format(n=d["memories_total"]))}</a></p>')
    named = f"{d['title']} · {d['space']}" if d.get("title") else d["space"]
    return layout(lang, f"{label(lang, 'place')}: {named}", body)


def graph(lang: str, d: Mapping[str, Any], places: Sequence[str] = ()) -> str:
    n, focus = d["shown"], d["focus"]
    cut = any(n[k] < n[k + "_total"] for k in ("people", "memories", "talks"))
    note = f'<p class="hint">{esc(label(lang, "graph_shown").format(**n))}</p>' if cut else ""
    opts = "".join(f'<option value="{esc(p)}"{" selected" if p == focus["space"] else ""}>{esc(p)}</option>'
                   for p in places)
    form = (
        f'<form class="filters" method="get" action="/graph">'
        f'<label>{esc(label(lang, "graph_place"))} <select name="space"><option value="">'
        f'{esc(label(lang, "graph_everywhere"))}</option>{opts}</select></label>'
        f'<label>{esc(label(lang, "graph_person"))} <input name="person"'
        f' value="{esc(focus["person"])}"></label>'
        f'<label>{esc(label(lang, "graph_n"))} <input name="n" type="number" min="1" max="60" size="3"'
        f' value="{esc(focus["n"])}"></label><button>{esc(label(lang, "graph_draw"))}</button>'
        f' <a href="/graph">{esc(label(lang, "graph_all"))}</a></form>'
    )
    who = next((x["label"] for x in d["nodes"] if x.get("focus")), focus["person"])
    title = label(lang, "graph_of").format(who=who) if focus["person"] else label(lang, "graph")
    if focus["person"]:
        form += f'<p><a href="{link("/memories", person=focus["person"])}">' \
                f'{esc(label(lang, "memories_about").format(who=who))}</a></p>'
    if not d["nodes"]:
        return layout(lang, title, form + empty(lang, "graph_none"), "graph")
    body = (
        f'{form}<p>{esc(label(lang, "graph_help"))}</p>{note}<svg id="graph" class="graph" role="img"'
        f' aria-label="{esc(label(lang, "graph"))}"></svg><p id="graph-label" class="hint"></p>'
        f"{data_script('graph-data', d)}"
    )
    return layout(lang, title, body, "graph")


def diary(lang: str, d: Mapping[str, Any]) -> str:
    if d["total"] == 0:
        body = f'<p class="empty">{esc(label(lang, "diary_none"))}</p>'
    else:
        body = "".join(
            f'<article class="diary"><h3>{esc(m.get("day") or (m["created_at"] or "")[:10])}</h3>'
            f'<p class="text">{esc(m["text"])}</p>{_rewritten(lang, m)}</article>'
            for m in d["items"]
        )
        body += pager(lang, "/diary", d, {})
    return layout(lang, label(lang, "diary"), body, "diary")


def _rewritten(lang: str, m: Mapping[str, Any]) -> str:
    """A day's entry written again (after a forget): said, with a link to its earlier versions."""
    if not m.get("supersedes"):
        return ""
    return f'<p class="hint"><a href="/memories/{m["id"]}">{esc(label(lang, "rewritten"))}</a></p>'


def error(lang: str, status: int, message: str) -> str:
    """An error page; ``message`` is already in ``lang``."""
    title = label(lang, "not_found") if status == 404 else label(lang, "error")
    return layout(lang, f"{status} {title}", f'<p class="error">{esc(message)}</p>')
