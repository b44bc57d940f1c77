"""Server-rendered pages. Every value from the store goes through :func:`esc`: text is shown as text.

Charts and the graph are drawn by ``static/app.js`` from JSON placed in a non-executed
``<script type="application/json">`` element (``<`` escaped, so no text can close it).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any
from urllib.parse import urlencode

from ..memory import MEMORY_KINDS, MEMORY_STATUSES
from ..memory.display import visible
from .i18n import label

NAV = (
    ("/", "overview"),
    ("/memories", "memories"),
    ("/recall", "recall"),
    ("/graph", "graph"),
    ("/diary", "diary"),
    ("/identity", "identity"),
)


def esc(value: Any) -> str:
    """``value`` as HTML text, without control characters or bidi overrides (``display.visible``: a
    name written "\u202eecilA" showed as "Alice")."""
    return escape(visible("" if value is None else str(value)), quote=True)


def link(path: str, **params: Any) -> str:
    query = urlencode({k: v for k, v in params.items() if v not in (None, "")})
    return esc(path + ("?" + query if query else ""))


def data_script(element_id: str, data: Any) -> str:
    # json.dumps escapes C0 controls; the bidi overrides and C1 controls it leaves are never structural
    text = visible(json.dumps(data, ensure_ascii=False)).replace("<", "\\u003c").replace(">", "\\u003e")
    return f'<script type="application/json" id="{esc(element_id)}">{text}</script>'


def layout(lang: str, title: str, body: str, active: str = "") -> str:
    nav = "".join(
        f'<a href="{path}"{" class=on" if key == active else ""}>{esc(label(lang, key))}</a>'
        for path, key in NAV
    )
    return (
        f'<!doctype html><html lang="{"zh-CN" if lang == "zh" else "en"}"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<title>{esc(title)} · Engram</title><link rel="stylesheet" href="/static/style.css"></head>'
        f"<body><header><b>{esc(label(lang, 'title'))}</b><nav>{nav}</nav></header>"
        f'<main><h1>{esc(title)}</h1>{body}</main><script src="/static/app.js"></script></body></html>'
    )


def table(head: Sequence[str], rows: Sequence[Sequence[str]], cls: str = "") -> str:
    """A table; cells are HTML already (escape what goes in)."""
    th = "".join(f"<th>{h}</th>" for h in head)
    trs = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f'<table class="{cls}"><thead><tr>{th}</tr></thead><tbody>{trs}</tbody></table>'


def pager(lang: str, path: str, page: Mapping[str, Any], params: Mapping[str, Any]) -> str:
    parts = [esc(label(lang, "page_of").format(page=page["page"], pages=page["pages"], total=page["total"]))]
    if page["page"] > 1:
        parts.insert(
            0,
            f'<a rel="prev" href="{link(path, **params, page=page["page"] - 1)}">'
            f"{esc(label(lang, 'prev'))}</a>",
        )
    if page["page"] < page["pages"]:
        parts.append(
            f'<a rel="next" href="{link(path, **params, page=page["page"] + 1)}">'
            f"{esc(label(lang, 'next'))}</a>"
        )
    return '<p class="pager">' + " · ".join(parts) + "</p>"


def who(subjects: Sequence[Mapping[str, str]]) -> str:
    return ", ".join(
        f'<a href="{link("/memories", person=s["id"])}">{esc(s["name"] or s["id"])}</a>' for s in subjects
    )


def memory_rows(items: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    return [
        [
            f'<a href="/memories/{m["id"]}">{esc(m["key"])}</a>',
            f'<span class="text">{esc(m["text"])}</span>',
            esc(m["kind"]),
            esc(m["scope"]),
            esc(m["status"]),
            who(m["subjects"]),
            esc(m["importance"]),
            esc((m["created_at"] or "")[:10]),
        ]
        for m in items
    ]


def memory_table(lang: str, items: Sequence[Mapping[str, Any]]) -> str:
    if not items:
        return f'<p class="empty">{esc(label(lang, "none"))}</p>'
    head = [
        "id",
        label(lang, "text"),
        label(lang, "kind"),
        label(lang, "scope"),
        label(lang, "status"),
        label(lang, "subjects"),
        label(lang, "importance"),
        label(lang, "created"),
    ]
    return table([esc(h) for h in head], memory_rows(items), "memories")


def episode_line(e: Mapping[str, Any], mark: bool = False) -> str:
    name = e["name"] or e["actor"] or "—"
    return (
        f'<li class="ep{" mark" if mark else ""}" id="{esc(e["key"])}"><time>{esc((e["time"] or "")[:16])}'
        f'</time> <b>{esc(name)}</b> <span class="text">{esc(e["text"])}</span>'
        f" <small>{esc(e['key'])}</small></li>"
    )


# ---- pages ----------------------------------------------------------------------------------------
def _pairs(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items())


def job_table(lang: str, jobs: Sequence[Mapping[str, Any]]) -> str:
    """Each job's last run: when, how it ended (and why it failed), what it did, failures in all."""
    if not jobs:
        return f'<p class="empty">{esc(label(lang, "no_jobs"))}</p>'
    rows = []
    for j in jobs:
        if j["status"] is None:
            rows.append([esc(j["name"]), esc(label(lang, "never_run")), "", "", ""])
            continue
        status = esc(j["status"])
        if j["error"]:
            status += f'<div class="error">{esc(j["error"])}</div>'
        did = [_pairs(j["last"])]
        if j["failed_calls"]:
            did.append(f"{label(lang, 'failed_calls')}: {_pairs(j['failed_calls'])}")
        if j["refused"]:
            did.append(f"{label(lang, 'refused')}: {_pairs(j['refused'])}")
        rows.append([
            f"<code>{esc(j['name'])}</code>",
            esc((j["last_started"] or "").replace("T", " ")[:19]),
            f'<span class="job-{esc(j["status"])}">{status}</span>',
            f"{j['runs']} / {j['failures']}",
            "<br>".join(esc(x) for x in did if x),
        ])
    head = [label(lang, k) for k in ("job", "last_run", "status", "runs_failed", "last_did")]
    return table([esc(h) for h in head], rows, "jobs")


COUNT_ROWS = 30  # rows of each count table on the overview
LIST_ROWS = 50  # places and people on the overview


def shown_of(lang: str, shown: int, total: int) -> str:
    """A visible note under a table that shows only some of its rows (nothing when it shows all)."""
    if shown >= total:
        return ""
    return f'<p class="hint">{esc(label(lang, "shown_of").format(shown=shown, total=total))}</p>'


def overview(lang: str, d: Mapping[str, Any]) -> str:
    def counts(axis: str) -> str:
        rows = [[esc(k), esc(n)] for k, n in
                sorted(d["counts"][axis].items(), key=lambda kv: -kv[1])[:COUNT_ROWS]]
        return (
            f'<section class="card"><h3>{esc(label(lang, "by_" + axis))}</h3>'
            f"{table([esc(label(lang, axis)), '#'], rows) if rows else esc(label(lang, 'none'))}"
            f"{shown_of(lang, len(rows), len(d['counts'][axis]))}</section>"
        )

    places = [
        [
            f'<a href="{link("/place", space=p["space"])}">{esc(p["space"])}</a>',
            esc(p["episodes"]),
            esc((p["last"] or "")[:16]),
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
    jobs = job_table(lang, d["jobs"])
    ix = d["index"]
    coverage = "—" if ix["coverage"] is None else f"{ix['coverage'] * 100:.1f}%"
    body = (
        f'<p class="big">{d["episodes"]} {esc(label(lang, "episodes"))} · {d["memories"]}'
        f" {esc(label(lang, 'memories'))}</p>"
        f'<section class="card wide"><h3>{esc(label(lang, "episodes_per_day"))}</h3>'
        f'<svg id="chart" class="chart" role="img" aria-label="{esc(label(lang, "episodes_per_day"))}"></svg>'
        f"{data_script('chart-data', d['episodes_per_day'])}</section>"
        f'<div class="cards">{counts("kind")}{counts("scope")}{counts("status")}</div>'
        f'<div class="cards"><section class="card"><h3>{esc(label(lang, "models"))}</h3>'
        f"<p>{esc(label(lang, 'embedder'))}: <code>{esc(d['embedder'])}</code></p>"
        f"<p>{esc(label(lang, 'chat_model'))}: "
        f"<code>{esc(d['chat_model'] or label(lang, 'not_yet'))}</code></p>"
        f"<h3>{esc(label(lang, 'index'))}</h3><p>{ix['indexed']} / {ix['items']}"
        f" {esc(label(lang, 'indexed'))} ({coverage})</p></section>"
        f'<section class="card"><h3>{esc(label(lang, "jobs"))}</h3>{jobs}</section></div>'
        f'<div class="cards"><section class="card"><h3>{esc(label(lang, "places"))}</h3>'
        f"{table([esc(label(lang, 'place')), '#', ''], places)}"
        f"{shown_of(lang, len(places), len(d['places']))}</section>"
        f'<section class="card"><h3>{esc(label(lang, "people"))}</h3>'
        f"{table([esc(label(lang, 'person')), 'id', '#'], people)}"
        f"{shown_of(lang, len(people), len(d['people']))}</section></div>"
    )
    return layout(lang, label(lang, "overview"), body, "overview")


def _select(name: str, options: Sequence[str], chosen: str, any_label: str) -> str:
    opts = "".join(
        f'<option value="{esc(o)}"{" selected" if o == chosen else ""}>{esc(o)}</option>' for o in options
    )
    return f'<select name="{name}"><option value="">{esc(any_label)}</option>{opts}</select>'


def memories(lang: str, d: Mapping[str, Any], filters: Mapping[str, str]) -> str:
    any_ = label(lang, "any")
    form = (
        f'<form class="filters" method="get" action="/memories">'
        f'<input name="q" placeholder="{esc(label(lang, "search"))}" value="{esc(filters.get("q", ""))}">'
        f"<label>{esc(label(lang, 'kind'))} {_select('kind', MEMORY_KINDS, filters.get('kind', ''), any_)}"
        f"</label><label>{esc(label(lang, 'status'))} "
        f"{_select('status', MEMORY_STATUSES, filters.get('status', ''), any_)}</label>"
        f'<label>{esc(label(lang, "scope"))} <input name="scope" value="{esc(filters.get("scope", ""))}"'
        f' placeholder="public, owner, space:…"></label>'
        f'<label>{esc(label(lang, "place"))} <input name="place" value="{esc(filters.get("place", ""))}">'
        f'</label><label>{esc(label(lang, "person"))} <input name="person"'
        f' value="{esc(filters.get("person", ""))}"></label>'
        f"<button>{esc(label(lang, 'filter'))}</button></form>"
    )
    body = form + memory_table(lang, d["items"]) + pager(lang, "/memories", d, filters)
    return layout(lang, label(lang, "memories"), body, "memories")


def memory(lang: str, d: Mapping[str, Any]) -> str:
    m = d["memory"]
    facts = table(
        [],
        [
            [esc(label(lang, "scope")), esc(m["scope"])],
            [esc(label(lang, "kind")), esc(m["kind"])],
            [esc(label(lang, "status")), esc(m["status"])],
            [esc(label(lang, "subjects")), who(m["subjects"]) or "—"],
            [esc(label(lang, "strength")), esc(m["strength"])],
            [esc(label(lang, "importance")), esc(m["importance"])],
            [esc(label(lang, "created")), esc(m["created_at"])],
        ],
        "facts",
    )
    if d["conversations"]:
        src = "".join(
            f'<ol class="conversation"><li class="where">'
            f'<a href="{link("/place", space=c["space"])}">{esc(c["space"])}</a>'
            f"</li>{''.join(episode_line(e, e['id'] in c['sources']) for e in c['episodes'])}</ol>"
            for c in d["conversations"]
        )
    else:
        src = f'<p class="empty">{esc(label(lang, "no_sources"))}</p>'
    versions = table(
        ["id", esc(label(lang, "text")), esc(label(lang, "status")), esc(label(lang, "created"))],
        [
            [
                f'<a href="/memories/{v["id"]}">{esc(v["key"])}</a>',
                f'<span class="text">{esc(v["text"])}</span>',
                esc(v["status"]),
                esc(v["created_at"]),
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
        f"{pager(lang, '/place', eps, {'space': d['space'], 'size': eps['size']})}"
        f"<h2>{esc(label(lang, 'learned_here'))} ({d['memories_total']})</h2>"
        f"{memory_table(lang, d['memories'])}"
    )
    return layout(lang, f"{label(lang, 'place')}: {d['space']}", body)


def recall(
    lang: str, d: Mapping[str, Any] | None, form: Mapping[str, str], places: Sequence[str], error: str = ""
) -> str:
    chosen = form.get("space", "")
    opts = "".join(
        f'<option value="{esc(p)}"{" selected" if p == chosen else ""}>{esc(p)}</option>' for p in places
    )
    owner = " checked" if form.get("owner") in ("1", "on", "true") else ""
    body = (
        f'<form class="filters" method="get" action="/recall"><input name="q" size="50" required'
        f' placeholder="{esc(label(lang, "query"))}" value="{esc(form.get("q", ""))}">'
        f'<label>{esc(label(lang, "audience"))} <select name="space">{opts}</select></label>'
        f'<label><input type="checkbox" name="owner" value="1"{owner}> '
        f"{esc(label(lang, 'owner_chat'))}</label>"
        f"<button>{esc(label(lang, 'explain'))}</button></form>"
    )
    if error:
        body += f'<p class="error">{esc(error)}</p>'
    if d is not None:
        body += f"<h2>{esc(label(lang, 'hits'))}</h2>"
        if d["hits"]:
            names = list(d["hits"][0]["features"])
            rows = [
                [
                    esc(i + 1),
                    esc(h["key"])
                    + (
                        f" <em>{esc(label(lang, 'injected'))}</em>"
                        if h["injected"]
                        else f" <small>{esc(label(lang, 'over_budget'))}</small>"
                    ),
                    f'<span class="text">{esc(h["text"])}</span>',
                    esc(h["where"]),
                    f"<b>{h['score']:.3f}</b>",
                    *[esc(f"{h['features'].get(n, 0):.3f}") for n in names],
                ]
                for i, h in enumerate(d["hits"])
            ]
            body += (
                '<div class="scroll">'
                + table(
                    [
                        "#",
                        "id",
                        esc(label(lang, "text")),
                        esc(label(lang, "scope")),
                        esc(label(lang, "score")),
                        *[esc(n) for n in names],
                    ],
                    rows,
                    "hits",
                )
                + "</div>"
            )
        else:
            body += f'<p class="empty">{esc(label(lang, "no_hits"))}</p>'
        body += (
            f'<h2>{esc(label(lang, "block"))} — <span id="tokens">{d["tokens"]}</span> / {d["budget"]}'
            f' {esc(label(lang, "tokens"))}</h2><pre class="block">{esc(d["block"])}</pre>'
        )
    return layout(lang, label(lang, "recall"), body, "recall")


def graph(lang: str, d: Mapping[str, Any]) -> str:
    n = d["shown"]
    bounded = n["talks"] < n["talks_total"] or n["memories"] < n["memories_total"]
    note = f'<p class="hint">{esc(label(lang, "graph_shown").format(**n))}</p>' if bounded else ""
    body = (
        f'<p>{esc(label(lang, "graph_help"))}</p>{note}<svg id="graph" class="graph" role="img"'
        f' aria-label="{esc(label(lang, "graph"))}"></svg><p id="graph-label" class="hint"></p>'
        f"{data_script('graph-data', d)}"
    )
    return layout(lang, label(lang, "graph"), body, "graph")


def diary(lang: str, d: Mapping[str, Any]) -> str:
    if d["total"] == 0:
        body = f'<p class="empty">{esc(label(lang, "diary_none"))}</p>'
    else:
        body = "".join(
            f'<article class="diary"><h3>{esc(m.get("day") or (m["created_at"] or "")[:10])}</h3>'
            f'<p class="text">{esc(m["text"])}</p></article>'
            for m in d["items"]
        )
        body += pager(lang, "/diary", d, {})
    return layout(lang, label(lang, "diary"), body, "diary")


def _doc(lang: str, doc: Mapping[str, Any] | None, none_key: str, cls: str) -> str:
    if doc is None:
        return f'<p class="empty">{esc(label(lang, none_key))}</p>'
    problem = f'<p class="error">{esc(doc["problem"])}</p>' if doc.get("problem") else ""
    return f'{problem}<pre class="text {cls}">{esc(doc["text"])}</pre>'


def _versions(lang: str, versions: Sequence[Mapping[str, Any]], cls: str) -> str:
    if not versions:
        return f'<p class="empty">{esc(label(lang, "history_none"))}</p>'
    return f'<ol class="history {cls}">' + "".join(
        f'<li><details><summary>{esc(label(lang, "replaced_at"))} '
        f'{esc((v["replaced_at"] or v["file"]).replace("T", " ")[:19])}</summary>'
        + (f'<p class="error">{esc(v["problem"])}</p>' if v.get("problem") else "")
        + f'<pre class="text">{esc(v["text"])}</pre></details></li>'
        for v in versions
    ) + "</ol>"


def identity(lang: str, d: Mapping[str, Any]) -> str:
    if d["proposals_problem"]:
        proposals = f'<p class="error">{esc(d["proposals_problem"])}</p>'
    elif d["proposals"]:
        rows = [
            [f"#{esc(p['id'])}", f'<span class="text">{esc(p["change"])}</span>',
             f'<span class="text">{esc(p["reason"])}</span>', esc(p["place"]),
             esc(str(p["at"]).replace("T", " ")[:16])]
            for p in d["proposals"]
        ]
        head = ["#", *(label(lang, k) for k in ("change", "reason", "place", "proposed"))]
        proposals = table([esc(h) for h in head], rows, "proposals")
    else:
        proposals = f'<p class="empty">{esc(label(lang, "proposals_none"))}</p>'
    body = (
        f"<h2>{esc(label(lang, 'self_image'))}</h2>"
        f"{_doc(lang, d['self_image'], 'self_image_none', 'self-image')}"
        f"<h3>{esc(label(lang, 'image_history'))}</h3>{_versions(lang, d['history'], 'image-history')}"
        f"<h2>{esc(label(lang, 'proposals'))}</h2>{proposals}"
        f"<h2>{esc(label(lang, 'identity_note'))}</h2>{_doc(lang, d['core'], 'identity_none', 'core')}"
        f"<h3>{esc(label(lang, 'core_history'))}</h3>{_versions(lang, d['core_history'], 'core-history')}"
    )
    return layout(lang, label(lang, "identity"), body, "identity")


def error(lang: str, status: int, message: str) -> str:
    title = label(lang, "not_found") if status == 404 else label(lang, "error")
    return layout(lang, f"{status} {title}", f'<p class="error">{esc(message)}</p>')
