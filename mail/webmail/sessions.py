"""Stored sessions behind the ``svc_webmail`` cookie (spec, Authentication 3).

A mailbox owner signs in with the address and its password; a session lives
12 hours from sign-in (absolute), and logout, a password change and a
recovery reset end it on the very next request. How sessions are stored,
looked up and carried is mail/web/sessions.py, shared with the panel.

The two cookies never stand in for each other: the panel resolves only
``svc_session`` (mail/auth/sessions.py) and /api/mail only ``svc_webmail``.
"""

from __future__ import annotations

from datetime import timedelta

from aiohttp import web

from common.web import Handler
from mail.context import mail_context
from mail.errors import unauthorized
from mail.web.sessions import StoredSessions
from mail.webmail import store
from mail.webmail.store import WebmailSession

# Only these paths read the cookie: nothing else of mail answers to it.
PREFIXES = ("/api/mail/", "/webmail")

WEBMAIL_SESSIONS: StoredSessions[WebmailSession] = StoredSessions(
    cookie="svc_webmail",
    lifetime=timedelta(hours=12),
    insert=store.insert,
    lookup=store.resolve,
    touch=store.touch,
    session_of=lambda session: session,
)

WEBMAIL = web.RequestKey("mail.webmail", WebmailSession)


@web.middleware
async def webmail_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Attach the signed-in mailbox on webmail paths, before the rate limit picks a principal."""
    if request.path.startswith(PREFIXES):
        session = await WEBMAIL_SESSIONS.resolve(mail_context(request), request)
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
