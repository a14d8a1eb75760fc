"""Stored browser sessions: one implementation for every cookie mail sets.

Two owners use it today, each with its own table and cookie: the panel's
account (``svc_session``, 14 days, mail/auth/sessions.py) and webmail's
mailbox (``svc_webmail``, 12 hours, mail/webmail/sessions.py). What they
share lives here, so a fix to one is a fix to both:

- the cookie carries a random token and the table keeps only its SHA-256
  hex, so a database leak gives no usable cookie;
- every request looks the session up, so logout and revocation take effect
  on the very next request in every process;
- the lifetime is absolute from sign-in, not sliding: a stolen cookie is not
  kept alive by use;
- ``last_seen_at`` (and the IP and user agent shown in session lists) is
  written at most once a minute per session, not on every request;
- the cookie is HttpOnly, SameSite=Lax, and Secure when PUBLIC_URL is https.

The owner supplies its table's three statements (insert, resolve, touch) and
how to find the session record in what its resolve returns.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Generic, Protocol, TypeVar

from aiohttp import web

from common.client_ip import client_ip
from common.crypto import sha256_hex
from common.db import Conn
from common.ids import random_id
from mail.context import MailContext

# last_seen_at is written at most this often per session, not on every request.
TOUCH_EVERY = timedelta(seconds=60)
MAX_USER_AGENT = 500
# Longer cookie values are not ours: refused before hashing or querying.
MAX_TOKEN = 200


class SessionRecord(Protocol):
    @property
    def id(self) -> str: ...

    @property
    def last_seen_at(self) -> datetime: ...


Found = TypeVar("Found")


class Insert(Protocol):
    """The owner's INSERT: one row for ``owner_id`` keyed by the token's hash."""

    def __call__(
        self,
        conn: Conn,
        owner_id: str,
        /,
        *,
        token_hash: str,
        ip: str,
        user_agent: str,
        now: datetime,
        expires_at: datetime,
    ) -> Awaitable[object]: ...


def user_agent(request: web.Request) -> str:
    return request.headers.get("User-Agent", "")[:MAX_USER_AGENT]


@dataclass(frozen=True)
class StoredSessions(Generic[Found]):
    """Sessions of one owner kind behind one cookie.

    ``lookup`` returns what a live session resolves to (the session record, or
    the session with its owner); ``session_of`` picks the session record out
    of it so the touch policy can read its id and last use.
    """

    cookie: str
    lifetime: timedelta
    insert: Insert
    lookup: Callable[[Conn, str, datetime], Awaitable[Found | None]]
    touch: Callable[[Conn, str, datetime, str, str], Awaitable[None]]
    session_of: Callable[[Found], SessionRecord]

    async def start(self, conn: Conn, ctx: MailContext, request: web.Request, owner_id: str) -> str:
        """Store a new session for the owner; return the cookie value (shown only here)."""
        token = random_id()
        now = ctx.clock.now()
        await self.insert(
            conn,
            owner_id,
            token_hash=sha256_hex(token),
            ip=client_ip(request, ctx.settings.trusted_proxies),
            user_agent=user_agent(request),
            now=now,
            expires_at=now + self.lifetime,
        )
        return token

    async def resolve(self, ctx: MailContext, request: web.Request) -> Found | None:
        """The live session the request's cookie names, or None."""
        token = request.cookies.get(self.cookie)
        if not token or len(token) > MAX_TOKEN:
            return None
        now = ctx.clock.now()
        async with ctx.db.connection() as conn:
            found = await self.lookup(conn, sha256_hex(token), now)
            if found is None:
                return None
            session = self.session_of(found)
            if now - session.last_seen_at >= TOUCH_EVERY:
                await self.touch(
                    conn,
                    session.id,
                    now,
                    client_ip(request, ctx.settings.trusted_proxies),
                    user_agent(request),
                )
        return found

    def set_cookie(self, ctx: MailContext, response: web.StreamResponse, token: str) -> None:
        response.set_cookie(
            self.cookie,
            token,
            max_age=int(self.lifetime.total_seconds()),
            path="/",
            httponly=True,
            samesite="Lax",
            secure=ctx.settings.public_is_https,
        )

    def clear_cookie(self, ctx: MailContext, response: web.StreamResponse) -> None:
        response.del_cookie(
            self.cookie,
            path="/",
            httponly=True,
            samesite="Lax",
            secure=ctx.settings.public_is_https,
        )
