"""HTTP routes of mailbox recovery: unauthenticated, for mailbox owners who are not panel users."""

from __future__ import annotations

from aiohttp import web

from common.client_ip import client_ip
from common.openapi import obj, operation, string
from common.web import json_response
from mail.accounts.service import MAX_PASSWORD
from mail.context import mail_context
from mail.errors import invalid_parameter
from mail.recovery import serializers, service
from mail.web.body import read_body, required_str

routes = web.RouteTableDef()

REQUEST_MESSAGE = (
    "If this mailbox has a recovery address, a link to reset its password has been sent there."
)


@routes.get("/api/recover/check")
@operation(query={"domain": string(min_length=1, max_length=253)}, errors=(400,))
async def check(request: web.Request) -> web.Response:
    domain = request.query.get("domain", "")
    if not domain or len(domain) > 253:
        raise invalid_parameter("domain is required (at most 253 characters)")
    found = await service.check(mail_context(request), domain)
    return json_response(serializers.check(found))


@routes.post("/api/recover/request")
@operation(
    status=202,
    body=obj({"email": string(min_length=1, max_length=service.MAX_EMAIL)}, required=["email"]),
)
async def request_reset(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    body = await read_body(request, allowed={"email"})
    email = required_str(body, "email", max_length=service.MAX_EMAIL)
    await service.request(ctx, email, client_ip(request, ctx.settings.trusted_proxies))
    return json_response(serializers.requested(REQUEST_MESSAGE), status=202)


@routes.post("/api/recover/reset")
@operation(
    body=obj(
        {
            "token": string(min_length=1, max_length=service.MAX_TOKEN_LENGTH),
            "password": string(min_length=1, max_length=MAX_PASSWORD),
        },
        required=["token", "password"],
    ),
)
async def reset(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    body = await read_body(request, allowed={"token", "password"})
    token = required_str(body, "token", max_length=service.MAX_TOKEN_LENGTH)
    password = required_str(body, "password", max_length=MAX_PASSWORD)
    email = await service.reset(ctx, token, password)
    return json_response(serializers.reset(email))
