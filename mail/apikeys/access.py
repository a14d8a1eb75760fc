"""Who may call the sending API, and with what: the Bearer key, the session, or neither.

``Authorization: Bearer <key>`` on an ``/api/`` path is resolved here, after
the session and before the rate limit (so a key's requests spend its
account's budget, like the account's own). A key given replaces the cookie:
the request acts with the key's permission. Other schemes are left alone (a
proxy's Basic credentials in front of the panel are not ours to judge).

The three gates, with the sending API's error names (Resend's):

=====================  ===========================  =============================
gate                   no credential                wrong credential
=====================  ===========================  =============================
``require_key``        401 missing_api_key          (a session) 401 missing_api_key
``require_full``       401 missing_api_key          sending key: 401 restricted_api_key
``require_session``    401 unauthorized             any key: 403 forbidden
=====================  ===========================  =============================

An unknown or revoked key is 403 invalid_api_key on every ``/api/`` route.
"""

from __future__ import annotations

from aiohttp import web

from common.client_ip import client_ip
from common.web import Handler
from mail.accounts.store import Account
from mail.apikeys import service
from mail.auth.sessions import AUTH, Auth
from mail.auth.store import Session
from mail.context import mail_context
from mail.errors import (
    forbidden,
    invalid_api_key,
    missing_api_key,
    restricted_api_key,
    unauthorized,
)
from mail.web import ratelimit

API_PREFIX = "/api/"


def bearer_token(header: str) -> str | None:
    """The token of a ``Bearer`` header ("" when empty); None for another scheme."""
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "bearer":
        return None
    return token.strip()


@web.middleware
async def api_key_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    header = request.headers.get("Authorization")
    if header is not None and request.path.startswith(API_PREFIX):
        token = bearer_token(header)
        if token:
            ctx = mail_context(request)
            found = await service.authenticate(ctx, token)
            if found is None:
                # Refused before the rate limit would see it: spend the client IP's
                # budget here, as any unauthenticated request does.
                ip = client_ip(request, ctx.settings.trusted_proxies)
                await ratelimit.spend(ctx, f"mail:ip:{ip}")
                raise invalid_api_key()
            request[AUTH] = Auth(account=found.account, api_key=found.key)
        elif token == "":
            request.pop(AUTH, None)  # "Bearer" and nothing: no credential, not the cookie's
    return await handler(request)


def require_key(request: web.Request) -> Auth:
    """Sending: any key, and only a key (the spec's "any key")."""
    auth = request.get(AUTH)
    if auth is None or auth.api_key is None:
        raise missing_api_key()
    return auth


def require_full(request: web.Request) -> Auth:
    """Reads, cancel, reschedule: a full-access key or a session."""
    auth = request.get(AUTH)
    if auth is None:
        raise missing_api_key()
    if auth.api_key is not None and auth.api_key.permission != "full_access":
        raise restricted_api_key()
    return auth


def require_session(request: web.Request) -> tuple[Account, Session]:
    """Keys and suppressions: a browser session only; a key never reaches them."""
    auth = request.get(AUTH)
    if auth is not None and auth.api_key is not None:
        raise forbidden("API keys cannot manage API keys or suppressions: sign in to the panel")
    if auth is None or auth.session is None:
        raise unauthorized()
    return auth.account, auth.session
