"""The realtime socket (GET /realtime?ticket=) and its two ticket routes.

A person's session gets a ticket from POST /api/realtime/ticket, a website's
delivery key from POST /realtime/delivery/ticket; either is redeemed once,
within 30 seconds, by opening the socket.
"""

from __future__ import annotations

from aiohttp import web

from common.openapi import obj, operation, string
from common.web import json_response
from content.auth.credentials import admin_route, wrong_credential
from content.auth.principal import Principal
from content.context import Context, context
from content.delivery.routes import cors_headers, delivery_key
from content.errors import BadRequest
from content.realtime import service
from content.realtime.serializers import socket_url, ticket_json

routes = web.RouteTableDef()
NO_STORE = {"Cache-Control": "no-store"}

TICKET = obj(
    {"ticket": string(), "expiresAt": string(), "url": string()},
    required=["ticket", "expiresAt", "url"],
)


async def _ticket_response(
    ctx: Context,
    *,
    session_id: int | None = None,
    key_id: str | None = None,
    headers: dict[str, str] | None = None,
) -> web.Response:
    ticket, expires_at = await service.mint_ticket(ctx, session_id=session_id, key_id=key_id)
    url = socket_url(ctx.runtime.settings.public_url, ctx.prefix, ticket)
    return json_response(
        ticket_json(ticket, expires_at, url), status=201, headers={**NO_STORE, **(headers or {})}
    )


@routes.post("/api/realtime/ticket")
@admin_route("content.read")
@operation(status=201, response=TICKET, auth="admin")
async def session_ticket(request: web.Request, principal: Principal) -> web.Response:
    """A socket ticket for the signed-in person (sessions only)."""
    if principal.kind != "session" or principal.session_id is None:
        raise wrong_credential("the realtime socket takes a person's session or a delivery key")
    return await _ticket_response(context(request), session_id=principal.session_id)


@routes.post("/realtime/delivery/ticket")
@operation(status=201, response=TICKET, auth="delivery")
async def delivery_ticket(request: web.Request) -> web.Response:
    """A socket ticket for a delivery key (X-Api-Key)."""
    key = await delivery_key(request)
    # A website's browser code asks for it: CORS as for the delivery routes.
    return await _ticket_response(context(request), key_id=key.id, headers=cors_headers(request))


@routes.get("/realtime")
@operation(
    summary="The realtime socket: a WebSocket upgrade answered 101 Switching Protocols",
    status=101,
    query={"ticket": string(description="a ticket from a ticket route; single use, 30 s")},
    required_query=["ticket"],
    errors=(400, 401),
)
async def socket(request: web.Request) -> web.StreamResponse:
    ws = web.WebSocketResponse(
        heartbeat=service.HEARTBEAT_SECONDS, max_msg_size=service.MAX_FRAME_BYTES
    )
    # Checked before the ticket is spent, so a plain GET does not waste one.
    if not ws.can_prepare(request).ok:
        raise BadRequest("this is a WebSocket: connect with Upgrade: websocket", "NOT_WEBSOCKET")
    client = await service.redeem_ticket(context(request), request.query.get("ticket", ""))
    await ws.prepare(request)
    await request.app[service.HUB].serve(ws, client)
    return ws
