"""Stored sessions behind the ``svc_webmail`` cookie (spec, Authentication 3).

A mailbox owner signs in with the address and its password; the cookie
carries a random token, the table keeps only its SHA-256 hex, and every
request looks it up, so logout, a password change and a recovery reset end
a session on the very next request. 12 hours from sign-in, absolute (a
stolen cookie is not kept alive by use), like the panel's 14 days.

The two cookies never stand in for each other: the panel resolves only
``svc_session`` (mail/auth/sessions.py) and /api/mail only ``svc_webmail``.
"""

from __future__ import annotations

from datetime import timedelta

from aiohttp import web

from common.client_ip import client_ip
from common.crypto import sha256_hex
from common.db import Conn
from common.ids import random_id
from common.web import Handler
from mail.auth.sessions import user_agent
from mail.context import MailContext, mail_context
from mail.errors import unauthorized
from mail.webmail import store
from mail.webmail.store import WebmailSession

COOKIE_NAME = "svc_webmail"
SESSION_LIFETIME = timedelta(hours=12)
TOUCH_EVERY = timedelta(seconds=60)
# Only these paths read the cookie: nothing else of mail answers to it.
PREFIXES = ("/api/mail/", "/webmail")

WEBMAIL = web.RequestKey("mail.webmail", WebmailSession)


async def start(conn: Conn, ctx: MailContext, request: web.Request, address_id: str) -> str:
    """Create a session for the mailbox; return the cookie value (shown only here)."""
    token = random_id()
    now = ctx.clock.now()
    await store.insert(
        conn,
        address_id=address_id,
        token_hash=sha256_hex(token),
        ip=client_ip(request, ctx.settings.trusted_proxies),
        user_agent=user_agent(request),
        now=now,
        expires_at=now + SESSION_LIFETIME,
    )
    return token


async def resolve(ctx: MailContext, request: web.Request) -> WebmailSession | None:
    token = request.cookies.get(COOKIE_NAME)
    if not token or len(token) > 200:
        return None
    now = ctx.clock.now()
    async with ctx.db.connection() as conn:
        session = await store.resolve(conn, sha256_hex(token), now)
        if session is not None and now - session.last_seen_at >= TOUCH_EVERY:
            await store.touch(
                conn,
                session.id,
                now,
                client_ip(request, ctx.settings.trusted_proxies),
                user_agent(request),
            )
    return session


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
        COOKIE_NAME, path="/", httponly=True, samesite="Lax", secure=ctx.settings.public_is_https
    )


@web.middleware
async def webmail_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Attach the signed-in mailbox on webmail paths, before the rate limit picks a principal."""
    if request.path.startswith(PREFIXES):
        session = await resolve(mail_context(request), request)
        if session is not None:
            request[WEBMAIL] = session
    return await handler(request)


def current(request: web.Request) -> WebmailSession | None:
    return request.get(WEBMAIL)


def require(request: web.Request) -> WebmailSession:
    """The signed-in mailbox; 401 unauthorized otherwise (a panel session does not count)."""
    session = request.get(WEBMAIL)
    if session is None:
        raise unauthorized()
    return session
