"""Who an IMAP client is: LOGIN, AUTHENTICATE PLAIN, OAUTHBEARER (RFC 7628), XOAUTH2.

Passwords go to the directory (mail/directory ``authenticate``), as for
submission and JMAP. Access tokens are our OAuth server's, checked by the
function JMAP's Bearer uses (mta/jmap/auth.py ``access_token_claims``; scope
``mail``), and name a panel account: the login (``a=`` / ``user=``) picks
which of its addresses the session opens.

Failed attempts spend the client address's budgets, before anything is
checked: JMAP's and the panel's sign-in budget (``mail:auth-ip:<ip>``,
AUTH_RATE_LIMIT_PER_SECOND per second) and submission's failure budget
(``mta:auth-failed:<ip>``, SUBMISSION_AUTH_FAILURES per
SUBMISSION_AUTH_WINDOW). An unknown address and a wrong password get the
same answer after the same work (the directory hashes for both).
"""

from __future__ import annotations

import base64
import binascii
import logging
from dataclasses import dataclass

from common.ratelimit import RateLimiter
from common.settings import read_int
from mail import directory
from mta.context import MtaContext
from mta.jmap.auth import SCOPES, access_token_claims, token_audience, token_revoked

log = logging.getLogger(__name__)

FAILED = "[AUTHENTICATIONFAILED] Authentication failed."
THROTTLED = "[UNAVAILABLE] Too many failed logins from your address; try again later."


class SaslError(Exception):
    """The client's SASL message is malformed (BAD)."""


@dataclass(frozen=True)
class Bearer:
    user: str
    token: str


def b64(data: str) -> bytes:
    if data == "=":
        return b""
    try:
        return base64.b64decode(data.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise SaslError("not base64") from None


def plain(message: bytes) -> tuple[str, str]:
    """(login, password) of a PLAIN message (RFC 4616); an authzid must be the login."""
    parts = message.split(b"\0")
    if len(parts) != 3:
        raise SaslError("PLAIN is authzid NUL authcid NUL password")
    authz, login, password = (p.decode("utf-8", "replace") for p in parts)
    if authz and authz.lower() != login.lower():
        raise SaslError("acting as another user is not supported")
    return login, password


def oauthbearer(message: bytes) -> Bearer:
    """RFC 7628 3.1: ``n,a=user,^Aauth=Bearer token^A^A``."""
    text = message.decode("utf-8", "replace")
    gs2, sep, rest = text.partition("\x01")
    if not sep or not gs2.startswith(("n,", "y,")):
        raise SaslError("OAUTHBEARER starts with a GS2 header")
    user = ""
    for field in gs2.split(",")[1:]:
        if field.startswith("a="):
            user = field[2:].replace("=2C", ",").replace("=3D", "=")
    return Bearer(user, _auth_value(rest))


def xoauth2(message: bytes) -> Bearer:
    """Google's XOAUTH2: ``user=x^Aauth=Bearer token^A^A``."""
    text = message.decode("utf-8", "replace")
    user = ""
    for field in text.split("\x01"):
        if field.startswith("user="):
            user = field[5:]
    return Bearer(user, _auth_value(text))


def _auth_value(kvpairs: str) -> str:
    for field in kvpairs.split("\x01"):
        if field.lower().startswith("auth="):
            scheme, _, token = field[5:].partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                return token.strip()
    raise SaslError("no auth=Bearer value")


class Authenticator:
    def __init__(self, ctx: MtaContext) -> None:
        self.ctx = ctx
        self.limiter = RateLimiter(ctx.runtime.db, ctx.runtime.clock)

    @property
    def _signin_limit(self) -> int:
        return read_int(self.ctx.runtime.settings.environ, "AUTH_RATE_LIMIT_PER_SECOND", 5)

    def _budgets(self, ip: str) -> list[tuple[str, int, float]]:
        config = self.ctx.config
        return [
            (f"mail:auth-ip:{ip}", self._signin_limit, 1.0),
            (
                f"mta:auth-failed:{ip}",
                config.submission_auth_failures,
                config.submission_auth_window,
            ),
        ]

    async def throttled(self, ip: str) -> bool:
        for key, limit, window in self._budgets(ip):
            if not (await self.limiter.peek(key, limit, window)).allowed:
                return True
        return False

    async def _failed(self, ip: str, login: str) -> str:
        for key, limit, window in self._budgets(ip):
            await self.limiter.hit(key, limit, window)
        # Never the password, and the login only as far as the domain.
        log.info("failed IMAP login from %s for @%s", ip, login.rpartition("@")[2])
        return FAILED

    async def password(self, ip: str, login: str, password: str) -> directory.Principal | str:
        if await self.throttled(ip):
            return THROTTLED
        async with self.ctx.runtime.db.connection() as conn:
            found = await directory.authenticate(conn, login, password)
        return found if found is not None else await self._failed(ip, login)

    async def bearer(self, ip: str, bearer: Bearer) -> directory.Principal | str:
        if await self.throttled(ip):
            return THROTTLED
        settings = self.ctx.runtime.settings
        claims = access_token_claims(
            bearer.token,
            settings.secret,
            token_audience(settings),
            self.ctx.runtime.clock.timestamp(),
        )
        if claims is None or not set(str(claims.get("scope", "")).split()) & SCOPES:
            return await self._failed(ip, bearer.user)
        try:
            number = int(str(claims["sub"]))
        except (KeyError, TypeError, ValueError):
            return await self._failed(ip, bearer.user)
        async with self.ctx.runtime.db.connection() as conn:
            if await token_revoked(conn, claims):
                return await self._failed(ip, bearer.user)
            addresses = await directory.account_addresses(conn, number)
        wanted = bearer.user.strip().lower()
        for principal in addresses:
            if not wanted or principal.email.lower() == wanted:
                return principal
        return await self._failed(ip, bearer.user)
