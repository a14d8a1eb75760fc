"""RFC 6749 4.1 + RFC 7636 + RFC 9207 + RFC 9068, driven by Authlib's client."""

from __future__ import annotations

import httpx
import jwt
import pytest
from authlib.integrations.base_client import OAuthError as AuthlibOAuthError

from tests.conftest import TEST_SECRET
from tests.oauth.conftest import ALICE, REDIRECT_URI, VERIFIER, OAuthServer
from tests.oauth.host import USER_HEADER, TestHost


def decode_access_token(token: str, issuer: str) -> dict:
    """Verify with PyJWT, independently of the server's code."""
    header = jwt.get_unverified_header(token)
    assert header["typ"] == "at+jwt"
    assert header["alg"] == "HS256"
    return jwt.decode(token, TEST_SECRET, algorithms=["HS256"], audience=issuer, issuer=issuer)


@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post"])
async def test_confidential_client_gets_verifiable_tokens(oauth_server: OAuthServer, method: str):
    client = await oauth_server.create_client()
    async with oauth_server.oauth_client(client, method) as oauth:
        token = await oauth_server.tokens(oauth, scope="openid email")
    assert token["token_type"] == "Bearer"
    assert token["expires_in"] == 3600
    assert token["scope"] == "openid email"
    claims = decode_access_token(token["access_token"], oauth_server.issuer)
    assert claims["client_id"] == client["client_id"]
    assert claims["scope"] == "openid email"
    assert claims["sub"] == str(ALICE)
    assert claims["email"] == "alice@example.com"
    # The host tried to set these; the server's own values win.
    assert claims["jti"] != "host-jti"
    assert claims["exp"] - claims["iat"] == 3600
    assert token["refresh_token"]


async def test_public_client_uses_pkce_alone(oauth_server: OAuthServer):
    client = await oauth_server.create_client(public=True)
    assert "client_secret" not in client
    async with oauth_server.oauth_client(client, "none") as oauth:
        token = await oauth_server.tokens(oauth)
    assert (
        decode_access_token(token["access_token"], oauth_server.issuer)["client_id"]
        == (client["client_id"])
    )


async def test_approve_redirect_carries_code_state_and_iss(oauth_server: OAuthServer):
    client = await oauth_server.create_client()
    async with oauth_server.oauth_client(client) as oauth:
        url, state = oauth.create_authorization_url(
            oauth_server.url("/authorize"), code_verifier=VERIFIER, scope="openid"
        )
        resp = await oauth_server.consent(url)
    redirect = httpx.URL(resp.json()["redirect_url"])
    assert str(redirect).startswith(REDIRECT_URI + "?")
    assert redirect.params["state"] == state
    assert redirect.params["iss"] == oauth_server.issuer
    assert redirect.params["code"]


async def test_info_describes_client_and_scopes(oauth_server: OAuthServer):
    client = await oauth_server.create_client()
    async with oauth_server.oauth_client(client) as oauth:
        url, state = oauth.create_authorization_url(
            oauth_server.url("/authorize"), code_verifier=VERIFIER, scope="openid email"
        )
    resp = await oauth_server.http.get(
        oauth_server.url("/authorize/info"),
        params=dict(httpx.URL(url).params),
        headers={USER_HEADER: str(ALICE)},
    )
    assert resp.status_code == 200
    body = resp.json()
    assert body["client"]["client_id"] == client["client_id"]
    assert body["client"]["name"] == "Test client"
    assert body["scopes"] == ["openid", "email"]
    assert body["state"] == state


async def test_deny_returns_error_redirect(oauth_server: OAuthServer):
    client = await oauth_server.create_client()
    async with oauth_server.oauth_client(client) as oauth:
        url, state = oauth.create_authorization_url(
            oauth_server.url("/authorize"), code_verifier=VERIFIER
        )
    resp = await oauth_server.consent(url, approve=False)
    assert resp.status_code == 200
    params = httpx.URL(resp.json()["redirect_url"]).params
    assert params["error"] == "access_denied"
    assert params["state"] == state
    assert params["iss"] == oauth_server.issuer
    assert "code" not in params


def authorize_params(client: dict, **overrides: str | None) -> dict[str, str]:
    from oauth.rfc7636 import s256_challenge

    params: dict[str, str | None] = {
        "client_id": client["client_id"],
        "redirect_uri": REDIRECT_URI,
        "response_type": "code",
        "scope": "openid",
        "state": "xyz",
        "code_challenge": s256_challenge(VERIFIER),
        "code_challenge_method": "S256",
    }
    params.update(overrides)
    return {k: v for k, v in params.items() if v is not None}


@pytest.mark.parametrize(
    ("overrides", "error"),
    [
        ({"code_challenge": None, "code_challenge_method": None}, "invalid_request"),
        ({"code_challenge_method": "plain"}, "invalid_request"),
        ({"code_challenge_method": None}, "invalid_request"),
        ({"code_challenge": "short"}, "invalid_request"),
        ({"response_type": "token"}, "unsupported_response_type"),
        ({"scope": "openid admin"}, "invalid_scope"),
        ({"scope": "mail.send"}, "invalid_scope"),
    ],
)
async def test_authorize_refusals_redirect_back_with_iss(
    oauth_server: OAuthServer, overrides: dict, error: str
):
    client = await oauth_server.create_client()
    for path, call in (("/authorize/info", "get"), ("/authorize/approve", "post")):
        params = authorize_params(client, **overrides)
        if call == "get":
            resp = await oauth_server.http.get(
                oauth_server.url(path), params=params, headers={USER_HEADER: str(ALICE)}
            )
        else:
            resp = await oauth_server.http.post(
                oauth_server.url(path), json=params, headers={USER_HEADER: str(ALICE)}
            )
        assert resp.status_code == 400, resp.text
        body = resp.json()
        assert body["error"] == error
        back = httpx.URL(body["redirect_url"]).params
        assert back["error"] == error
        assert back["state"] == "xyz"
        assert back["iss"] == oauth_server.issuer


@pytest.mark.parametrize(
    "redirect_uri",
    [
        REDIRECT_URI + "x",
        REDIRECT_URI[:-1],
        REDIRECT_URI + "/",
        REDIRECT_URI.upper(),
        REDIRECT_URI + "?a=1",
        "https://evil.example/callback",
    ],
)
async def test_redirect_uri_must_match_exactly_and_is_never_redirected_to(
    oauth_server: OAuthServer, redirect_uri: str
):
    client = await oauth_server.create_client()
    resp = await oauth_server.http.get(
        oauth_server.url("/authorize/info"),
        params=authorize_params(client, redirect_uri=redirect_uri),
        headers={USER_HEADER: str(ALICE)},
    )
    assert resp.status_code == 400
    assert set(resp.json()) == {"error", "error_description"}
    assert resp.json()["error"] == "invalid_request"


async def test_unknown_client_is_refused_without_redirect(oauth_server: OAuthServer):
    resp = await oauth_server.http.get(
        oauth_server.url("/authorize/info"),
        params=authorize_params({"client_id": "nope"}),
        headers={USER_HEADER: str(ALICE)},
    )
    assert resp.status_code == 400
    assert "redirect_url" not in resp.json()


async def test_consent_routes_need_a_signed_in_user(oauth_server: OAuthServer):
    client = await oauth_server.create_client()
    resp = await oauth_server.http.get(
        oauth_server.url("/authorize/info"), params=authorize_params(client)
    )
    assert resp.status_code == 401
    assert resp.json()["error"] == "login_required"
    resp = await oauth_server.http.post(
        oauth_server.url("/authorize/approve"), json=authorize_params(client)
    )
    assert resp.status_code == 401


async def test_wrong_verifier_is_invalid_grant(oauth_server: OAuthServer):
    client = await oauth_server.create_client()
    async with oauth_server.oauth_client(client) as oauth:
        redirect_url = await oauth_server.authorize(oauth, VERIFIER)
        with pytest.raises(AuthlibOAuthError) as err:
            await oauth.fetch_token(
                oauth_server.url("/token"),
                authorization_response=redirect_url,
                code_verifier="w" * 50,
            )
    assert err.value.error == "invalid_grant"


async def test_missing_verifier_is_invalid_request(oauth_server: OAuthServer):
    client = await oauth_server.create_client()
    async with oauth_server.oauth_client(client) as oauth:
        redirect_url = await oauth_server.authorize(oauth, VERIFIER)
    code = httpx.URL(redirect_url).params["code"]
    resp = await oauth_server.form(
        "/token",
        {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT_URI},
        auth=(client["client_id"], client["client_secret"]),
    )
    assert resp.status_code == 400
    assert resp.json()["error"] == "invalid_request"


async def test_token_redirect_uri_off_by_one_is_invalid_grant(oauth_server: OAuthServer):
    client = await oauth_server.create_client()
    async with oauth_server.oauth_client(client) as oauth:
        redirect_url = await oauth_server.authorize(oauth, VERIFIER)
    code = httpx.URL(redirect_url).params["code"]
    resp = await oauth_server.form(
        "/token",
        {
            "grant_type": "authorization_code",
            "code": code,
            "code_verifier": VERIFIER,
            "redirect_uri": REDIRECT_URI + "/",
        },
        auth=(client["client_id"], client["client_secret"]),
    )
    assert resp.status_code == 400
    assert resp.json()["error"] == "invalid_grant"
    assert resp.headers["Cache-Control"] == "no-store"


async def test_reused_code_fails_and_revokes_what_the_first_use_issued(
    oauth_server: OAuthServer, host: TestHost
):
    client = await oauth_server.create_client()
    async with oauth_server.oauth_client(client) as oauth:
        redirect_url = await oauth_server.authorize(oauth, VERIFIER)
        first = await oauth.fetch_token(
            oauth_server.url("/token"), authorization_response=redirect_url, code_verifier=VERIFIER
        )
        with pytest.raises(AuthlibOAuthError) as err:
            await oauth.fetch_token(
                oauth_server.url("/token"),
                authorization_response=redirect_url,
                code_verifier=VERIFIER,
            )
        assert err.value.error == "invalid_grant"
        with pytest.raises(AuthlibOAuthError) as err:
            await oauth.refresh_token(
                oauth_server.url("/token"), refresh_token=first["refresh_token"]
            )
        assert err.value.error == "invalid_grant"
        info = await oauth.introspect_token(
            oauth_server.url("/introspect"), token=first["access_token"]
        )
    assert info.json() == {"active": False}
    assert "oauth.authorization_code.reuse_detected" in host.event_names()


async def test_expired_code_is_invalid_grant(oauth_server: OAuthServer, clock):
    client = await oauth_server.create_client()
    async with oauth_server.oauth_client(client) as oauth:
        redirect_url = await oauth_server.authorize(oauth, VERIFIER)
        clock.advance(61)
        with pytest.raises(AuthlibOAuthError) as err:
            await oauth.fetch_token(
                oauth_server.url("/token"),
                authorization_response=redirect_url,
                code_verifier=VERIFIER,
            )
    assert err.value.error == "invalid_grant"
    assert "expired" in err.value.description


async def test_code_still_good_at_59_seconds(oauth_server: OAuthServer, clock):
    client = await oauth_server.create_client()
    async with oauth_server.oauth_client(client) as oauth:
        redirect_url = await oauth_server.authorize(oauth, VERIFIER)
        clock.advance(59)
        token = await oauth.fetch_token(
            oauth_server.url("/token"), authorization_response=redirect_url, code_verifier=VERIFIER
        )
    assert token["access_token"]


async def test_code_is_bound_to_its_client(oauth_server: OAuthServer):
    mine = await oauth_server.create_client()
    other = await oauth_server.create_client()
    async with oauth_server.oauth_client(mine) as oauth:
        redirect_url = await oauth_server.authorize(oauth, VERIFIER)
    async with oauth_server.oauth_client(other) as thief:
        with pytest.raises(AuthlibOAuthError) as err:
            await thief.fetch_token(
                oauth_server.url("/token"),
                authorization_response=redirect_url,
                code_verifier=VERIFIER,
            )
    assert err.value.error == "invalid_grant"


async def test_scope_defaults_to_the_clients_allowed_scopes(oauth_server: OAuthServer):
    client = await oauth_server.create_client(scopes=("openid", "mail.read"))
    async with oauth_server.oauth_client(client) as oauth:
        url, _ = oauth.create_authorization_url(
            oauth_server.url("/authorize"), code_verifier=VERIFIER
        )
        resp = await oauth_server.consent(url)
        token = await oauth.fetch_token(
            oauth_server.url("/token"),
            authorization_response=resp.json()["redirect_url"],
            code_verifier=VERIFIER,
        )
    assert token["scope"] == "openid mail.read"


async def test_a_failed_client_authentication_does_not_consume_the_code(
    oauth_server: OAuthServer,
):
    client = await oauth_server.create_client()
    async with oauth_server.oauth_client(client) as oauth:
        redirect_url = await oauth_server.authorize(oauth, VERIFIER)
    code = httpx.URL(redirect_url).params["code"]
    data = {"grant_type": "authorization_code", "code": code, "code_verifier": VERIFIER}
    wrong = await oauth_server.form("/token", data, auth=(client["client_id"], "wrong"))
    assert wrong.status_code == 401
    right = await oauth_server.form(
        "/token", data, auth=(client["client_id"], client["client_secret"])
    )
    assert right.status_code == 200


async def test_concurrent_exchanges_of_one_code_issue_once_then_burn(
    oauth_server: OAuthServer,
):
    import asyncio

    client = await oauth_server.create_client()
    async with oauth_server.oauth_client(client) as oauth:
        redirect_url = await oauth_server.authorize(oauth, VERIFIER)
    code = httpx.URL(redirect_url).params["code"]
    data = {"grant_type": "authorization_code", "code": code, "code_verifier": VERIFIER}
    responses = await asyncio.gather(
        *(
            oauth_server.form("/token", data, auth=(client["client_id"], client["client_secret"]))
            for _ in range(4)
        )
    )
    assert sorted(r.status_code for r in responses) == [200, 400, 400, 400]
    issued = await oauth_server.config.db.fetch_val(
        "SELECT count(*) FROM oauth.oauth_refresh_tokens"
    )
    live = await oauth_server.config.db.fetch_val(
        "SELECT count(*) FROM oauth.oauth_refresh_tokens WHERE revoked_at IS NULL"
    )
    assert (issued, live) == (1, 0)
