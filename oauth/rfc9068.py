"""JWT access tokens, RFC 9068: HS256 under the configured secret, ``typ: at+jwt``.

Claims: the host's (build_access_token_claims), then the ones we own, which
win whatever the host returned: client_id, scope and jti (spec), plus iss,
iat and exp; sub (the user id) and aud (the issuer unless configured) are
defaults the host may override, as RFC 9068 2.2 requires both.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import jwt

ALGORITHM = "HS256"
TYP = "at+jwt"


@dataclass(frozen=True)
class AccessTokenGrant:
    """What an access token says, before the host's claims are merged in."""

    jti: str
    client_id: str
    user_id: int
    scope: str
    issued_at: int
    expires_at: int


def build_claims(
    grant: AccessTokenGrant, host_claims: Mapping[str, Any], *, issuer: str, audience: str
) -> dict[str, Any]:
    claims: dict[str, Any] = {"sub": str(grant.user_id), "aud": audience}
    claims.update(host_claims)
    claims.update(
        {
            "iss": issuer,
            "iat": grant.issued_at,
            "exp": grant.expires_at,
            "client_id": grant.client_id,
            "scope": grant.scope,
            "jti": grant.jti,
        }
    )
    return claims


def sign(claims: Mapping[str, Any], secret: str) -> str:
    return jwt.encode(dict(claims), secret, algorithm=ALGORITHM, headers={"typ": TYP})


def decode(token: str, secret: str, *, verify_exp: bool, now: float) -> dict[str, Any] | None:
    """Our own token's claims, or None when it is not one (bad signature, wrong typ).

    Time checks use the injected clock (``now``), not the machine's.
    """
    try:
        header = jwt.get_unverified_header(token)
        if header.get("typ") != TYP or header.get("alg") != ALGORITHM:
            return None
        claims = jwt.decode(
            token,
            secret,
            algorithms=[ALGORITHM],
            options={"verify_exp": False, "verify_aud": False, "verify_iat": False},
        )
    except jwt.PyJWTError:
        return None
    if verify_exp and not (isinstance(claims.get("exp"), int) and claims["exp"] > now):
        return None
    return claims
