"""The spec's exported helpers and constants, in Python names."""

from __future__ import annotations

import oauth
from oauth import (
    ACCESS_TOKEN_TTL_SECONDS,
    AUTH_CODE_TTL_SECONDS,
    DEVICE_CODE_TTL_SECONDS,
    DEVICE_POLL_INTERVAL_SECONDS,
    REFRESH_TOKEN_TTL_SECONDS,
    format_scope,
    includes_scopes,
    is_allowed_redirect,
    parse_scope,
    random_id,
    sha256,
    short_id,
    verify_pkce_s256,
)


def test_constants():
    assert AUTH_CODE_TTL_SECONDS == 60
    assert REFRESH_TOKEN_TTL_SECONDS == 30 * 24 * 3600
    assert DEVICE_CODE_TTL_SECONDS == 600
    assert ACCESS_TOKEN_TTL_SECONDS == 3600
    assert DEVICE_POLL_INTERVAL_SECONDS == 5


def test_pkce_s256_matches_rfc7636_appendix_b():
    verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    assert verify_pkce_s256(verifier, challenge)
    assert not verify_pkce_s256(verifier[:-1] + "l", challenge)
    assert not verify_pkce_s256("short", challenge)


def test_scope_helpers():
    assert parse_scope("openid  email openid") == ["openid", "email"]
    assert parse_scope(None) == []
    assert format_scope(["openid", "email"]) == "openid email"
    assert includes_scopes("openid email", "email")
    assert includes_scopes(["openid", "email"], ["openid", "email"])
    assert not includes_scopes("openid", "openid email")


def test_redirects_match_exactly():
    registered = ["https://a.example/cb", "com.example.app:/cb"]
    assert is_allowed_redirect(registered, "https://a.example/cb")
    assert not is_allowed_redirect(registered, "https://a.example/cb/")
    assert not is_allowed_redirect(registered, "https://a.example/c")
    assert not is_allowed_redirect(registered, "https://a.example/cb?x=1")


def test_ids_and_hash():
    assert len(random_id()) == 43
    assert len(short_id()) == 12
    assert random_id() != random_id()
    assert sha256("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def test_exports():
    for name in (
        "create_app",
        "OAuthConfig",
        "MIGRATIONS",
        "sweep_expired",
        "sweep_authorization_codes",
        "sweep_refresh_tokens",
        "sweep_device_codes",
        "new_user_code",
        "normalize_user_code",
    ):
        assert hasattr(oauth, name)
