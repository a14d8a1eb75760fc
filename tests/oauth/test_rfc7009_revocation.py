"""RFC 7009 revocation and RFC 7662 introspection, with Authlib's client."""

from __future__ import annotations

import pytest
from authlib.integrations.base_client import OAuthError as AuthlibOAuthError

from tests.oauth.conftest import OAuthServer
from tests.oauth.host import TestHost


async def test_revoking_a_refresh_token_revokes_its_chain(
    oauth_server: OAuthServer, host: TestHost
):
    client = await oauth_server.create_client()
    async with oauth_server.oauth_client(client) as oauth:
        first = await oauth_server.tokens(oauth)
        second = await oauth.refresh_token(
            oauth_server.url("/token"), refresh_token=first["refresh_token"]
        )
        resp = await oauth.revoke_token(
            oauth_server.url("/revoke"),
            token=second["refresh_token"],
            token_type_hint="refresh_token",
        )
        assert resp.status_code == 200
        with pytest.raises(AuthlibOAuthError):
            await oauth.refresh_token(
                oauth_server.url("/token"), refresh_token=second["refresh_token"]
            )
        info = await oauth.introspect_token(
            oauth_server.url("/introspect"), token=second["access_token"]
        )
    assert info.json() == {"active": False}
    assert "oauth.token.revoked" in host.event_names()


async def test_access_token_revocation_by_jti_shows_in_introspection(
    oauth_server: OAuthServer,
):
    client = await oauth_server.create_client()
    async with oauth_server.oauth_client(client) as oauth:
        tokens = await oauth_server.tokens(oauth)
        before = await oauth.introspect_token(
            oauth_server.url("/introspect"), token=tokens["access_token"]
        )
        assert before.json()["active"] is True
        assert before.json()["client_id"] == client["client_id"]
        assert before.json()["scope"] == "openid email"
        resp = await oauth.revoke_token(
            oauth_server.url("/revoke"),
            token=tokens["access_token"],
            token_type_hint="access_token",
        )
        assert resp.status_code == 200
        after = await oauth.introspect_token(
            oauth_server.url("/introspect"), token=tokens["access_token"]
        )
        assert after.json() == {"active": False}
        # The refresh token of the same grant is untouched.
        assert await oauth.refresh_token(
            oauth_server.url("/token"), refresh_token=tokens["refresh_token"]
        )


@pytest.mark.parametrize("token", ["unknown-token", "a.b.c"])
async def test_unknown_tokens_answer_200(oauth_server: OAuthServer, token: str):
    client = await oauth_server.create_client()
    async with oauth_server.oauth_client(client) as oauth:
        resp = await oauth.revoke_token(oauth_server.url("/revoke"), token=token)
    assert resp.status_code == 200


async def test_revoking_twice_answers_200(oauth_server: OAuthServer):
    client = await oauth_server.create_client(public=True)
    async with oauth_server.oauth_client(client) as oauth:
        tokens = await oauth_server.tokens(oauth)
        for _ in range(2):
            resp = await oauth.revoke_token(
                oauth_server.url("/revoke"), token=tokens["refresh_token"]
            )
            assert resp.status_code == 200


async def test_a_client_cannot_revoke_another_clients_tokens(oauth_server: OAuthServer):
    mine = await oauth_server.create_client()
    other = await oauth_server.create_client()
    async with oauth_server.oauth_client(mine) as oauth:
        tokens = await oauth_server.tokens(oauth)
    async with oauth_server.oauth_client(other) as intruder:
        for token in (tokens["refresh_token"], tokens["access_token"]):
            resp = await intruder.revoke_token(oauth_server.url("/revoke"), token=token)
            assert resp.status_code == 400
            assert resp.json()["error"] == "invalid_grant"
    async with oauth_server.oauth_client(mine) as oauth:
        assert await oauth.refresh_token(
            oauth_server.url("/token"), refresh_token=tokens["refresh_token"]
        )


async def test_revocation_with_wrong_credentials_is_401(oauth_server: OAuthServer):
    client = await oauth_server.create_client()
    resp = await oauth_server.form(
        "/revoke", {"token": "x"}, auth=(client["client_id"], "wrong-secret")
    )
    assert resp.status_code == 401
    assert resp.json()["error"] == "invalid_client"


async def test_revocation_is_open_to_the_token_holder(oauth_server: OAuthServer):
    client = await oauth_server.create_client()
    async with oauth_server.oauth_client(client) as oauth:
        tokens = await oauth_server.tokens(oauth)
    resp = await oauth_server.form("/revoke", {"token": tokens["refresh_token"]})
    assert resp.status_code == 200
    async with oauth_server.oauth_client(client) as oauth:
        with pytest.raises(AuthlibOAuthError):
            await oauth.refresh_token(
                oauth_server.url("/token"), refresh_token=tokens["refresh_token"]
            )


async def test_unknown_token_type_hint_is_refused(oauth_server: OAuthServer):
    resp = await oauth_server.form("/revoke", {"token": "x", "token_type_hint": "id_token"})
    assert resp.status_code == 400
    assert resp.json()["error"] == "unsupported_token_type"


async def test_missing_token_is_invalid_request(oauth_server: OAuthServer):
    resp = await oauth_server.form("/revoke", {})
    assert resp.status_code == 400
    assert resp.json()["error"] == "invalid_request"


# --- RFC 7662 -----------------------------------------------------------------


async def test_introspection_needs_a_confidential_client(oauth_server: OAuthServer):
    public = await oauth_server.create_client(public=True)
    async with oauth_server.oauth_client(public) as oauth:
        tokens = await oauth_server.tokens(oauth)
    resp = await oauth_server.form(
        "/introspect", {"token": tokens["access_token"], "client_id": public["client_id"]}
    )
    assert resp.status_code == 401
    assert resp.json()["error"] == "invalid_client"
    resp = await oauth_server.form("/introspect", {"token": tokens["access_token"]})
    assert resp.status_code == 401


async def test_a_resource_server_introspects_any_clients_access_token(
    oauth_server: OAuthServer,
):
    app = await oauth_server.create_client(public=True)
    resource_server = await oauth_server.create_client()
    async with oauth_server.oauth_client(app) as oauth:
        tokens = await oauth_server.tokens(oauth)
    async with oauth_server.oauth_client(resource_server) as rs:
        info = (
            await rs.introspect_token(oauth_server.url("/introspect"), token=tokens["access_token"])
        ).json()
        assert info["active"] is True
        assert info["client_id"] == app["client_id"]
        assert info["sub"] == "1"
        assert info["iss"] == oauth_server.issuer
        # Refresh tokens are only described to the client holding them.
        other = await rs.introspect_token(
            oauth_server.url("/introspect"), token=tokens["refresh_token"]
        )
        assert other.json() == {"active": False}


async def test_introspecting_own_refresh_token(oauth_server: OAuthServer):
    client = await oauth_server.create_client()
    async with oauth_server.oauth_client(client) as oauth:
        tokens = await oauth_server.tokens(oauth)
        info = (
            await oauth.introspect_token(
                oauth_server.url("/introspect"), token=tokens["refresh_token"]
            )
        ).json()
    assert info["active"] is True
    assert info["token_type"] == "refresh_token"
    assert info["scope"] == "openid email"


async def test_expired_access_token_is_inactive(oauth_server: OAuthServer, clock):
    client = await oauth_server.create_client()
    async with oauth_server.oauth_client(client) as oauth:
        tokens = await oauth_server.tokens(oauth)
        clock.advance(3601)
        info = await oauth.introspect_token(
            oauth_server.url("/introspect"), token=tokens["access_token"]
        )
    assert info.json() == {"active": False}


async def test_forged_access_token_is_inactive(oauth_server: OAuthServer):
    import jwt

    client = await oauth_server.create_client()
    forged = jwt.encode(
        {"client_id": client["client_id"], "scope": "openid", "jti": "x", "exp": 4102444800},
        "not-the-secret-" + "y" * 40,
        algorithm="HS256",
        headers={"typ": "at+jwt"},
    )
    async with oauth_server.oauth_client(client) as oauth:
        info = await oauth.introspect_token(oauth_server.url("/introspect"), token=forged)
    assert info.json() == {"active": False}
