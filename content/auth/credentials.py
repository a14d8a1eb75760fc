"""Turning a request's credentials into a Principal, and the route guard.

Three credential kinds are not interchangeable: the admin API takes a session
(cookie or Bearer) or an agent key (Bearer ``svcagt_...``); a delivery key
(``svc_...``) is refused here with WRONG_CREDENTIAL, as the delivery API
refuses the other two. The user row is re-read on every request, so a
demotion or deletion applies at once.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable

from aiohttp import web

from common.crypto import sha256_hex
from common.csrf import is_cross_site
from content.auth import store as session_store
from content.auth.permissions import KEY_FORBIDDEN, role_permissions
from content.auth.principal import Principal
from content.context import Context, context
from content.errors import Forbidden, Unauthorized
from content.keys import store as key_store

SESSION_COOKIE = "cms_session"
AGENT_KEY_PREFIX = "svcagt_"
DELIVERY_KEY_PREFIX = "svc_"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

PrincipalHandler = Callable[[web.Request, Principal], Awaitable[web.StreamResponse]]
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def wrong_credential(message: str) -> Unauthorized:
    return Unauthorized(message, "WRONG_CREDENTIAL")


def bearer_token(request: web.Request) -> str | None:
    header = request.headers.get("Authorization")
    if header is None:
        return None
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized("the Authorization header must be 'Bearer <token>'")
    return token.strip()


async def admin_principal(request: web.Request) -> Principal:
    ctx = context(request)
    if request.headers.get("X-Api-Key"):
        raise wrong_credential(
            "a delivery key (X-Api-Key) only reads the delivery API; "
            "the admin API takes a session or an agent key"
        )
    token = bearer_token(request)
    if token is not None:
        if token.startswith(AGENT_KEY_PREFIX):
            return await _agent_key(ctx, token)
        if token.startswith(DELIVERY_KEY_PREFIX):
            raise wrong_credential(
                "a delivery key (svc_) only reads the delivery API; "
                "the admin API takes a session or an agent key"
            )
        return await _session(ctx, token, via_cookie=False)
    cookie = request.cookies.get(SESSION_COOKIE)
    if cookie:
        return await _session(ctx, cookie, via_cookie=True)
    raise Unauthorized("sign in, or send a session token or agent key as a Bearer token")


async def cookie_principal(request: web.Request) -> Principal | None:
    """The person of the session cookie, or None (the admin's pages ask this)."""
    cookie = request.cookies.get(SESSION_COOKIE)
    if not cookie:
        return None
    try:
        return await _session(context(request), cookie, via_cookie=True)
    except Unauthorized:
        return None


async def _session(ctx: Context, token: str, *, via_cookie: bool) -> Principal:
    async with ctx.db.connection() as conn:
        found = await session_store.session_user(conn, sha256_hex(token), ctx.clock.now())
    if found is None:
        raise Unauthorized("the session has expired or was signed out", "SESSION_INVALID")
    return Principal(
        user=found.user,
        kind="session",
        session_id=found.session_id,
        via_cookie=via_cookie,
    )


async def _agent_key(ctx: Context, token: str) -> Principal:
    now = ctx.clock.now()
    async with ctx.db.connection() as conn:
        key = await key_store.agent_key_user(conn, sha256_hex(token))
        if key is None:
            raise Unauthorized("unknown agent key", "KEY_INVALID")
        if key.revoked_at is not None:
            raise Unauthorized("this agent key was revoked", "KEY_REVOKED")
        if key.expires_at <= now:
            raise Unauthorized("this agent key has expired", "KEY_EXPIRED")
        await key_store.touch_agent_key(conn, key.key_id, now)
    return Principal(
        user=key.user,
        kind="agent_key",
        key_id=key.key_id,
        key_name=key.key_name,
        grants=frozenset(key.grants),
    )


def require(principal: Principal, permission: str) -> None:
    if principal.can(permission):
        return
    details = {"permission": permission}
    if principal.kind == "agent_key":
        if permission in KEY_FORBIDDEN:
            raise Forbidden(
                "no agent key can do this, whatever it was granted; sign in as a person",
                "KEY_FORBIDDEN",
                details,
            )
        if permission in role_permissions(principal.user.role):
            raise Forbidden(f"this agent key was not granted {permission}", details=details)
    raise Forbidden(f"the {principal.user.role} role does not have {permission}", details=details)


def _check_same_origin(request: web.Request, ctx: Context) -> None:
    """Cookie-authenticated writes must come from our own pages (CSRF defence).

    The shared predicate (``common.csrf``): ``Origin``, or without it
    ``Referer``, must be PUBLIC_URL's origin or the request's own, matched
    exactly (scheme, host and port). A Bearer credential is not ambient and
    is not checked; an Authorization header that is not one (anything but a
    session token or agent key) is refused by :func:`admin_principal` and
    never falls back to the cookie.
    """
    if is_cross_site(request, (ctx.runtime.settings.public_origin,)):
        raise Forbidden("cross-site request refused", "CSRF_REJECTED")


def admin_route(*permissions: str) -> Callable[[PrincipalHandler], Handler]:
    """Guard an admin API handler: authenticate, check CSRF and permissions."""

    def wrap(fn: PrincipalHandler) -> Handler:
        @functools.wraps(fn)
        async def handler(request: web.Request) -> web.StreamResponse:
            principal = await admin_principal(request)
            if principal.via_cookie and request.method not in SAFE_METHODS:
                _check_same_origin(request, context(request))
            for permission in permissions:
                require(principal, permission)
            return await fn(request, principal)

        return handler

    return wrap
