"""Who a JMAP request is: HTTP Basic (one mailbox) or an OAuth access token (every address).

* ``Basic`` with an address and its password (mail/directory/ ``authenticate``)
  gives that address as the session's one account.
* ``Bearer`` with an access token of this project's OAuth server (RFC 9068 JWT,
  HS256 under SECRET, ``typ: at+jwt``): the signature, expiry (injected clock),
  audience (JMAP_TOKEN_AUDIENCE, by default the issuer ``PUBLIC_URL/oauth``,
  which is what the server puts in ``aud``), scope (``urn:ietf:params:jmap:mail``
  or ``mail``) and the revocation denylist are checked; the token's ``sub`` is
  the panel account number, and every address that account owns becomes an
  account of the session.

Failures answer 401 with both challenges (RFC 7235 4.1, RFC 6750 3); a token
without the scope 403 ``insufficient_scope``. Failed attempts spend the client
address's sign-in budget (``mail:auth-ip:<ip>``, AUTH_RATE_LIMIT_PER_SECOND,
the one the panel's sign-in spends); once it is gone the answer is 429 before
any password is checked. A password check costs argon2's hundred-odd
milliseconds of CPU and a client authenticates every request, so a Basic
credential proven lately is taken without hashing it again while the
address's stored hash is unchanged (mail/directory ``ProvenSignIns``, the
mail apps' doors' own, AUTH_CACHE_SECONDS).
"""

from __future__ import annotations

import base64
import binascii
import hmac
import json
from dataclasses import dataclass

import jwt
from aiohttp import web
from multidict import CIMultiDict

from common.client_ip import client_ip
from common.db import Conn, fetch_val
from common.ratelimit import Decision, RateLimiter
from common.settings import Settings, read_int, read_str
from mail import directory
from mta.jmap.context import JmapContext
from mta.jmap.registry import Account, Principal

SCOPES = frozenset({"urn:ietf:params:jmap:mail", "mail"})
REALM = "JMAP"


class AuthFailed(Exception):
    def __init__(self, response: web.Response) -> None:
        super().__init__(response.text)
        self.response = response


@dataclass
class Authenticator:
    ctx: JmapContext
    limiter: RateLimiter

    @property
    def audience(self) -> str:
        return token_audience(self.ctx.runtime.settings)

    @property
    def signin_limit(self) -> int:
        return read_int(self.ctx.runtime.settings.environ, "AUTH_RATE_LIMIT_PER_SECOND", 5)

    async def principal(self, request: web.Request) -> Principal:
        header = request.headers.get("Authorization", "")
        scheme, _, credentials = header.partition(" ")
        scheme = scheme.lower()
        if scheme not in ("basic", "bearer") or not credentials.strip():
            raise AuthFailed(unauthorized("authentication required"))
        ip = client_ip(request, self.ctx.runtime.settings.trusted_proxies)
        budget = f"mail:auth-ip:{ip}"
        decision = await self.limiter.peek(budget, self.signin_limit)
        if not decision.allowed:
            raise AuthFailed(too_many(decision))
        if scheme == "basic":
            found = await self._basic(credentials.strip())
            if found is None:
                await self.limiter.hit(budget, self.signin_limit)
                raise AuthFailed(unauthorized("the address or password is wrong"))
            return found
        return await self._bearer(credentials.strip(), budget)

    # -- Basic -----------------------------------------------------------------
    async def _basic(self, credentials: str) -> Principal | None:
        try:
            decoded = base64.b64decode(credentials, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return None
        email, sep, password = decoded.partition(":")
        if not sep or not email or not password:
            return None
        found = await self.ctx.mta.proven.once(
            email, password, lambda: self._check(email, password)
        )
        if found is None:
            return None
        principal = Principal(
            username=found.email,
            accounts=(_account(found),),
            key=f"address:{found.address_id}",
        )
        return principal

    async def _check(self, email: str, password: str) -> directory.Principal | None:
        async with self.ctx.runtime.db.connection() as conn:
            return await directory.authenticate(conn, email, password, proven=self.ctx.mta.proven)

    # -- Bearer ----------------------------------------------------------------
    async def _bearer(self, token: str, budget: str) -> Principal:
        claims = self._claims(token)
        if claims is None:
            await self.limiter.hit(budget, self.signin_limit)
            raise AuthFailed(unauthorized("the access token is invalid or expired", token=True))
        granted = set(str(claims.get("scope", "")).split())
        if not granted & SCOPES:
            raise AuthFailed(insufficient_scope())
        async with self.ctx.runtime.db.connection() as conn:
            # The OAuth server's denylist of revoked access tokens (by jti).
            if await token_revoked(conn, claims):
                await self.limiter.hit(budget, self.signin_limit)
                raise AuthFailed(unauthorized("the access token was revoked", token=True))
            try:
                number = int(str(claims["sub"]))
            except (KeyError, TypeError, ValueError):
                raise AuthFailed(
                    unauthorized("the access token names no account", token=True)
                ) from None
            addresses = await directory.account_addresses(conn, number)
        if not addresses:
            raise AuthFailed(forbidden("this account has no mail addresses yet"))
        return Principal(
            username=str(claims.get("email") or addresses[0].email),
            accounts=tuple(_account(a) for a in addresses),
            key=f"account:{addresses[0].account_id}",
            scopes=frozenset(granted),
        )

    def _claims(self, token: str) -> dict[str, object] | None:
        return access_token_claims(
            token,
            self.ctx.runtime.settings.secret,
            self.audience,
            self.ctx.runtime.clock.timestamp(),
        )


def token_audience(settings: Settings) -> str:
    """The ``aud`` an access token must name: JMAP_TOKEN_AUDIENCE, else PUBLIC_URL/oauth."""
    return read_str(settings.environ, "JMAP_TOKEN_AUDIENCE") or (
        settings.public_url.rstrip("/") + "/oauth"
    )


def access_token_claims(
    token: str, secret: str, audience: str, now: float
) -> dict[str, object] | None:
    """The claims of a valid, unexpired access token of our OAuth server for
    ``audience``, or None. JMAP's Bearer and IMAP's OAUTHBEARER/XOAUTH2 share it."""
    try:
        header = jwt.get_unverified_header(token)
        if header.get("typ") != "at+jwt" or header.get("alg") != "HS256":
            return None
        claims = jwt.decode(
            token,
            secret,
            algorithms=["HS256"],
            options={"verify_exp": False, "verify_aud": False, "verify_iat": False},
        )
    except jwt.PyJWTError:
        return None
    exp = claims.get("exp")
    if not isinstance(exp, int) or exp <= now:
        return None
    aud = claims.get("aud")
    audiences = aud if isinstance(aud, list) else [aud]
    if not any(hmac.compare_digest(str(a), audience) for a in audiences):
        return None
    return claims


async def token_revoked(conn: Conn, claims: dict[str, object]) -> bool:
    """Whether the OAuth server's denylist holds the token (by jti)."""
    revoked = await fetch_val(
        conn,
        "SELECT 1 FROM oauth.oauth_revoked_access_tokens WHERE jti = %s",
        (str(claims.get("jti")),),
    )
    return revoked is not None


def _account(found: directory.Principal) -> Account:
    return Account(
        id=found.address_id,
        address_id=found.address_id,
        email=found.email,
        owner_account_id=found.account_id,
        display_name=found.display_name,
    )


def _problem(status: int, title: str, detail: str, headers: CIMultiDict[str]) -> web.Response:
    body = json.dumps({"type": "about:blank", "status": status, "title": title, "detail": detail})
    return web.Response(
        status=status, text=body, content_type="application/problem+json", headers=headers
    )


def unauthorized(detail: str, *, token: bool = False) -> web.Response:
    headers: CIMultiDict[str] = CIMultiDict()
    headers.add("WWW-Authenticate", f'Basic realm="{REALM}", charset="UTF-8"')
    bearer = f'Bearer realm="{REALM}"'
    if token:
        bearer += f', error="invalid_token", error_description="{detail}"'
    headers.add("WWW-Authenticate", bearer)
    return _problem(401, "Unauthorized", detail, headers)


def insufficient_scope() -> web.Response:
    headers: CIMultiDict[str] = CIMultiDict()
    headers.add(
        "WWW-Authenticate",
        f'Bearer realm="{REALM}", error="insufficient_scope", scope="urn:ietf:params:jmap:mail"',
    )
    return _problem(403, "Forbidden", "the access token lacks the mail scope", headers)


def forbidden(detail: str) -> web.Response:
    return _problem(403, "Forbidden", detail, CIMultiDict())


def too_many(decision: Decision) -> web.Response:
    return _problem(
        429, "Too Many Requests", "too many requests; retry later", CIMultiDict(decision.headers())
    )
