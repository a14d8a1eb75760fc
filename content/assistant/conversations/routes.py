"""/api/assistant/conversations: a person's own conversations and the streaming turn."""

from __future__ import annotations

from aiohttp import web

from common.openapi import array, obj, operation, string
from common.web import json_response
from content.assistant.budget import SPEND
from content.assistant.conversations import service
from content.assistant.sse import MEDIA, send
from content.assistant.toolbox import Toolbox
from content.auth.credentials import admin_route
from content.auth.principal import Principal
from content.context import context
from content.http import page_body, paging, read_body
from content.openapi import PAGE, PAGING

routes = web.RouteTableDef()
TOOLBOX: web.AppKey[Toolbox] = web.AppKey("assistant_toolbox")

CONVERSATION = obj(
    {"id": string(), "title": string(), "createdAt": string(), "updatedAt": string()},
    required=["id", "title", "createdAt", "updatedAt"],
    additional=True,
)


@routes.get("/api/assistant/conversations")
@admin_route("content.read")
@operation(auth="admin", query=PAGING, response=PAGE)
async def list_conversations(request: web.Request, principal: Principal) -> web.Response:
    """The person's own conversations, newest first."""
    pages = paging(request)
    items, total = await service.list_conversations(context(request), principal, pages)
    return json_response(page_body(items, pages, total))


@routes.post("/api/assistant/conversations")
@admin_route("content.read", SPEND)
@operation(
    auth="admin", status=201, body=obj({"title": string(max_length=200)}), response=CONVERSATION
)
async def create_conversation(request: web.Request, principal: Principal) -> web.Response:
    body = await read_body(request)
    return json_response(await service.create(context(request), principal, body), status=201)


@routes.get("/api/assistant/conversations/{id}")
@admin_route("content.read")
@operation(
    auth="admin",
    response=obj(
        {**CONVERSATION["properties"], "messages": array({"type": "object"})}, additional=True
    ),
)
async def get_conversation(request: web.Request, principal: Principal) -> web.Response:
    """One of the person's conversations with every message kept."""
    return json_response(await service.get(context(request), principal, request.match_info["id"]))


@routes.delete("/api/assistant/conversations/{id}")
@admin_route("content.read")
@operation(auth="admin", status=204)
async def delete_conversation(request: web.Request, principal: Principal) -> web.Response:
    await service.delete(context(request), principal, request.match_info["id"])
    return web.Response(status=204)


@routes.post("/api/assistant/conversations/{id}/messages")
@admin_route("content.read", SPEND)
@operation(
    auth="admin",
    body=obj({"text": string(max_length=service.MAX_MESSAGE)}, required=["text"]),
    response=string(),
    response_media=MEDIA,
    errors=[409, 424, 429],
)
async def send_message(request: web.Request, principal: Principal) -> web.StreamResponse:
    """Send a message; the answer streams as server-sent events (docs/content.md, "Assistant")."""
    body = await read_body(request)
    events = await service.start_turn(
        context(request), principal, request.match_info["id"], body, request.app[TOOLBOX]
    )
    return await send(request, events)
