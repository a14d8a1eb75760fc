"""Sign-in routes under /api/auth (docs/content.md, "Signing in")."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from common.client_ip import client_ip
from common.openapi import obj, operation, string
from common.web import json_response
from content.auth import service
from content.auth.credentials import SESSION_COOKIE, admin_route
from content.auth.principal import Principal
from content.context import Context, context
from content.errors import BadRequest, NotFound, Problems
from content.http import read_body
from content.people import service as people
from content.people.serializers import user_json
from content.people.service import MAX_NAME_LENGTH, MAX_PASSWORD_LENGTH
from content.settings import MIN_PASSWORD_LENGTH

routes = web.RouteTableDef()

MODES = ("bearer", "cookie")


def _mode(body: dict[str, Any]) -> str:
    mode = body.get("mode", "bearer")
    if mode not in MODES:
        problems = Problems()
        problems.add("mode", "must be bearer or cookie")
        problems.raise_if_any()
    return str(mode)


def _session_response(
    request: web.Request, ctx: Context, session: service.NewSession, mode: str, status: int = 200
) -> web.Response:
    body: dict[str, Any] = {
        "user": user_json(session.user),
        "expiresAt": session.expires_at,
    }
    if mode == "bearer":
        body["token"] = session.token
    response = json_response(body, status=status, headers={"Cache-Control": "no-store"})
    if mode == "cookie":
        response.set_cookie(
            SESSION_COOKIE,
            session.token,
            max_age=int(service.SESSION_LIFETIME.total_seconds()),
            path=ctx.prefix or "/",
            httponly=True,
            secure=ctx.runtime.settings.public_is_https,
            samesite="Lax",
        )
    return response


def _client(request: web.Request, ctx: Context) -> tuple[str, str]:
    return (
        client_ip(request, ctx.runtime.settings.trusted_proxies),
        request.headers.get("User-Agent", ""),
    )


@routes.get("/api/auth/setup")
@operation()
async def setup_state(request: web.Request) -> web.Response:
    return json_response({"setupRequired": await people.setup_required(context(request))})


@routes.post("/api/auth/setup")
@operation(
    status=201,
    body=obj(
        {
            "email": string(min_length=1),
            "password": string(min_length=MIN_PASSWORD_LENGTH, max_length=MAX_PASSWORD_LENGTH),
            "name": string(max_length=MAX_NAME_LENGTH),
            "mode": string(enum=MODES),
        },
        required=["email", "password"],
        additional=True,
    ),
    errors=(409, 429),
)
async def setup(request: web.Request) -> web.Response:
    ctx = context(request)
    body = await read_body(request)
    mode = _mode(body)
    ip, agent = _client(request, ctx)
    await service.limit_login(ctx, ip)
    user = await people.claim_site(ctx, body)
    session = await service.start_session(ctx, user, ip=ip, user_agent=agent)
    return _session_response(request, ctx, session, mode, status=201)


@routes.post("/api/auth/login")
@operation(
    body=obj(
        {
            "email": string(min_length=1),
            "password": string(min_length=1),
            "mode": string(enum=MODES),
        },
        required=["email", "password"],
        additional=True,
    ),
    errors=(401, 429),
)
async def login(request: web.Request) -> web.Response:
    ctx = context(request)
    body = await read_body(request)
    mode = _mode(body)
    email, password = body.get("email"), body.get("password")
    problems = Problems()
    if not isinstance(email, str) or not email:
        problems.add("email", "is required")
    if not isinstance(password, str) or not password:
        problems.add("password", "is required")
    problems.raise_if_any()
    assert isinstance(email, str) and isinstance(password, str)
    ip, agent = _client(request, ctx)
    session = await service.sign_in(ctx, email, password, ip=ip, user_agent=agent)
    return _session_response(request, ctx, session, mode)


@routes.post("/api/auth/logout")
@admin_route()
@operation(status=204, auth="admin")
async def logout(request: web.Request, principal: Principal) -> web.Response:
    if principal.session_id is None:
        raise BadRequest("agent keys are revoked under /api/agent-keys, not signed out")
    ctx = context(request)
    await service.end_session(ctx, principal.user.id, principal.session_id)
    response = web.Response(status=204)
    response.del_cookie(SESSION_COOKIE, path=ctx.prefix or "/")
    return response


@routes.get("/api/auth/me")
@admin_route()
@operation(auth="admin")
async def me(request: web.Request, principal: Principal) -> web.Response:
    ctx = context(request)
    user = await people.get_user(ctx, principal.user.id)
    return json_response(
        {
            "user": user_json(user),
            "credential": {"kind": principal.kind, "keyId": principal.key_id},
            "permissions": sorted(principal.permissions),
        }
    )


# Your account and its sessions are the person's: no agent key reaches them
# (account.manage is a person-only capability), so a key cannot take over,
# watch or sign out the person it acts for.
@routes.patch("/api/auth/me")
@admin_route("account.manage")
@operation(
    body=obj(
        {
            "name": string(max_length=MAX_NAME_LENGTH),
            "email": string(min_length=1),
            "password": string(min_length=MIN_PASSWORD_LENGTH, max_length=MAX_PASSWORD_LENGTH),
            "currentPassword": string(),
        }
    ),
    auth="admin",
    errors=(409, 429),
)
async def update_me(request: web.Request, principal: Principal) -> web.Response:
    user = await people.update_self(context(request), principal, await read_body(request))
    return json_response(user_json(user))


@routes.get("/api/auth/sessions")
@admin_route("account.manage")
@operation(auth="admin")
async def my_sessions(request: web.Request, principal: Principal) -> web.Response:
    rows = await service.live_sessions(context(request), principal.user.id)
    return json_response(
        {
            "data": [
                {
                    "id": row.id,
                    "createdAt": row.created_at,
                    "expiresAt": row.expires_at,
                    "ip": row.ip,
                    "userAgent": row.user_agent,
                    "current": row.id == principal.session_id,
                }
                for row in rows
            ]
        }
    )


@routes.delete("/api/auth/sessions/{id}")
@admin_route("account.manage")
@operation(status=204, auth="admin")
async def revoke_session(request: web.Request, principal: Principal) -> web.Response:
    try:
        session_id = int(request.match_info["id"])
    except ValueError:
        raise NotFound("no such session") from None
    if not await service.end_session(context(request), principal.user.id, session_id):
        raise NotFound("no such session")
    return web.Response(status=204)
