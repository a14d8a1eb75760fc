"""The delivery API (X-Api-Key delivery keys, read-only): thin handlers.

Every answer goes through :func:`_serve`: the in-process cache (cache.py),
a strong ETag with 304 on If-None-Match, ``Cache-Control: private`` and
``Vary`` on the credential headers, CORS for DELIVERY_ORIGINS only.
"""

from __future__ import annotations

from aiohttp import web

from common.openapi import Schema, array, obj, operation, string
from content.auth.credentials import (
    AGENT_KEY_PREFIX,
    DELIVERY_KEY_PREFIX,
    SESSION_COOKIE,
    bearer_token,
    wrong_credential,
)
from content.context import context
from content.delivery import service
from content.delivery.cache import Answer, DeliveryCache
from content.delivery.expand import INCLUDES
from content.design import service as design_service
from content.design.routes import DELIVERED, DESIGN
from content.entries.store import SORTS
from content.errors import Forbidden, Unauthorized
from content.http import paging
from content.keys.store import DeliveryKey
from content.openapi import PAGE, PAGING

routes = web.RouteTableDef()

# One per process, shared by the apps of one ContentService (content/service.py).
CACHE = web.AppKey("delivery_cache", DeliveryCache)
VARY = "X-Api-Key, Authorization, Origin"
_CACHE_CONTROL = "private, max-age=0, must-revalidate"

_INCLUDE = string(description=f"comma list of {', '.join(INCLUDES)}")
_LOCALE = string(description="a locale (en, en-GB); without it the default locale's entry")
LIST_QUERY: dict[str, Schema] = {
    **PAGING,
    "term": string(description="a term slug, or taxonomy:slug"),
    "locale": string(),
    "sort": string(pattern=f"^-?({'|'.join(SORTS)})$", description="default -publishedAt"),
    "include": _INCLUDE,
}
ONE_QUERY: dict[str, Schema] = {"locale": _LOCALE, "include": _INCLUDE}
ENTRY = obj(
    {
        "id": string(),
        "type": string(),
        "slug": string(),
        "title": string(),
        "locale": string(),
        "data": {"type": "object"},
    },
    required=["id", "type", "slug", "title", "locale", "data"],
)


async def delivery_key(request: web.Request) -> DeliveryKey:
    """The delivery key of the request; sessions and agent keys are refused here."""
    token = request.headers.get("X-Api-Key")
    if token is None:
        bearer = bearer_token(request) if "Authorization" in request.headers else None
        if bearer is not None and not bearer.startswith(DELIVERY_KEY_PREFIX):
            kind = "an agent key" if bearer.startswith(AGENT_KEY_PREFIX) else "a session"
            raise wrong_credential(
                f"{kind} cannot read the delivery API; send a delivery key as X-Api-Key"
            )
        if bearer is None and request.cookies.get(SESSION_COOKIE):
            raise Unauthorized("the delivery API takes a delivery key as X-Api-Key")
        token = bearer
    if not token:
        raise Unauthorized("send a delivery key as X-Api-Key")
    if token.startswith(AGENT_KEY_PREFIX):
        raise wrong_credential("an agent key cannot read the delivery API; use a delivery key")
    if not token.startswith(DELIVERY_KEY_PREFIX):
        raise Unauthorized("unknown delivery key", "KEY_INVALID")
    return await service.read_key(context(request), request.app[CACHE], token)


def _allowed_origin(request: web.Request) -> str | None:
    """The request's Origin when DELIVERY_ORIGINS lets browsers there call delivery."""
    origin = request.headers.get("Origin")
    allowed = context(request).config.delivery_origins
    return origin if origin and ("*" in allowed or origin in allowed) else None


def cors_headers(request: web.Request) -> dict[str, str]:
    """What a browser at an allowed origin needs to read a delivery-key answer."""
    origin = _allowed_origin(request)
    return {"Access-Control-Allow-Origin": origin} if origin else {}


def _headers(request: web.Request, cache_control: str = _CACHE_CONTROL) -> dict[str, str]:
    headers = {"Cache-Control": cache_control, "Vary": VARY, **cors_headers(request)}
    if "Access-Control-Allow-Origin" in headers:
        headers["Access-Control-Expose-Headers"] = "ETag"
    return headers


def _matches(request: web.Request, etag: str) -> bool:
    """If-None-Match names this ETag (or *); weak forms compare equal (RFC 9110 13.1.2)."""
    header = request.headers.get("If-None-Match")
    if not header:
        return False
    tags = {t.strip().removeprefix("W/") for t in header.split(",")}
    return "*" in tags or etag in tags


def _answer(
    request: web.Request, answer: Answer, cache_control: str = _CACHE_CONTROL
) -> web.Response:
    headers = {**_headers(request, cache_control), "ETag": answer.etag}
    if _matches(request, answer.etag):
        return web.Response(status=304, headers=headers)
    return web.Response(
        body=answer.body, status=200, content_type="application/json", headers=headers
    )


async def _serve(request: web.Request, question: service.Question) -> web.Response:
    """The cached answer for this key's scopes and this exact request, or a fresh one."""
    key = await delivery_key(request)
    cache_key = (
        tuple(sorted(key.type_scopes)),
        request.match_info.route.resource.canonical if request.match_info.route.resource else "",
        request.path,
        tuple(sorted(request.query.items())),
    )
    answer = await service.answer(context(request), request.app[CACHE], cache_key, key, question)
    return _answer(request, answer)


@routes.route("OPTIONS", "/content")
@routes.route("OPTIONS", r"/content/{tail:[\s\S]*}")
@routes.route("OPTIONS", r"/site/{tail:[\s\S]*}")
@routes.route("OPTIONS", r"/preview/{tail:[\s\S]*}")
@routes.route("OPTIONS", "/realtime/delivery/ticket")
@operation(status=204, errors=(403,))
async def preflight(request: web.Request) -> web.Response:
    """CORS preflight: X-Api-Key is not a simple header, so browsers ask first."""
    origin = _allowed_origin(request)
    if origin is None:
        raise Forbidden("this origin is not in DELIVERY_ORIGINS", "ORIGIN_NOT_ALLOWED")
    return web.Response(
        status=204,
        headers={
            "Access-Control-Allow-Origin": origin,
            # POST: a website's socket ticket (/realtime/delivery/ticket).
            "Access-Control-Allow-Methods": "GET, HEAD, POST, OPTIONS",
            "Access-Control-Allow-Headers": "X-Api-Key, Authorization, If-None-Match",
            "Access-Control-Max-Age": "600",
            "Vary": "Origin",
        },
    )


@routes.get("/content")
@operation(auth="delivery", response=obj({"data": array({"type": "object"})}))
async def list_types(request: web.Request) -> web.Response:
    """The types this key may read, with their field shapes."""
    return await _serve(request, lambda conn, key: service.types(conn, key.type_scopes))


def _list_query(request: web.Request) -> service.ListQuery:
    query = request.query
    return service.ListQuery(
        paging=paging(request),
        term=query.get("term") or None,
        locale=query.get("locale") or None,
        sort=service.parse_sort(query.get("sort")),
        include=service.parse_include(query.get("include")),
    )


@routes.get("/content/{type}")
@operation(auth="delivery", query=LIST_QUERY, response=PAGE)
async def list_entries(request: web.Request) -> web.Response:
    """Published entries of one type, paged; meta carries total, page, limit."""
    query = _list_query(request)
    name = request.match_info["type"]
    return await _serve(
        request, lambda conn, key: service.entries(conn, key.type_scopes, name, query)
    )


@routes.get("/content/{type}/single")
@operation(auth="delivery", query={"include": _INCLUDE}, response=ENTRY)
async def single_entry(request: web.Request) -> web.Response:
    """The entry of a single-kind type."""
    include = service.parse_include(request.query.get("include"))
    name = request.match_info["type"]
    return await _serve(
        request, lambda conn, key: service.single(conn, key.type_scopes, name, include)
    )


@routes.get("/content/{type}/{slug}")
@operation(auth="delivery", query=ONE_QUERY, response=ENTRY)
async def get_entry(request: web.Request) -> web.Response:
    """One published entry by slug."""
    include = service.parse_include(request.query.get("include"))
    locale = request.query.get("locale") or None
    name, slug = request.match_info["type"], request.match_info["slug"]
    return await _serve(
        request,
        lambda conn, key: service.entry(conn, key.type_scopes, name, slug, locale, include),
    )


@routes.get("/site/settings")
@operation(auth="delivery")
async def site_settings(request: web.Request) -> web.Response:
    """Site settings with media ids resolved to URLs."""
    return await _serve(request, lambda conn, key: service.settings(conn))


@routes.get("/site/menus/{name}")
@operation(auth="delivery")
async def site_menu(request: web.Request) -> web.Response:
    """One menu tree, entry items resolved to URLs for this key."""
    name = request.match_info["name"]
    return await _serve(request, lambda conn, key: service.menu(conn, key.type_scopes, name))


@routes.get("/preview/{token}")
@operation(auth="delivery", response=ENTRY)
async def preview(request: web.Request) -> web.Response:
    """One entry at any status until the preview token expires (never cached)."""
    key = await delivery_key(request)
    body = await service.preview(context(request), key.type_scopes, request.match_info["token"])
    return _answer(request, service.encode(body), "private, no-store")


@routes.get("/site/design")
@operation(auth="delivery", response=DELIVERED)
async def site_design(request: web.Request) -> web.Response:
    """The design surfaces' effective values (overrides over defaults), and them as CSS."""
    catalogue = request.app[DESIGN]
    return await _serve(request, lambda conn, key: design_service.delivered(conn, catalogue))
