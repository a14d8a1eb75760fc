"""Stored sessions behind the ``svc_session`` cookie.

The cookie carries a random token; the table keeps only its SHA-256 hex. Every
request looks the session up, so logout and revocation take effect on the very
next request, in every process. A session lives 14 days from sign-in
(absolute, not sliding: a stolen cookie is not kept alive by use).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from aiohttp import web

from common.client_ip import client_ip
from common.crypto import sha256_hex
from common.db import Conn
from common.ids import random_id
from common.web import Handler
from mail.accounts.store import Account
from mail.apikeys.store import ApiKey
from mail.auth import store
from mail.auth.store import Session
from mail.context import MailContext, mail_context
from mail.errors import restricted_api_key, unauthorized

COOKIE_NAME = "svc_session"
SESSION_LIFETIME = timedelta(days=14)
# last_seen_at is written at most this often per session, not on every request.
TOUCH_EVERY = timedelta(seconds=60)
MAX_USER_AGENT = 500


@dataclass(frozen=True)
class Auth:
    """Who a request acts for. ``session`` is None for non-cookie credentials:
    an API key (``api_key``, resolved by mail/apikeys/access.py)."""

    account: Account
    session: Session | None = None
    api_key: ApiKey | None = None


AUTH = web.RequestKey("mail.auth", Auth)


def user_agent(request: web.Request) -> str:
    return request.headers.get("User-Agent", "")[:MAX_USER_AGENT]


async def start(conn: Conn, ctx: MailContext, request: web.Request, account_id: str) -> str:
    """Create a session for the account; return the cookie value (shown only here)."""
    token = random_id()
    now = ctx.clock.now()
    await store.insert(
        conn,
        account_id=account_id,
        token_hash=sha256_hex(token),
        ip=client_ip(request, ctx.settings.trusted_proxies),
        user_agent=user_agent(request),
        now=now,
        expires_at=now + SESSION_LIFETIME,
    )
    return token


async def resolve(ctx: MailContext, request: web.Request) -> Auth | None:
    """The live session named by the request's cookie, or None."""
    token = request.cookies.get(COOKIE_NAME)
    if not token or len(token) > 200:
        return None
    now = ctx.clock.now()
    async with ctx.db.connection() as conn:
        found = await store.resolve(conn, sha256_hex(token), now)
        if found is None:
            return None
        session, account = found
        if now - session.last_seen_at >= TOUCH_EVERY:
            await store.touch(
                conn,
                session.id,
                now,
                client_ip(request, ctx.settings.trusted_proxies),
                user_agent(request),
            )
    return Auth(account=account, session=session)


def set_cookie(ctx: MailContext, response: web.StreamResponse, token: str) -> None:
    response.set_cookie(
        COOKIE_NAME,
        token,
        max_age=int(SESSION_LIFETIME.total_seconds()),
        path="/",
        httponly=True,
        samesite="Lax",
        secure=ctx.settings.public_is_https,
    )


def clear_cookie(ctx: MailContext, response: web.StreamResponse) -> None:
    response.del_cookie(
        COOKIE_NAME,
        path="/",
        httponly=True,
        samesite="Lax",
        secure=ctx.settings.public_is_https,
    )


@web.middleware
async def session_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Attach the signed-in account (if any) before rate limits and handlers run."""
    auth = await resolve(mail_context(request), request)
    if auth is not None:
        request[AUTH] = auth
    return await handler(request)


def current(request: web.Request) -> Auth | None:
    return request.get(AUTH)


def require(request: web.Request) -> Auth:
    """The signed-in account; 401 unauthorized otherwise. Every panel route starts here."""
    auth = request.get(AUTH)
    if auth is None:
        raise unauthorized()
    if auth.api_key is not None and auth.api_key.permission != "full_access":
        # A full-access key reaches the panel routes like a session (as at Resend);
        # a sending key only sends.
        raise restricted_api_key()
    return auth


def require_session(request: web.Request) -> tuple[Account, Session]:
    """Like :func:`require`, but only a browser session will do (not an API key)."""
    auth = request.get(AUTH)
    if auth is None or auth.session is None:
        raise unauthorized()
    return auth.account, auth.session
