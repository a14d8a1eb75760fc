"""PKCE, RFC 7636: S256 only, as OAuth 2.1 section 4.1.1 requires."""

from __future__ import annotations

import base64
import hashlib
import re

from common.crypto import constant_time_equals

S256 = "S256"
# RFC 7636 4.1 and 4.2: 43 to 128 characters of the unreserved set.
_PKCE_VALUE = re.compile(r"^[A-Za-z0-9\-._~]{43,128}$")


def s256_challenge(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def verify_pkce_s256(verifier: str, challenge: str) -> bool:
    """RFC 7636 4.6: BASE64URL(SHA256(verifier)) == challenge, in constant time."""
    if not is_valid_verifier(verifier):
        return False
    return constant_time_equals(s256_challenge(verifier), challenge)


def is_valid_verifier(verifier: str) -> bool:
    return bool(_PKCE_VALUE.match(verifier))


def is_valid_challenge(challenge: str) -> bool:
    return bool(_PKCE_VALUE.match(challenge))
