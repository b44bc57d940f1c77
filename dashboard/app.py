"""The aiohttp application: GET-only routes, the token check, pages and their JSON endpoints.

Every route needs the token: ``Authorization: Bearer <token>``, the cookie it sets, or ``?token=``
once (answered with the cookie and a redirect to the same page without it). No route writes.
"""

from __future__ import annotations

import hmac
import json
import logging
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any

from aiohttp import web

from ..memory import BrowseReads, Engram
from ..memory.wording import Said
from . import data, html
from .i18n import pick_lang
from .params import BadParam, flag, memory_filter, memory_id, paging, text
from .server import MIN_TOKEN
from .settings import DashboardSettings, EngramSource

log = logging.getLogger("engram.dashboard")

COOKIE = "engram_dashboard"
SETTINGS = web.AppKey("settings", DashboardSettings)
SOURCE = web.AppKey("source", object)
STATIC = web.AppKey("static", dict)
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self';"
    " img-src 'self' data:;"
    " connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
    "Server": "Engram",  # not aiohttp's name and version
}
STATIC_TYPES = {"app.js": "text/javascript", "style.css": "text/css"}
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def make_app(engram: EngramSource, settings: DashboardSettings) -> web.Application:
    """The dashboard over ``engram`` (or an awaitable getter of it, for a memory opened later)."""
    if len(settings.token) < MIN_TOKEN:
        raise ValueError(f"the dashboard needs a token of at least {MIN_TOKEN} characters")
    app = web.Application(middlewares=[_headers, _auth, _errors])
    app[SETTINGS] = settings
    app[SOURCE] = engram
    app[STATIC] = {
        name: (resources.files(__package__) / "static" / name).read_bytes() for name in STATIC_TYPES
    }
    routes = {
        "/": overview,
        "/memories": memories,
        "/memories/{id}": memory,
        "/place": place,
        "/recall": recall,
        "/graph": graph,
        "/diary": diary,
        "/identity": identity,
        "/static/{name}": static,
    }
    for path, handler in routes.items():
        app.router.add_get(path, handler, allow_head=False)
        if not path.startswith("/static"):
            app.router.add_get("/api" + (path if path != "/" else "/overview"), handler, allow_head=False)
    return app


# ---- middlewares ---------------------------------------------------------------------------------
@web.middleware
async def _headers(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        response = await handler(request)
    except web.HTTPException as e:
        e.headers.update(HEADERS)
        raise
    response.headers.update(HEADERS)
    return response


def _token_ok(given: str | None, token: str) -> bool:
    # surrogatepass: a header's bytes that are not UTF-8 arrive as surrogates; they are a wrong token
    return bool(given) and hmac.compare_digest(
        given.encode("utf-8", "surrogatepass"), token.encode()  # type: ignore[union-attr]
    )


@web.middleware
async def _auth(request: web.Request, handler: Handler) -> web.StreamResponse:
    token = request.app[SETTINGS].token
    if "token" in request.query:
        if not _token_ok(request.query["token"], token):
            raise web.HTTPUnauthorized(text="401: Unauthorized")
        rest = request.rel_url.with_query([(k, v) for k, v in request.query.items() if k != "token"])
        response = web.HTTPSeeOther(location="/" + str(rest).lstrip("/"))  # "//host" would leave
        response.set_cookie(COOKIE, token, httponly=True, samesite="Strict", path="/")
        raise response
    auth = request.headers.get("Authorization", "")
    bearer = auth[7:].strip() if auth[:7].lower() == "bearer " else None
    if not (_token_ok(bearer, token) or _token_ok(request.cookies.get(COOKIE), token)):
        raise web.HTTPUnauthorized(text="401: Unauthorized")
    return await handler(request)


@web.middleware
async def _errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    data.ZONE.set(request.app[SETTINGS].tz)  # this request's task: its times in the bot's zone
    try:
        return await handler(request)
    except BadParam as e:
        return _error(request, 400, e)
    except data.NotFound as e:
        return _error(request, 404, e)
    except web.HTTPNotFound:  # an address no route answers: a page in the browser's language too
        return _error(request, 404, data.NotFound("no_page", path=request.path[:80]))


def _error(request: web.Request, status: int, e: Said) -> web.Response:
    """The error as JSON (in English, for scripts) or as a page in the browser's language."""
    if _is_api(request):
        return web.json_response({"error": str(e)}, status=status)
    lang = _lang(request)
    return web.Response(text=html.error(lang, status, e.text(lang)), status=status, content_type="text/html")


# ---- helpers -------------------------------------------------------------------------------------
def _is_api(request: web.Request) -> bool:
    return request.path.startswith("/api/")


def _lang(request: web.Request) -> str:
    return pick_lang(request.headers.get("Accept-Language", ""))


async def _engram(request: web.Request) -> Engram:
    source = request.app[SOURCE]
    return source if isinstance(source, Engram) else await source()  # type: ignore[operator,no-any-return]


async def _open(request: web.Request) -> tuple[Engram, BrowseReads]:
    engram = await _engram(request)
    return engram, await engram.browser()


def _answer(request: web.Request, payload: Any, page: Callable[[], str]) -> web.Response:
    if _is_api(request):
        return web.Response(text=json.dumps(payload, ensure_ascii=False), content_type="application/json")
    return web.Response(text=page(), content_type="text/html")


# ---- handlers ------------------------------------------------------------------------------------
async def overview(request: web.Request) -> web.Response:
    engram, browser = await _open(request)
    d = await data.overview(engram, browser, request.app[SETTINGS])
    return _answer(request, d, lambda: html.overview(_lang(request), d))


async def memories(request: web.Request) -> web.Response:
    engram, browser = await _open(request)
    f, (page, size) = memory_filter(request.query), paging(request.query)
    d = await data.memories(engram, browser, f, page, size)
    shown = {
        k: request.query[k]
        for k in ("q", "kind", "status", "scope", "place", "person", "size")
        if request.query.get(k)
    }
    return _answer(request, d, lambda: html.memories(_lang(request), d, shown))


async def memory(request: web.Request) -> web.Response:
    mid = memory_id(request.match_info["id"])
    engram, browser = await _open(request)
    d = await data.memory(engram, browser, mid)
    return _answer(request, d, lambda: html.memory(_lang(request), d))


async def place(request: web.Request) -> web.Response:
    place, (page, size) = text(request.query, "space"), paging(request.query)
    engram, browser = await _open(request)
    latest = "page" not in request.query  # a timeline opens on its latest page
    d = await data.place(engram, browser, place, None if latest else page, size)
    return _answer(request, d, lambda: html.place(_lang(request), d))


async def recall(request: web.Request) -> web.Response:
    q, place = text(request.query, "q"), text(request.query, "space")
    owner = flag(request.query, "owner") if "owner" in request.query else None  # None: the host decides
    engram, browser = await _open(request)
    if not _is_api(request):
        places = sorted((await browser.keyed_places()).values())
        if not q:  # the empty form
            return _answer(request, None, lambda: html.recall(_lang(request), None, request.query, places))
        try:
            d = await data.recall(engram, browser, request.app[SETTINGS], q, place, owner)
        except BadParam as e:
            return web.Response(
                text=html.recall(_lang(request), None, request.query, places, e.text(_lang(request))),
                status=400,
                content_type="text/html",
            )
        return _answer(request, d, lambda: html.recall(_lang(request), d, request.query, places))
    d = await data.recall(engram, browser, request.app[SETTINGS], q, place, owner)
    return _answer(request, d, lambda: "")


async def graph(request: web.Request) -> web.Response:
    engram, browser = await _open(request)
    d = await data.graph(engram, browser)
    return _answer(request, d, lambda: html.graph(_lang(request), d))


async def diary(request: web.Request) -> web.Response:
    page, size = paging(request.query, 20)
    engram, browser = await _open(request)
    d = await data.diary(engram, browser, page, size, request.app[SETTINGS].data_dir)
    return _answer(request, d, lambda: html.diary(_lang(request), d))


async def identity(request: web.Request) -> web.Response:
    engram, _ = await _open(request)
    d = await data.identity(engram, request.app[SETTINGS])
    return _answer(request, d, lambda: html.identity(_lang(request), d))


async def static(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    if name not in STATIC_TYPES:  # a fixed list: no path from the request ever reaches the file system
        raise web.HTTPNotFound()
    return web.Response(body=request.app[STATIC][name], content_type=STATIC_TYPES[name])
