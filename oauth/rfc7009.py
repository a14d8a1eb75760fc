"""Token revocation, RFC 7009.

Open, as the spec says: a request that names no client revokes the token it
presents (holding the token is the credential). A request that names a
client must authenticate it (secret for confidential clients, the id alone
for public ones), and then may revoke only that client's tokens; another
client's token is refused with invalid_grant, as Authlib does. Unknown,
expired and already revoked tokens answer 200 (RFC 7009 2.2). A refresh
token revokes its whole chain and the access tokens issued along it; an
access token is revoked by its jti until it would have expired.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Final

from common.crypto import sha256_hex
from oauth import audit, rfc9068
from oauth.errors import InvalidGrant, UnsupportedTokenType
from oauth.server import AuthorizationServer, Call

ACCESS_TOKEN: Final = "access_token"
REFRESH_TOKEN: Final = "refresh_token"
TOKEN_TYPE_HINTS: Final = (ACCESS_TOKEN, REFRESH_TOKEN)


def check_hint(hint: str | None) -> None:
    if hint is not None and hint not in TOKEN_TYPE_HINTS:
        raise UnsupportedTokenType(f"token_type_hint must be one of {', '.join(TOKEN_TYPE_HINTS)}")


async def revoke(
    server: AuthorizationServer,
    call: Call,
    client: dict[str, Any] | None,
    token: str,
    hint: str | None,
) -> None:
    check_hint(hint)
    now = server.now()
    owner = client["client_id"] if client is not None else None
    looks_like_jwt = token.count(".") == 2
    # The hint only orders the lookups (RFC 7009 2.1); both kinds are tried.
    if looks_like_jwt:
        claims = rfc9068.decode(token, server.config.secret, verify_exp=True, now=now.timestamp())
        if claims is None:
            return
        if owner is not None and claims.get("client_id") != owner:
            raise InvalidGrant("this token was issued to another client")
        async with server.db.connection() as conn:
            await server.store.revoke_access_token(
                conn,
                str(claims["jti"]),
                str(claims.get("client_id")),
                now,
                datetime.fromtimestamp(claims["exp"], UTC),
            )
        await server.audit(
            audit.TOKEN_REVOKED,
            call,
            client_id=claims.get("client_id"),
            details={"token_type": ACCESS_TOKEN},
        )
        return
    async with server.db.connection() as conn:
        row = await server.store.get_refresh_token(conn, sha256_hex(token))
        if row is None:
            return
        if owner is not None and row["client_id"] != owner:
            raise InvalidGrant("this token was issued to another client")
        burned = await server.store.burn_chain(conn, row["chain_id"], now, "revoked")
    if burned:
        await server.audit(
            audit.TOKEN_REVOKED,
            call,
            client_id=row["client_id"],
            user_id=row["user_id"],
            details={"token_type": REFRESH_TOKEN, "tokens_revoked": burned},
        )
