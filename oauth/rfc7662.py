"""Token introspection, RFC 7662, for resource servers that must honour revocation.

Only authenticated (confidential) clients may introspect (RFC 7662 2.1).
Access tokens are active while their signature holds, they have not expired
and their jti is not revoked; any authenticated client may ask about one (a
resource server is rarely the client the token was issued to). Refresh
tokens are reported only to the client that holds them; to anyone else they
are ``{"active": false}``, as is every unknown token (RFC 7662 2.2).
"""

from __future__ import annotations

from typing import Any

from common.crypto import sha256_hex
from oauth import rfc9068
from oauth.errors import InvalidClient
from oauth.rfc7009 import check_hint
from oauth.server import AuthorizationServer

INACTIVE: dict[str, Any] = {"active": False}


async def introspect(
    server: AuthorizationServer, client: dict[str, Any], token: str, hint: str | None
) -> dict[str, Any]:
    if client["client_secret_hash"] is None:
        raise InvalidClient("introspection needs an authenticated (confidential) client")
    check_hint(hint)
    now = server.now()
    if token.count(".") == 2:
        claims = rfc9068.decode(token, server.config.secret, verify_exp=True, now=now.timestamp())
        if claims is None:
            return dict(INACTIVE)
        async with server.db.connection() as conn:
            if await server.store.is_access_token_revoked(conn, str(claims.get("jti"))):
                return dict(INACTIVE)
        keep = ("scope", "client_id", "sub", "aud", "iss", "exp", "iat", "jti")
        return {
            "active": True,
            "token_type": "Bearer",
            **{k: claims[k] for k in keep if k in claims},
        }
    async with server.db.connection() as conn:
        row = await server.store.get_refresh_token(conn, sha256_hex(token))
    if (
        row is None
        or row["client_id"] != client["client_id"]
        or row["revoked_at"] is not None
        or row["expires_at"] <= now
    ):
        return dict(INACTIVE)
    return {
        "active": True,
        "token_type": "refresh_token",
        "scope": row["scope"],
        "client_id": row["client_id"],
        "sub": str(row["user_id"]),
        "exp": int(row["expires_at"].timestamp()),
        "iat": int(row["created_at"].timestamp()),
    }
