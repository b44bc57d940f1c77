"""The identity page: the core identity, the self-image with its earlier versions, open proposals."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .i18n import label
from .markup import esc, layout, stamp, table


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
        f'{stamp(v["replaced_at"], seconds=True) if v["replaced_at"] else esc(v["file"])}</summary>'
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
             stamp(p["at"])]
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


