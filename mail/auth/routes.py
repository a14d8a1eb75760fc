"""HTTP routes of signing in: login, logout, two-factor, sessions."""

from __future__ import annotations

from aiohttp import web

from common.openapi import obj, operation, string
from common.web import json_response
from mail.accounts import serializers as account_serializers
from mail.auth import serializers, service, sessions, store
from mail.context import mail_context
from mail.openapi import ACCOUNT, LIST, list_query
from mail.web.body import optional_str, read_body, required_str
from mail.web.lists import list_envelope, parse_list_params
from mail.web.ownership import parse_id

routes = web.RouteTableDef()


@routes.post("/api/auth/login")
@operation(
    response=ACCOUNT,
    body=obj(
        {
            "email": string(min_length=1, max_length=254),
            "password": string(min_length=1, max_length=256),
            "totp_code": string(max_length=20, nullable=True),
        },
        required=["email", "password"],
    ),
    errors=(401,),
)
async def login(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    body = await read_body(request, allowed={"email", "password", "totp_code"})
    email = required_str(body, "email", max_length=254)
    password = required_str(body, "password", max_length=256)
    totp_code = optional_str(body, "totp_code", max_length=20)
    account, token = await service.login(ctx, request, email, password, totp_code)
    response = json_response(account_serializers.account(account))
    sessions.PANEL.set_cookie(ctx, response, token)
    return response


@routes.post("/api/auth/logout")
@operation(status=204, auth="session")
async def logout(request: web.Request) -> web.StreamResponse:
    ctx = mail_context(request)
    _, session = sessions.require_session(request)
    await service.logout(ctx, session.id)
    response = web.Response(status=204)
    sessions.PANEL.clear_cookie(ctx, response)
    return response


@routes.post("/api/auth/totp/setup")
@operation(body=obj(), auth="session", errors=(409,))
async def totp_setup(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account, _ = sessions.require_session(request)
    await read_body(request, allowed=())
    secret, uri = await service.totp_setup(ctx, account)
    return json_response(serializers.totp_setup(secret, uri))


@routes.post("/api/auth/totp/enable")
@operation(
    response=ACCOUNT,
    body=obj({"code": string(min_length=1, max_length=20)}, required=["code"]),
    auth="session",
    errors=(409,),
)
async def totp_enable(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account, _ = sessions.require_session(request)
    body = await read_body(request, allowed={"code"})
    updated = await service.totp_enable(ctx, account, required_str(body, "code", max_length=20))
    return json_response(account_serializers.account(updated))


@routes.post("/api/auth/totp/disable")
@operation(
    response=ACCOUNT,
    body=obj({"password": string(min_length=1, max_length=1000)}, required=["password"]),
    auth="session",
    errors=(409,),
)
async def totp_disable(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account, _ = sessions.require_session(request)
    body = await read_body(request, allowed={"password"})
    updated = await service.totp_disable(ctx, account, required_str(body, "password"))
    return json_response(account_serializers.account(updated))


@routes.get("/api/account/sessions")
@operation(response=LIST, query=list_query(store.SESSION_SORTS), auth="session")
async def list_sessions(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account, current = sessions.require_session(request)
    params = parse_list_params(request.query, store.SESSION_SORTS)
    rows, total = await service.live_sessions(ctx, account, params)
    return json_response(
        list_envelope([serializers.session(s, current.id) for s in rows], params, total)
    )


# Registered before the dynamic route below on purpose (see mail/README.md, routing).
@routes.post("/api/account/sessions/revoke-others")
@operation(auth="session")
async def revoke_others(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account, current = sessions.require_session(request)
    count = await service.revoke_others(ctx, account, current.id)
    return json_response(serializers.revoked(count))


@routes.delete("/api/account/sessions/{session_id}")
@operation(status=204, auth="session")
async def revoke_one(request: web.Request) -> web.StreamResponse:
    ctx = mail_context(request)
    account, _ = sessions.require_session(request)
    session_id = parse_id(request, "session_id")
    await service.revoke(ctx, account, session_id)
    return web.Response(status=204)
