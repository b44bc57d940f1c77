"""Recall explained: what one audience would recall for a question, each hit's features in words,
and exactly the block the plugin would inject."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .i18n import feature, label
from .markup import empty, esc, layout, table


def recall(
    lang: str, d: Mapping[str, Any] | None, form: Mapping[str, str], places: Sequence[str], error: str = ""
) -> str:
    if not places:  # no place heard yet: nothing to recall for
        return layout(lang, label(lang, "recall"), empty(lang, "no_places"), "recall")
    chosen = form.get("space", "")
    opts = "".join(
        f'<option value="{esc(p)}"{" selected" if p == chosen else ""}>{esc(p)}</option>' for p in places
    )
    owner = " checked" if form.get("owner") in ("1", "on", "true") else ""
    body = (
        f'<form class="filters" method="get" action="/recall"><input name="q" size="50" required'
        f' placeholder="{esc(label(lang, "query"))}" value="{esc(form.get("q", ""))}">'
        f'<label>{esc(label(lang, "audience"))} <select name="space">{opts}</select></label>'
        f'<label>{esc(label(lang, "written_by"))} <input name="person" size="16"'
        f' placeholder="{esc(label(lang, "person_id"))}" value="{esc(form.get("person", ""))}"></label>'
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
            head = ["#", esc(label(lang, "id")), esc(label(lang, "text")), esc(label(lang, "where")),
                    esc(label(lang, "score")), *(_feature_head(lang, n) for n in names)]
            body += table(head, rows, "hits") + _legend(lang, names)
        else:
            body += empty(lang, "no_hits")
        body += (
            f'<h2>{esc(label(lang, "block"))} — <span id="tokens">{d["tokens"]}</span> / {d["budget"]}'
            f' {esc(label(lang, "tokens"))}</h2><pre class="block">{esc(d["block"])}</pre>'
        )
        if d.get("left_out"):
            note = label(lang, "no_abilities_line").format(budget=d["budget"], k=d["recall_k"])
            body += f'<p class="hint" id="left-out">{esc(note)}</p>'
    return layout(lang, label(lang, "recall"), body, "recall")


def _feature_head(lang: str, name: str) -> str:
    words, means = feature(lang, name)
    return f'<span title="{esc(means)}">{esc(words)}</span>'


def _legend(lang: str, names: Sequence[str]) -> str:
    """What each feature column measures, in words, with the key the JSON and the ranker use."""
    items = "".join(
        f"<dt>{esc(feature(lang, n)[0])} <code>{esc(n)}</code></dt><dd>{esc(feature(lang, n)[1])}</dd>"
        for n in names
    )
    summary = f"<summary>{esc(label(lang, 'legend'))}</summary>"
    return f'<details class="legend">{summary}<dl>{items}</dl></details>'
