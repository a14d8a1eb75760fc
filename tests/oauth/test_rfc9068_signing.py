"""The access token signer against PyJWT, byte for byte and in both directions."""

from __future__ import annotations

import jwt
import pytest

from oauth import rfc9068

SECRET = "s" * 40
CLAIMS = {
    "sub": "7",
    "aud": "https://id.example/oauth",
    "iss": "https://id.example/oauth",
    "iat": 1_700_000_000,
    "exp": 1_700_003_600,
    "client_id": "c-1",
    "scope": "openid email",
    "jti": "j-1",
    "email": "zoë@example.com",
}


def test_signed_token_is_the_compact_jws_pyjwt_makes():
    assert rfc9068.sign(CLAIMS, SECRET) == jwt.encode(
        CLAIMS, SECRET, algorithm="HS256", headers={"typ": "at+jwt"}
    )


def test_pyjwt_verifies_the_token_and_a_wrong_key_fails():
    token = rfc9068.sign(CLAIMS, SECRET)
    assert jwt.get_unverified_header(token) == {"alg": "HS256", "typ": "at+jwt"}
    assert (
        jwt.decode(
            token,
            SECRET,
            algorithms=["HS256"],
            audience=CLAIMS["aud"],
            options={"verify_exp": False},
        )
        == CLAIMS
    )
    with pytest.raises(jwt.InvalidSignatureError):
        jwt.decode(token, "t" * 40, algorithms=["HS256"], options={"verify_aud": False})


def test_each_secret_keys_its_own_signature():
    assert rfc9068.sign(CLAIMS, SECRET) != rfc9068.sign(CLAIMS, "u" * 40)
    assert rfc9068.decode(rfc9068.sign(CLAIMS, SECRET), SECRET, verify_exp=False, now=0) == CLAIMS
