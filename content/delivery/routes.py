"""The delivery API (X-Api-Key, read-only). This issue carries only GET /content."""

from __future__ import annotations

from aiohttp import web

from common.crypto import sha256_hex
from common.openapi import operation
from common.web import json_response
from content.auth.credentials import (
    AGENT_KEY_PREFIX,
    DELIVERY_KEY_PREFIX,
    SESSION_COOKIE,
    bearer_token,
    wrong_credential,
)
from content.context import context
from content.errors import Forbidden, Unauthorized
from content.keys import store as key_store
from content.keys.service import ALL_TYPES
from content.keys.store import DeliveryKey
from content.types import store as type_store
from content.types.serializers import type_shape

routes = web.RouteTableDef()


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
    ctx = context(request)
    async with ctx.db.connection() as conn:
        row = await key_store.delivery_key(conn, sha256_hex(token))
        if row is None:
            raise Unauthorized("unknown delivery key", "KEY_INVALID")
        if row.revoked_at is not None:
            raise Unauthorized("this delivery key was revoked", "KEY_REVOKED")
        await key_store.touch_delivery_key(conn, row.id, ctx.clock.now())
    return row


def may_read(key: DeliveryKey, type_name: str) -> bool:
    scopes = key.type_scopes
    return ALL_TYPES in scopes or type_name in scopes


def _allowed_origin(request: web.Request) -> str | None:
    """The request's Origin when DELIVERY_ORIGINS lets browsers there call delivery."""
    origin = request.headers.get("Origin")
    allowed = context(request).settings.delivery_origins
    return origin if origin and ("*" in allowed or origin in allowed) else None


def _headers(request: web.Request) -> dict[str, str]:
    headers = {"Cache-Control": "private, max-age=0", "Vary": "X-Api-Key, Authorization, Origin"}
    origin = _allowed_origin(request)
    if origin:
        headers["Access-Control-Allow-Origin"] = origin
    return headers


@routes.route("OPTIONS", "/content")
@routes.route("OPTIONS", "/content/{tail:.*}")
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
            "Access-Control-Allow-Methods": "GET, HEAD, OPTIONS",
            "Access-Control-Allow-Headers": "X-Api-Key, Authorization, Content-Type",
            "Access-Control-Max-Age": "600",
            "Vary": "Origin",
        },
    )


@routes.get("/content")
@operation(auth="delivery")
async def list_types(request: web.Request) -> web.Response:
    key = await delivery_key(request)
    async with context(request).db.connection() as conn:
        rows = await type_store.list_types(conn)
    data = [type_shape(r) for r in rows if may_read(key, r.name)]
    return json_response({"data": data}, headers=_headers(request))
