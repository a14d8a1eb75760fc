"""Who an IMAP client is: LOGIN, AUTHENTICATE PLAIN, OAUTHBEARER (RFC 7628), XOAUTH2.

Passwords go to the directory (mail/directory ``authenticate``), as for
submission and JMAP. Access tokens are our OAuth server's, checked by the
function JMAP's Bearer uses (mta/jmap/auth.py ``access_token_claims``; scope
``mail``), and name a panel account: the login (``a=`` / ``user=``) picks
which of its addresses the session opens.

Every attempt goes through the sign-in of every mailbox-access daemon
(mta/access/signin.py ``SignIn``, as POP3 and ManageSieve): the client
address's budgets are asked before anything is checked and spent when it
fails (JMAP's and the panel's ``mail:auth-ip:<ip>``, submission's
``mta:auth-failed:<ip>``), by a password or an access token alike. An unknown
address and a wrong password get the same answer after the same work (the
directory hashes for both).
"""

from __future__ import annotations

import base64
import binascii
import logging
from dataclasses import dataclass

from mail import directory
from mta.access.signin import Refused, SignIn
from mta.context import MtaContext
from mta.jmap.auth import SCOPES, access_token_claims, token_audience, token_revoked

log = logging.getLogger(__name__)

FAILED = "[AUTHENTICATIONFAILED] Authentication failed."
THROTTLED = "[UNAVAILABLE] Too many failed logins from your address; try again later."
UNAVAILABLE = "[UNAVAILABLE] Sign-in is not available right now; try again later."
DAEMON = "imap"
ANSWERS = {Refused.INVALID: FAILED, Refused.THROTTLED: THROTTLED, Refused.UNAVAILABLE: UNAVAILABLE}


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
        self.signin = SignIn.of(ctx)

    async def password(self, ip: str, login: str, password: str) -> directory.Principal | str:
        found = await self.signin.attempt(DAEMON, ip, login, password)
        return ANSWERS[found] if isinstance(found, Refused) else found

    async def _failed(self, ip: str, login: str) -> str:
        return ANSWERS[await self.signin.failed(DAEMON, ip, login)]

    async def bearer(self, ip: str, bearer: Bearer) -> directory.Principal | str:
        if await self.signin.throttled(ip):
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
