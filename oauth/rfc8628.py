"""The device authorization grant, RFC 8628.

User codes: 8 characters from the RFC 6.1 consonant alphabet
(BCDFGHJKLMNPQRSTVWXZ, no vowels so no words, 20^8 codes), shown as
XXXX-XXXX and normalized on input (case, dashes, spaces). Device codes are
256-bit random strings stored as their SHA-256.

Polling (RFC 8628 3.5): pending answers authorization_pending, or slow_down
when the poll came sooner than the stored interval after the previous one; a
slow_down grows that code's interval by 5 seconds for good. A denied code
answers access_denied, an expired one expired_token; an approved code is
exchanged once (deleted in the same statement) and is then unknown.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from datetime import timedelta
from typing import Any, Final
from urllib.parse import urlencode

from aiohttp import web

from common.crypto import sha256_hex
from common.db import ConflictError, translate_db_error
from oauth import audit
from oauth.constants import (
    DEVICE_CODE_TTL_SECONDS,
    DEVICE_POLL_INTERVAL_SECONDS,
    DEVICE_SLOW_DOWN_STEP_SECONDS,
    GRANT_DEVICE_CODE,
)
from oauth.errors import (
    AuthorizationPending,
    DeviceAccessDenied,
    ExpiredToken,
    InvalidGrant,
    InvalidRequest,
    NotFound,
    SlowDown,
    TooManyAttempts,
)
from oauth.ids import random_id
from oauth.rfc6749.authorize import public_client, requested_scopes
from oauth.rfc6749.client_auth import Credentials, authenticate_client
from oauth.scope import format_scope, parse_scope
from oauth.server import AuthorizationServer, Call

USER_CODE_ALPHABET: Final = "BCDFGHJKLMNPQRSTVWXZ"
USER_CODE_LENGTH: Final = 8
_INSERT_ATTEMPTS = 5
# Device authorization requests per client address and window.
DEVICE_AUTHORIZE_LIMIT: Final = 60
DEVICE_AUTHORIZE_WINDOW_SECONDS: Final = 60
# Pairing page lookups (info, approve, deny) per signed-in user and window.
PAIRING_ATTEMPTS: Final = 30
PAIRING_WINDOW_SECONDS: Final = 600


def new_user_code() -> str:
    """A fresh user code in its display form, XXXX-XXXX."""
    raw = "".join(secrets.choice(USER_CODE_ALPHABET) for _ in range(USER_CODE_LENGTH))
    return format_user_code(raw)


def normalize_user_code(value: str) -> str:
    """What the user typed, as stored: upper case, no dashes or whitespace."""
    return "".join(ch for ch in value.upper() if ch not in "- \t\r\n")


def format_user_code(normalized: str) -> str:
    half = len(normalized) // 2
    return f"{normalized[:half]}-{normalized[half:]}"


def is_well_formed_user_code(normalized: str) -> bool:
    return len(normalized) == USER_CODE_LENGTH and all(
        ch in USER_CODE_ALPHABET for ch in normalized
    )


# --- the device authorization endpoint (RFC 8628 3.1, 3.2) -----------------


async def authorize_device(
    server: AuthorizationServer,
    request: web.Request,
    client: Mapping[str, Any],
    form: Mapping[str, str],
) -> dict[str, Any]:
    # Device codes cost a row each and anyone can ask for one: bound it per address.
    ip = server.call(request).info.ip or "unknown"
    decision = await server.limiter.hit(
        f"oauth:device-authorize:{ip}", DEVICE_AUTHORIZE_LIMIT, DEVICE_AUTHORIZE_WINDOW_SECONDS
    )
    if not decision.allowed:
        raise TooManyAttempts(decision.retry_after, "too many device authorization requests")
    scopes = requested_scopes(server, client, form.get("scope"))
    device_code = random_id()
    now = server.now()
    for attempt in range(_INSERT_ATTEMPTS):
        user_code = new_user_code()
        try:
            async with server.db.connection() as conn:
                await server.store.insert_device_code(
                    conn,
                    device_hash=sha256_hex(device_code),
                    user_code=normalize_user_code(user_code),
                    client_id=client["client_id"],
                    scope=format_scope(scopes),
                    interval=DEVICE_POLL_INTERVAL_SECONDS,
                    now=now,
                    expires_at=now + timedelta(seconds=DEVICE_CODE_TTL_SECONDS),
                )
            break
        except Exception as exc:
            # A user code collision (1 in 20^8 per live code): draw another.
            if not isinstance(translate_db_error(exc), ConflictError) or (
                attempt == _INSERT_ATTEMPTS - 1
            ):
                raise
    verification_uri = server.config.build_verification_uri(request)
    separator = "&" if "?" in verification_uri else "?"
    return {
        "device_code": device_code,
        "user_code": user_code,
        "verification_uri": verification_uri,
        "verification_uri_complete": (
            f"{verification_uri}{separator}{urlencode({'user_code': user_code})}"
        ),
        "expires_in": DEVICE_CODE_TTL_SECONDS,
        "interval": DEVICE_POLL_INTERVAL_SECONDS,
    }


# --- the device_code grant at the token endpoint (RFC 8628 3.4, 3.5) -------


class DeviceCodeGrant:
    grant_type: Final = GRANT_DEVICE_CODE

    async def exchange(
        self,
        server: AuthorizationServer,
        call: Call,
        creds: Credentials,
        form: Mapping[str, str],
    ) -> dict[str, Any]:
        client = await authenticate_client(server, call, creds)
        device_code = form.get("device_code")
        if not device_code:
            raise InvalidRequest("device_code is required")
        device_hash = sha256_hex(device_code)
        client_id = client["client_id"]
        tokens = server.new_tokens()
        now = tokens.issued_at
        async with server.db.transaction() as conn:
            taken = await server.store.take_approved_device(conn, device_hash, client_id, now)
            if taken is not None:
                chain_id = await server.store_new_chain(
                    conn,
                    tokens,
                    client_id=client_id,
                    user_id=taken["user_id"],
                    scope=taken["scope"],
                )
        if taken is None:
            await self._not_ready(server, device_hash, client_id)
        assert taken is not None
        return await server.respond_with_tokens(
            call,
            tokens,
            client_id=client_id,
            user_id=taken["user_id"],
            scope=taken["scope"],
            chain_id=chain_id,
            event=audit.TOKEN_ISSUED,
            grant_type=self.grant_type,
        )

    async def _not_ready(
        self, server: AuthorizationServer, device_hash: str, client_id: str
    ) -> None:
        """Raise the poll answer for a code that was not exchanged."""
        now = server.now()
        async with server.db.connection() as conn:
            row = await server.store.poll_device(
                conn, device_hash, client_id, now, DEVICE_SLOW_DOWN_STEP_SECONDS
            )
        if row is None:
            raise InvalidGrant("unknown device_code")
        if row["expires_at"] <= now:
            raise ExpiredToken("the device code expired; start over")
        if row["denied_at"] is not None:
            raise DeviceAccessDenied("the user denied the request")
        if row["too_fast"]:
            raise SlowDown(f"polling too fast; wait {row['poll_interval']} seconds between polls")
        raise AuthorizationPending("the user has not answered yet")


# --- the pairing page's routes (spec: device info, approve, deny) ----------


async def _pending(
    server: AuthorizationServer, user_code: str | None, user_id: int
) -> dict[str, Any]:
    # RFC 8628 5.1: user codes are short, so code entry is rate limited (per user).
    decision = await server.limiter.hit(
        f"oauth:device-pairing:{user_id}", PAIRING_ATTEMPTS, PAIRING_WINDOW_SECONDS
    )
    if not decision.allowed:
        raise TooManyAttempts(decision.retry_after, "too many pairing attempts")
    if not user_code:
        raise InvalidRequest("user_code is required")
    normalized = normalize_user_code(user_code)
    if not is_well_formed_user_code(normalized):
        raise NotFound("no such code")
    async with server.db.connection() as conn:
        row = await server.store.get_device_by_user_code(conn, normalized)
    if row is None or row["expires_at"] <= server.now():
        raise NotFound("no such code, or it expired")
    return row


def _status(row: Mapping[str, Any]) -> str:
    if row["approved_at"] is not None:
        return "approved"
    if row["denied_at"] is not None:
        return "denied"
    return "pending"


async def device_info(
    server: AuthorizationServer, user_code: str | None, user_id: int
) -> dict[str, Any]:
    row = await _pending(server, user_code, user_id)
    async with server.db.connection() as conn:
        client = await server.store.get_client(conn, row["client_id"])
    if client is None or client["revoked_at"] is not None:
        raise NotFound("no such code")
    return {
        "user_code": format_user_code(row["user_code"]),
        "client": public_client(client),
        "scopes": parse_scope(row["scope"]),
        "scope": row["scope"],
        "status": _status(row),
        "expires_at": row["expires_at"],
    }


async def decide(
    server: AuthorizationServer,
    call: Call,
    user_code: str | None,
    user_id: int,
    *,
    approve: bool,
) -> dict[str, Any]:
    row = await _pending(server, user_code, user_id)
    async with server.db.connection() as conn:
        client = await server.store.get_client(conn, row["client_id"])
        if client is None or client["revoked_at"] is not None:
            raise NotFound("no such code")
        decided = await server.store.decide_device(
            conn, row["user_code"], user_id, server.now(), approve=approve
        )
    if decided is None:
        raise InvalidRequest("this code was already answered")
    await server.audit(
        audit.DEVICE_APPROVED if approve else audit.DEVICE_DENIED,
        call,
        client_id=decided["client_id"],
        user_id=user_id,
        details={"scope": decided["scope"]},
    )
    return {"status": _status(decided), "user_code": format_user_code(decided["user_code"])}
