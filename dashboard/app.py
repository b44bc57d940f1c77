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

from aiohttp import web

from ..memory import Engram
from ..memory.wording import Said
from . import data, html, pages
from .i18n import pick_lang
from .params import BadParam
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


def static_files() -> dict[str, bytes]:
    """The pages' style and script (``static/``), by name: served here and handed to AstrBot's WebUI."""
    return {name: (resources.files(__package__) / "static" / name).read_bytes() for name in STATIC_TYPES}


def make_app(engram: EngramSource, settings: DashboardSettings) -> web.Application:
    """The dashboard over ``engram`` (or an awaitable getter of it, for a memory opened later)."""
    if len(settings.token) < MIN_TOKEN:
        raise ValueError(f"the dashboard needs a token of at least {MIN_TOKEN} characters")
    app = web.Application(middlewares=[_headers, _auth, _errors])
    app[SETTINGS] = settings
    app[SOURCE] = engram
    app[STATIC] = static_files()
    routes = {
        "/": _page("overview"),
        "/memories": _page("memories"),
        "/memories/{id}": _page("memory"),
        "/place": _page("place"),
        "/recall": _page("recall"),
        "/graph": _page("graph"),
        "/diary": _page("diary"),
        "/identity": _page("identity"),
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


# ---- handlers ------------------------------------------------------------------------------------
def _page(name: str) -> Handler:
    """The handler of page ``name``: the page itself is made in ``pages`` (the WebUI's too)."""

    async def handler(request: web.Request) -> web.Response:
        a = await pages.answer(name, request.query, _lang(request), await _engram(request),
                               request.app[SETTINGS], item=request.match_info.get("id", ""),
                               api=_is_api(request))
        if _is_api(request):
            return web.Response(text=json.dumps(a.data, ensure_ascii=False), status=a.status,
                                content_type="application/json")
        return web.Response(text=a.html, status=a.status, content_type="text/html")

    return handler


async def static(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    if name not in STATIC_TYPES:  # a fixed list: no path from the request ever reaches the file system
        raise web.HTTPNotFound()
    return web.Response(body=request.app[STATIC][name], content_type=STATIC_TYPES[name])
