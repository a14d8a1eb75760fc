"""The authorization request (RFC 6749 4.1.1, OAuth 2.1 4.1.1) behind the host's consent UI.

The host's consent page calls info (to show the client and scopes), then
approve or deny; each takes the authorization request's parameters and
validates them the same way. Until the client and its redirect_uri are known
good, errors are shown to the user only; after that they also carry the
redirect_url the user agent may be sent to (RFC 6749 4.1.2.1), with ``iss``
(RFC 9207).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from common.crypto import sha256_hex
from oauth import audit, rfc7636
from oauth.constants import AUTH_CODE_TTL_SECONDS
from oauth.errors import (
    InvalidRequest,
    InvalidScope,
    OAuthError,
    UnsupportedResponseType,
)
from oauth.ids import random_id
from oauth.redirects import is_allowed_redirect, redirect_uri_problem
from oauth.rfc9207 import redirect_with
from oauth.scope import format_scope, parse_scope
from oauth.server import AuthorizationServer, Call

MAX_STATE_LENGTH = 1024
MAX_NONCE_LENGTH = 1024


@dataclass(frozen=True)
class AuthorizationRequest:
    client: dict[str, Any]
    redirect_uri: str
    scopes: list[str]
    state: str | None
    code_challenge: str
    code_challenge_method: str
    nonce: str | None


def requested_scopes(
    server: AuthorizationServer, client: Mapping[str, Any], raw_scope: str | None
) -> list[str]:
    """The scopes a request asks for, within the client's and the server's.

    No scope asked: the client's allowed scopes (RFC 6749 3.3 lets the server
    pick a default).
    """
    allowed = [s for s in client["allowed_scopes"] if s in server.scopes]
    scopes = parse_scope(raw_scope) if raw_scope else list(allowed)
    refused = [s for s in scopes if s not in allowed]
    if refused:
        raise InvalidScope(f"scope not allowed for this client: {format_scope(refused)}")
    if not scopes:
        raise InvalidScope("this client has no scope it may request")
    return scopes


def public_client(client: Mapping[str, Any]) -> dict[str, Any]:
    """What a consent screen may show about a client."""
    return {
        "client_id": client["client_id"],
        "name": client["name"],
        "description": client["description"],
        "icon_url": client["icon_url"],
        "is_official": client["is_official"],
    }


async def validate(
    server: AuthorizationServer, call: Call, params: Mapping[str, str]
) -> AuthorizationRequest:
    client_id = params.get("client_id")
    if not client_id:
        raise InvalidRequest("client_id is required")
    async with server.db.connection() as conn:
        client = await server.store.get_client(conn, client_id)
    if client is None or client["revoked_at"] is not None:
        raise InvalidRequest("unknown or revoked client")
    redirect_uri = params.get("redirect_uri")
    if not redirect_uri:
        raise InvalidRequest("redirect_uri is required")
    if not is_allowed_redirect(client["redirect_uris"], redirect_uri):
        raise InvalidRequest("redirect_uri is not registered for this client")
    if redirect_uri_problem(redirect_uri):
        # Registered before the current rules (or written to the table directly):
        # never send a user agent, let alone a code, to it.
        raise InvalidRequest("the registered redirect_uri is no longer allowed; update the client")
    # From here on the redirect_uri is trusted: errors can go back to the client.
    state = params.get("state")
    try:
        return _validate_rest(server, client, redirect_uri, state, params)
    except OAuthError as exc:
        exc.redirect_url = redirect_with(
            redirect_uri,
            {"error": exc.error, "error_description": exc.description, "state": state},
            call.issuer,
        )
        raise


def _validate_rest(
    server: AuthorizationServer,
    client: dict[str, Any],
    redirect_uri: str,
    state: str | None,
    params: Mapping[str, str],
) -> AuthorizationRequest:
    if state is not None and len(state) > MAX_STATE_LENGTH:
        raise InvalidRequest(f"state is longer than {MAX_STATE_LENGTH} characters")
    response_type = params.get("response_type")
    if not response_type:
        raise InvalidRequest("response_type is required")
    if response_type != "code":
        raise UnsupportedResponseType("only response_type=code is supported")
    scopes = requested_scopes(server, client, params.get("scope"))
    challenge = params.get("code_challenge")
    if not challenge:
        raise InvalidRequest("code_challenge is required (PKCE with S256)")
    # RFC 7636 4.3: an absent method means plain, which OAuth 2.1 forbids here.
    method = params.get("code_challenge_method") or "plain"
    if method != rfc7636.S256:
        raise InvalidRequest(f"code_challenge_method {method} is not supported; use S256")
    if not rfc7636.is_valid_challenge(challenge):
        raise InvalidRequest("code_challenge must be 43 to 128 characters of [A-Za-z0-9-._~]")
    nonce = params.get("nonce")
    if nonce is not None and len(nonce) > MAX_NONCE_LENGTH:
        raise InvalidRequest(f"nonce is longer than {MAX_NONCE_LENGTH} characters")
    return AuthorizationRequest(
        client=client,
        redirect_uri=redirect_uri,
        scopes=scopes,
        state=state,
        code_challenge=challenge,
        code_challenge_method=method,
        nonce=nonce,
    )


def info(req: AuthorizationRequest) -> dict[str, Any]:
    return {
        "client": public_client(req.client),
        "scopes": req.scopes,
        "scope": format_scope(req.scopes),
        "redirect_uri": req.redirect_uri,
        "state": req.state,
    }


async def approve(
    server: AuthorizationServer, call: Call, req: AuthorizationRequest, user_id: int
) -> dict[str, str]:
    """Issue a code (stored as its SHA-256 only) and the URL that hands it to the client."""
    code = random_id()
    now = server.now()
    async with server.db.connection() as conn:
        await server.store.insert_code(
            conn,
            code_hash=sha256_hex(code),
            client_id=req.client["client_id"],
            user_id=user_id,
            redirect_uri=req.redirect_uri,
            code_challenge=req.code_challenge,
            code_challenge_method=req.code_challenge_method,
            scope=format_scope(req.scopes),
            expires_at=now + timedelta(seconds=AUTH_CODE_TTL_SECONDS),
            nonce=req.nonce,
            auth_time=int(now.timestamp()),
        )
    await server.audit(
        audit.AUTHORIZATION_APPROVED,
        call,
        client_id=req.client["client_id"],
        user_id=user_id,
        details={"scope": format_scope(req.scopes)},
    )
    url = redirect_with(req.redirect_uri, {"code": code, "state": req.state}, call.issuer)
    return {"redirect_url": url}


async def deny(
    server: AuthorizationServer, call: Call, req: AuthorizationRequest, user_id: int
) -> dict[str, str]:
    await server.audit(
        audit.AUTHORIZATION_DENIED, call, client_id=req.client["client_id"], user_id=user_id
    )
    url = redirect_with(
        req.redirect_uri,
        {
            "error": "access_denied",
            "error_description": "the user denied the request",
            "state": req.state,
        },
        call.issuer,
    )
    return {"redirect_url": url}
