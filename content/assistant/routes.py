"""/api/assistant: the provider, the budget, the bubble's settings, the field assistant.

Connecting, testing or removing the provider needs settings.manage and
spending (ai.spend): no agent key holds ai.spend, whatever is ticked (spec,
Authentication 5), so a key is refused KEY_FORBIDDEN on each of them, as on
every route that calls the model.
"""

from __future__ import annotations

from aiohttp import web

from common.openapi import array, boolean, integer, obj, operation, string
from common.web import json_response
from content.assistant import budget, field, service
from content.assistant.bubble import service as bubble
from content.assistant.sse import MEDIA, send
from content.auth.credentials import admin_route
from content.auth.principal import Principal
from content.context import context
from content.http import read_body

routes = web.RouteTableDef()

_ANY = {"type": "object"}
PROVIDER = obj(
    {"connected": boolean(), "provider": {"type": ["object", "null"]}, "kinds": array(_ANY)},
    required=["connected", "provider", "kinds"],
)
CONNECT = obj(
    {
        "kind": string(enum=["openai", "anthropic", "ollama", "ollama-cloud"]),
        "model": string(max_length=200),
        "baseUrl": string(nullable=True, max_length=500),
        "apiKey": string(nullable=True, max_length=4000),
    },
    required=["kind", "model"],
)
TEST = obj(
    {"ok": boolean(), "problem": string(nullable=True), "message": string()},
    required=["ok", "problem", "message"],
)
LIMIT = {"type": ["integer", "null"], "minimum": 0, "maximum": budget.MAX_LIMIT}
BUDGET = obj(
    {"month": string(), "limits": _ANY, "site": _ANY, "people": array(_ANY)},
    required=["month", "limits", "site", "people"],
    additional=True,
)
BUBBLE = obj(
    {
        "enabled": boolean(),
        "origins": array(string(max_length=200), max_items=50),
        "types": array(string(min_length=1, max_length=100), max_items=200),
        "ratePerMinute": integer(minimum=1, maximum=600),
    }
)
STREAM = string()


@routes.get("/api/assistant")
@admin_route("content.read")
@operation(
    auth="admin",
    response=obj(
        {"connected": boolean(), "kind": string(nullable=True), "usage": _ANY}, additional=True
    ),
)
async def status(request: web.Request, principal: Principal) -> web.Response:
    """Whether the assistant can answer, and the person's use this month."""
    ctx = context(request)
    provider = (await service.get(ctx))["provider"]
    return json_response(
        {
            "connected": provider is not None,
            "kind": provider["kind"] if provider else None,
            "model": provider["model"] if provider else None,
            "canSpend": principal.can(budget.SPEND),
            "usage": await budget.mine(ctx, principal.user.id),
        }
    )


@routes.get("/api/assistant/provider")
@admin_route("settings.manage")
@operation(auth="admin", response=PROVIDER)
async def get_provider(request: web.Request, principal: Principal) -> web.Response:
    """The connected provider (a key hint only, never the key) and the kinds offered."""
    return json_response(await service.get(context(request)))


@routes.put("/api/assistant/provider")
@admin_route("settings.manage", budget.SPEND)
@operation(auth="admin", body=CONNECT, response=PROVIDER)
async def connect_provider(request: web.Request, principal: Principal) -> web.Response:
    """Connect the one provider (replacing any): the key is sealed, never shown again."""
    body = await read_body(request)
    return json_response(await service.connect(context(request), principal, body))


@routes.delete("/api/assistant/provider")
@admin_route("settings.manage", budget.SPEND)
@operation(auth="admin", status=204, errors=[409])
async def disconnect_provider(request: web.Request, principal: Principal) -> web.Response:
    await service.disconnect(context(request), principal)
    return web.Response(status=204)


@routes.post("/api/assistant/provider/test")
@admin_route("settings.manage", budget.SPEND)
@operation(auth="admin", response=TEST, errors=[409, 424, 429])
async def test_provider(request: web.Request, principal: Principal) -> web.Response:
    """Streamed tool calling with a synthetic marker; reads and changes no content."""
    return json_response(await service.check_connection(context(request), principal))


@routes.post("/api/assistant/provider/oauth")
@admin_route("settings.manage", budget.SPEND)
@operation(
    auth="admin",
    body=obj(
        {
            "kind": string(enum=["openai"]),
            "model": string(max_length=200),
            "baseUrl": string(nullable=True, max_length=500),
        },
        required=["kind", "model"],
    ),
    response=obj({"url": string()}, required=["url"]),
)
async def start_oauth(request: web.Request, principal: Principal) -> web.Response:
    """The provider's consent address (PKCE), when AI_OAUTH_<PROVIDER>_CLIENT_ID is set."""
    body = await read_body(request)
    return json_response(await service.oauth_start(context(request), principal, body))


@routes.get(service.CALLBACK_PATH)
@operation(
    status=303,
    query={
        "code": string(),
        "state": string(),
        "error": string(),
        "error_description": string(),
    },
)
async def oauth_callback(request: web.Request) -> web.Response:
    """Return leg of the provider's consent (top-level navigation); on to the admin."""
    query = {k: v for k, v in request.query.items() if isinstance(v, str)}
    location = await service.oauth_callback(context(request), query)
    raise web.HTTPSeeOther(
        location, headers={"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"}
    )


@routes.get("/api/assistant/budget")
@admin_route("settings.manage")
@operation(auth="admin", response=BUDGET)
async def get_budget(request: web.Request, principal: Principal) -> web.Response:
    """Monthly token limits and this month's use, for the site and per person."""
    return json_response(await budget.overview(context(request)))


@routes.put("/api/assistant/budget")
@admin_route("settings.manage")
@operation(
    auth="admin",
    body=obj({"personMonthly": LIMIT, "siteMonthly": LIMIT}),
    response=BUDGET,
)
async def set_budget(request: web.Request, principal: Principal) -> web.Response:
    body = await read_body(request)
    return json_response(await budget.set_limits(context(request), principal, body))


@routes.get("/api/assistant/bubble")
@admin_route("settings.manage")
@operation(auth="admin", response=BUBBLE)
async def get_bubble(request: web.Request, principal: Principal) -> web.Response:
    return json_response(await bubble.get_settings(context(request)))


@routes.put("/api/assistant/bubble")
@admin_route("settings.manage")
@operation(auth="admin", body=BUBBLE, response=BUBBLE)
async def set_bubble(request: web.Request, principal: Principal) -> web.Response:
    """Enable the bubble, its allowed origins, the types public-ask reads, its per-IP rate."""
    body = await read_body(request)
    return json_response(await bubble.put_settings(context(request), principal, body))


@routes.post("/api/assistant/field")
@admin_route("content.write", budget.SPEND)
@operation(
    auth="admin",
    body=obj(
        {
            "action": string(enum=list(field.ACTIONS)),
            "value": string(max_length=field.MAX_VALUE),
            "field": string(max_length=200),
            "context": string(max_length=4000),
            "language": string(max_length=60),
        },
        required=["action"],
    ),
    response=STREAM,
    response_media=MEDIA,
    errors=[409, 424, 429],
)
async def field_assistant(request: web.Request, principal: Principal) -> web.StreamResponse:
    """A suggestion for one field, streamed (text, done); nothing is saved."""
    body = await read_body(request)
    events = await field.start(context(request), principal, body)
    return await send(request, events)
