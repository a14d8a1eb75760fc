"""/ext/assistant: the visitor bubble's routes (a delivery key, or an allowed origin)."""

from __future__ import annotations

from aiohttp import web

from common.client_ip import client_ip
from common.openapi import array, obj, operation, string
from common.web import json_response
from content.assistant.bubble import service
from content.context import context
from content.delivery.routes import delivery_key
from content.http import read_body

routes = web.RouteTableDef()

QUESTION = obj({"question": string(max_length=service.MAX_QUESTION)}, required=["question"])
ANSWER = obj(
    {"answer": string(), "sources": array({"type": "object"})}, required=["answer", "sources"]
)


def _cors(origin: str) -> dict[str, str]:
    return {"Access-Control-Allow-Origin": origin, "Vary": "Origin"}


@routes.post("/ext/assistant/ask")
@operation(auth="delivery", body=QUESTION, response=ANSWER, errors=[409, 424, 429])
async def ask(request: web.Request) -> web.Response:
    """An answer and its sources from published content in the key's type scopes."""
    key = await delivery_key(request)
    body = await read_body(request)
    return json_response(await service.ask(context(request), key.type_scopes, body))


@routes.post("/ext/assistant/public-ask")
@operation(body=QUESTION, response=ANSWER, errors=[403, 409, 424, 429])
async def public_ask(request: web.Request) -> web.Response:
    """The same answer straight from a browser on an allowed origin (no key)."""
    ctx = context(request)
    origin = request.headers.get("Origin")
    body = await read_body(request)
    ip = client_ip(request, ctx.runtime.settings.trusted_proxies)
    found = await service.public_ask(ctx, origin, ip, body)
    return json_response(found, headers=_cors(origin or ""))


@routes.options("/ext/assistant/public-ask")
@operation(status=204)
async def public_ask_preflight(request: web.Request) -> web.Response:
    """CORS preflight: allowed origins only."""
    origin = request.headers.get("Origin")
    if not await service.allowed_origin(context(request), origin):
        return web.Response(status=204)
    return web.Response(
        status=204,
        headers={
            **_cors(origin or ""),
            "Access-Control-Allow-Methods": "POST",
            "Access-Control-Allow-Headers": "Content-Type",
            "Access-Control-Max-Age": "600",
        },
    )


@routes.get("/ext/assistant/widget.js")
@operation(response=string(), response_media="text/javascript")
async def widget(request: web.Request) -> web.Response:
    """The bubble's script; 404 until an admin enables the bubble."""
    body = await service.widget(context(request))
    return web.Response(
        body=body,
        content_type="text/javascript",
        charset="utf-8",
        headers={"Cache-Control": "public, max-age=300", "X-Content-Type-Options": "nosniff"},
    )
