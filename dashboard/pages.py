"""Each page once, for every host: the standalone server (``app.py``, aiohttp, its own token) and
AstrBot's WebUI (``plugin/webui.py``, behind AstrBot's login) ask for a page by name with its query
parameters and the reader's language, and get its data (the JSON) and its HTML from here.

No host renders a page itself, so a page cannot differ between them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..memory import Engram
from ..memory.wording import Said
from . import data, html
from .params import BadParam, flag, memory_filter, memory_id, paging, text, whole
from .settings import DashboardSettings

# the pages, as their routes name them ("memory" takes an id)
PAGES = ("overview", "memories", "memory", "place", "recall", "graph", "diary", "identity")
SHOWN_FILTERS = ("q", "kind", "status", "scope", "place", "person", "size")


@dataclass(frozen=True)
class Answer:
    """One page: its status, its data (what the JSON endpoints return) and its HTML (made on demand:
    a JSON request never renders it)."""

    status: int
    data: Any
    render: Callable[[], str]
    message: str = ""  # an error, in the reader's language

    @property
    def html(self) -> str:
        return self.render()


def _error(lang: str, status: int, e: Said) -> Answer:
    """An error: its JSON says it in English (for scripts), its page in the reader's language."""
    message = e.text(lang)
    return Answer(status, {"error": str(e)}, lambda: html.error(lang, status, message), message)


async def answer(name: str, params: Mapping[str, str], lang: str, engram: Engram,
                 settings: DashboardSettings, *, item: str = "", api: bool = False) -> Answer:
    """The page ``name`` (``item``: the memory's id for "memory") in ``lang``; ``api``: only its data
    is wanted (recall explained then answers even an empty form with its error)."""
    data.ZONE.set(settings.tz)  # this task's times in the bot's zone
    try:
        return await _answer(name, params, lang, engram, settings, item, api)
    except BadParam as e:
        return _error(lang, 400, e)
    except data.NotFound as e:
        return _error(lang, 404, e)


async def _answer(name: str, q: Mapping[str, str], lang: str, engram: Engram, settings: DashboardSettings,
                  item: str, api: bool) -> Answer:
    if name not in PAGES:
        raise data.NotFound("no_page", path=name[:80])
    browser = await engram.browser()
    if name == "overview":
        d = await data.overview(engram, browser, settings)
        return Answer(200, d, lambda: html.overview(lang, d))
    if name == "memories":
        f, (page, size) = memory_filter(q), paging(q)
        d = await data.memories(engram, browser, f, page, size)
        shown = {k: q[k] for k in SHOWN_FILTERS if q.get(k)}
        return Answer(200, d, lambda: html.memories(lang, d, shown))
    if name == "memory":
        d = await data.memory(engram, browser, memory_id(item))
        return Answer(200, d, lambda: html.memory(lang, d))
    if name == "place":
        where, (page, size) = text(q, "space"), paging(q)
        latest = "page" not in q  # a timeline opens on its latest page
        d = await data.place(engram, browser, where, None if latest else page, size)
        return Answer(200, d, lambda: html.place(lang, d))
    if name == "recall":
        return await _recall(q, lang, engram, settings, api)
    if name == "graph":
        d = await data.graph(engram, browser, text(q, "space"), text(q, "person"),
                             whole(q, "n", data.GRAPH_PEOPLE))
        places = sorted((await browser.keyed_places()).values())
        return Answer(200, d, lambda: html.graph(lang, d, places))
    if name == "diary":
        page, size = paging(q, 20)
        d = await data.diary(engram, browser, page, size, settings.data_dir)
        return Answer(200, d, lambda: html.diary(lang, d))
    d = await data.identity(engram, settings)
    return Answer(200, d, lambda: html.identity(lang, d))


async def _recall(q: Mapping[str, str], lang: str, engram: Engram, settings: DashboardSettings,
                  api: bool) -> Answer:
    ask, where = text(q, "q"), text(q, "space")
    owner = flag(q, "owner") if "owner" in q else None  # None: the host decides
    person = text(q, "person")
    if api:
        d = await data.recall(engram, await engram.browser(), settings, ask, where, owner, person)
        return Answer(200, d, lambda: "")
    places = sorted((await (await engram.browser()).keyed_places()).values())
    form = dict(q)
    if not ask:  # the empty form
        return Answer(200, None, lambda: html.recall(lang, None, form, places))
    try:
        d = await data.recall(engram, await engram.browser(), settings, ask, where, owner, person)
    except BadParam as e:  # the form again, with what was wrong
        message = e.text(lang)
        return Answer(400, {"error": str(e)}, lambda: html.recall(lang, None, form, places, message), message)
    return Answer(200, d, lambda: html.recall(lang, d, form, places))
