"""The panel's stored sessions behind the ``svc_session`` cookie.

A session lives 14 days from sign-in (absolute); how sessions are stored,
looked up and carried is mail/web/sessions.py, shared with webmail.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from aiohttp import web

from common.web import Handler
from mail.accounts.store import Account
from mail.apikeys.store import ApiKey
from mail.auth import store
from mail.auth.store import Session
from mail.context import MailContext, mail_context
from mail.errors import restricted_api_key, unauthorized
from mail.web.sessions import StoredSessions

COOKIE_NAME = "svc_session"

PANEL: StoredSessions[tuple[Session, Account]] = StoredSessions(
    cookie=COOKIE_NAME,
    lifetime=timedelta(days=14),
    insert=store.insert,
    lookup=store.resolve,
    touch=store.touch,
    session_of=lambda found: found[0],
)


@dataclass(frozen=True)
class Auth:
    """Who a request acts for. ``session`` is None for non-cookie credentials:
    an API key (``api_key``, resolved by mail/apikeys/access.py)."""

    account: Account
    session: Session | None = None
    api_key: ApiKey | None = None


AUTH = web.RequestKey("mail.auth", Auth)


async def resolve(ctx: MailContext, request: web.Request) -> Auth | None:
    """The signed-in account of the request's panel cookie, or None."""
    found = await PANEL.resolve(ctx, request)
    if found is None:
        return None
    session, account = found
    return Auth(account=account, session=session)


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
