"""Client authentication at the token, device, revocation and introspection endpoints.

RFC 6749 2.3.1 and OAuth 2.1 2.4.1: ``client_secret_basic`` (HTTP Basic with
the id and secret form-urlencoded first), ``client_secret_post`` (both in the
body), and ``none`` for public clients, which only name themselves and rely on
PKCE. A request uses exactly one method. Secrets are compared as SHA-256 hex
in constant time.

Failures are counted per (client, source address): past the limit, that
address must wait out a short, growing lock (TooManyAttempts) before trying
that client again, while the real client, elsewhere, keeps authenticating.
Many failures against one client from all addresses together tighten the rule
for every address that fails (docs/oauth.md, "Slow-down").
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Final
from urllib.parse import unquote_plus

from common.crypto import constant_time_equals, sha256_hex
from common.web import text_problem
from oauth import audit
from oauth.constants import (
    CLIENT_AUTH_CLIENT_FAILURE_LIMIT,
    CLIENT_AUTH_FAILURE_LIMIT,
    CLIENT_AUTH_FAILURE_WINDOW_SECONDS,
    CLIENT_AUTH_LOCK_CAP_SECONDS,
)
from oauth.errors import InvalidClient, InvalidRequest, TooManyAttempts
from oauth.server import AuthorizationServer, Call

CLIENT_SECRET_BASIC: Final = "client_secret_basic"
CLIENT_SECRET_POST: Final = "client_secret_post"
NONE: Final = "none"
AUTH_METHODS: Final = (CLIENT_SECRET_BASIC, CLIENT_SECRET_POST, NONE)


@dataclass(frozen=True)
class Credentials:
    client_id: str | None
    secret: str | None
    method: str | None

    @property
    def presented_secret(self) -> bool:
        return self.secret is not None


def throttle_address(ip: str | None) -> str:
    """The source a failure is counted against: the IPv4 address, or the IPv6 /64.

    One IPv6 host usually holds a whole /64, so counting single v6 addresses
    would give a guesser 2**64 fresh budgets.
    """
    try:
        addr = ipaddress.ip_address(ip or "")
    except ValueError:
        return ip or "unknown"
    if isinstance(addr, ipaddress.IPv6Address):
        if addr.ipv4_mapped is not None:
            return str(addr.ipv4_mapped)
        return str(ipaddress.IPv6Network((addr, 64), strict=False))
    return str(addr)


def presented_secret_hash(creds: Credentials) -> str | None:
    return sha256_hex(creds.secret) if creds.secret is not None else None


def read_credentials(authorization: str | None, form: Mapping[str, str]) -> Credentials:
    """The client's credentials from the Authorization header or the body; one method only."""
    body_id = form.get("client_id")
    body_secret = form.get("client_secret")
    if authorization:
        scheme, _, value = authorization.partition(" ")
        if scheme.lower() != "basic":
            raise InvalidClient("only HTTP Basic client authentication is supported")
        try:
            decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            raise InvalidClient("malformed HTTP Basic credentials") from None
        raw_id, sep, raw_secret = decoded.partition(":")
        if not sep:
            raise InvalidClient("malformed HTTP Basic credentials")
        client_id, secret = unquote_plus(raw_id), unquote_plus(raw_secret)
        if text_problem(client_id) or text_problem(secret):
            # A NUL could never name a stored client (and the driver refuses it).
            raise InvalidClient("malformed HTTP Basic credentials")
        if body_secret is not None:
            raise InvalidRequest("use one client authentication method per request")
        if body_id is not None and body_id != client_id:
            raise InvalidRequest("client_id in the body does not match the Authorization header")
        return Credentials(client_id, secret, CLIENT_SECRET_BASIC)
    if body_secret is not None:
        if not body_id:
            raise InvalidRequest("client_secret without client_id")
        return Credentials(body_id, body_secret, CLIENT_SECRET_POST)
    if body_id:
        return Credentials(body_id, None, NONE)
    return Credentials(None, None, None)


async def authenticate_client(
    server: AuthorizationServer, call: Call, creds: Credentials
) -> dict[str, Any]:
    """The active client these credentials prove, or InvalidClient / TooManyAttempts."""
    if creds.client_id is None:
        raise InvalidClient("client authentication is required")
    async with server.db.connection() as conn:
        client = await server.store.get_client_for_auth(
            conn, creds.client_id, throttle_address(call.info.ip)
        )
    return await verify_client(server, call, creds, client)


async def verify_client(
    server: AuthorizationServer,
    call: Call,
    creds: Credentials,
    client: dict[str, Any] | None,
) -> dict[str, Any]:
    """Check credentials against the client record read for them (or None if unknown).

    The record carries the asking address's lock and failures (store.CLIENT_CTE).
    Store statements that gate their work on the same conditions in SQL
    (``client_gate``) must stay in step with these checks.
    """
    now = server.now()
    if client is None or client["revoked_at"] is not None:
        raise InvalidClient("unknown or revoked client")
    locked_until = client["auth_locked_until"]
    if locked_until is not None and locked_until > now:
        raise TooManyAttempts(max(1, int((locked_until - now).total_seconds() + 0.999)))
    expected = client["client_secret_hash"]
    if expected is None:
        if creds.presented_secret:
            raise InvalidClient("this is a public client: it has no secret to present")
        return client
    if creds.secret is None:
        raise InvalidClient("this client must authenticate with its secret")
    if not constant_time_equals(sha256_hex(creds.secret), expected):
        await _failed(server, call, client["client_id"])
        raise InvalidClient("client authentication failed")
    if client["address_failures"]:
        async with server.db.connection() as conn:
            await server.store.clear_auth_failures(
                conn, client["client_id"], throttle_address(call.info.ip)
            )
    return client


async def _failed(server: AuthorizationServer, call: Call, client_id: str) -> None:
    async with server.db.connection() as conn:
        await server.store.record_auth_failure(
            conn,
            client_id,
            throttle_address(call.info.ip),
            server.now(),
            window=timedelta(seconds=CLIENT_AUTH_FAILURE_WINDOW_SECONDS),
            limit=CLIENT_AUTH_FAILURE_LIMIT,
            client_limit=CLIENT_AUTH_CLIENT_FAILURE_LIMIT,
            cap_seconds=CLIENT_AUTH_LOCK_CAP_SECONDS,
        )
    await server.audit(audit.CLIENT_AUTH_FAILED, call, client_id=client_id)
