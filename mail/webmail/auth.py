"""Webmail sign-in and out: the mailbox credential (mail/directory/ authenticate)."""

from __future__ import annotations

from aiohttp import web

from common.crypto import sha256_hex
from mail import directory
from mail.context import MailContext
from mail.errors import unauthorized
from mail.webmail import sessions, store
from mail.webmail.store import WebmailSession

# The same reply for an unknown address and a wrong password (spec, Authentication 4).
INVALID_LOGIN = "invalid email or password"


async def login(
    ctx: MailContext, request: web.Request, email: str, password: str
) -> tuple[WebmailSession, str]:
    """Check the mailbox credential; return the new session and its cookie value."""
    async with ctx.db.connection() as conn:
        # authenticate does one argon2 verification on every path (no user probing).
        principal = await directory.authenticate(conn, email, password)
        if principal is None:
            raise unauthorized(INVALID_LOGIN)
        token = await sessions.WEBMAIL_SESSIONS.start(conn, ctx, request, principal.address_id)
        session = await store.resolve(conn, sha256_hex(token), ctx.clock.now())
    assert session is not None
    return session, token


async def logout(ctx: MailContext, session_id: str) -> None:
    async with ctx.db.connection() as conn:
        await store.delete(conn, session_id)
