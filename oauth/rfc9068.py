"""JWT access tokens, RFC 9068: HS256 under the configured secret, ``typ: at+jwt``.

Claims: the host's (build_access_token_claims), then the ones we own, which
win whatever the host returned: client_id, scope and jti (spec), plus iss,
iat and exp; sub (the user id) and aud (the issuer unless configured) are
defaults the host may override, as RFC 9068 2.2 requires both.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
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


def _b64url(data: bytes) -> bytes:
    return base64.urlsafe_b64encode(data).rstrip(b"=")


# The header never changes: encoded once, as PyJWT would (sorted keys, no spaces).
_SIGNING_PREFIX = _b64url(b'{"alg":"HS256","typ":"at+jwt"}') + b"."


@lru_cache(maxsize=4)
def _mac(secret: str) -> Any:
    """An HMAC-SHA256 keyed once per secret; each signature copies it."""
    return hmac.new(secret.encode(), digestmod=hashlib.sha256)


def sign(claims: Mapping[str, Any], secret: str) -> str:
    """The compact JWS (RFC 7515 7.1) of ``claims``, HS256.

    Written out rather than through jwt.encode, which re-validates the key and
    re-encodes the header on every call: a third of the signing cost on the
    token endpoint's hot path. Verification stays with PyJWT (``decode``),
    and the tests check every token with PyJWT independently.
    """
    payload = _b64url(json.dumps(claims, separators=(",", ":")).encode())
    signing_input = _SIGNING_PREFIX + payload
    mac = _mac(secret).copy()
    mac.update(signing_input)
    return (signing_input + b"." + _b64url(mac.digest())).decode("ascii")


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
