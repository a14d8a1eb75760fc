"""GET /api/overview."""

from __future__ import annotations

from aiohttp import web

from common.openapi import operation
from common.web import json_response
from mail.auth import sessions
from mail.context import mail_context
from mail.overview import serializers, service

routes = web.RouteTableDef()


@routes.get("/api/overview")
@operation(auth="session")
async def overview(request: web.Request) -> web.Response:
    account = sessions.require(request).account
    found = await service.overview(mail_context(request), account.id)
    return json_response(serializers.overview(found))
