"""The pieces every page is made of. Every value from the store goes through :func:`esc`: text is
shown as text. Times are shown as read ("2026-12-02 09:45"), in the bot's zone, which the foot of
every page names."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any
from urllib.parse import urlencode

from ..memory.text.display import visible
from .data import zone_name
from .i18n import label, value

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


def stamp(iso: str | None, seconds: bool = False) -> str:
    """An ISO time as a person reads it, to the minute (or second), its zone left to the page's foot (a
    stamp in a table; "9 days ago" is ``memory.wording.when``)."""
    return esc((iso or "").replace("T", " ")[: 19 if seconds else 16])


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
        f"<main><h1>{esc(title)}</h1>{body}</main>"
        f'<footer class="hint">{esc(label(lang, "times_in").format(zone=zone_name()))}</footer>'
        f'<script src="/static/app.js"></script></body></html>'
    )


def table(head: Sequence[str], rows: Sequence[Sequence[str]], cls: str = "") -> str:
    """A table that scrolls sideways inside the page when it is wider (a phone); cells are HTML already."""
    th = "".join(f"<th>{h}</th>" for h in head)
    trs = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return (f'<div class="scroll"><table class="{cls}"><thead><tr>{th}</tr></thead>'
            f"<tbody>{trs}</tbody></table></div>")


def pager(lang: str, path: str, page: Mapping[str, Any], params: Mapping[str, Any],
          last: str = "last") -> str:
    """First · Previous · Page p of n · Next · Last (``last``: the label of the last page)."""
    p, n = page["page"], page["pages"]

    def to(number: int, key: str, rel: str = "") -> str:
        rel_attr = f' rel="{rel}"' if rel else ""
        return f'<a{rel_attr} href="{link(path, **params, page=number)}">{esc(label(lang, key))}</a>'

    parts = [esc(label(lang, "page_of").format(page=p, pages=n, total=page["total"]))]
    if p > 1:
        parts[:0] = [to(1, "first"), to(p - 1, "prev", "prev")]
    if p < n:
        parts += [to(p + 1, "next", "next"), to(n, last)]
    return '<p class="pager">' + " · ".join(parts) + "</p>"


def who(subjects: Sequence[Mapping[str, str]]) -> str:
    return ", ".join(
        f'<a href="{link("/memories", person=s["id"])}">{esc(s["name"] or s["id"])}</a>' for s in subjects
    )


def scope(lang: str, s: str, title: str = "") -> str:
    """A scope in words; a place's scope links to the place, named by its ``title`` where it has one."""
    if s.startswith("space:"):
        return place_link(s[6:], title)
    return esc(value(lang, s))


def place_link(place: str, title: str = "") -> str:
    """A link to a place: its title with its id beside it, or its id."""
    named = f'{esc(title)} <small class="id">{esc(place)}</small>' if title else esc(place)
    return f'<a href="{link("/place", space=place)}">{named}</a>'


def empty(lang: str, key: str) -> str:
    return f'<p class="empty">{esc(label(lang, key))}</p>'


def memory_rows(lang: str, items: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    return [
        [
            f'<a href="/memories/{m["id"]}">{esc(m["key"])}</a>',
            f'<span class="text">{esc(m["text"])}</span>',
            esc(value(lang, m["kind"])),
            scope(lang, m["scope"], m.get("scope_title", "")),
            esc(value(lang, m["status"])),
            who(m["subjects"]),
            esc(m["importance"]),
            stamp(m["created_at"])[:10],
        ]
        for m in items
    ]


def memory_table(lang: str, items: Sequence[Mapping[str, Any]]) -> str:
    if not items:
        return empty(lang, "none")
    keys = ("text", "kind", "scope", "status", "subjects", "importance", "created")
    head = [esc(label(lang, "id")), *(esc(label(lang, k)) for k in keys)]
    return table(head, memory_rows(lang, items), "memories")


def episode_line(e: Mapping[str, Any], mark: bool = False) -> str:
    name = esc(e["name"] or e["actor"] or "—")
    if e["actor"]:  # the speaker leads to what is remembered about them
        name = f'<a href="{link("/memories", person=e["actor"])}">{name}</a>'
    return (
        f'<li class="ep{" mark" if mark else ""}" id="{esc(e["key"])}"><time>{stamp(e["time"])}'
        f'</time> <b>{name}</b> <span class="text">{esc(e["text"])}</span>'
        f" <small>{esc(e['key'])}</small></li>"
    )


def shown_of(lang: str, shown: int, total: int) -> str:
    """A visible note under a table that shows only some of its rows (nothing when it shows all)."""
    if shown >= total:
        return ""
    return f'<p class="hint">{esc(label(lang, "shown_of").format(shown=shown, total=total))}</p>'
