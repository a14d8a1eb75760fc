"""RFC 8414 discovery: both well-known forms, and the gateway's mount of the server."""

from __future__ import annotations

from tests.oauth.conftest import OAuthServer

EXPECTED_KEYS = {
    "issuer",
    "authorization_endpoint",
    "token_endpoint",
    "revocation_endpoint",
    "introspection_endpoint",
    "device_authorization_endpoint",
    "grant_types_supported",
    "response_types_supported",
    "code_challenge_methods_supported",
    "token_endpoint_auth_methods_supported",
    "scopes_supported",
    "authorization_response_iss_parameter_supported",
}


async def test_metadata_at_both_well_known_forms(oauth_server: OAuthServer):
    plain = await oauth_server.http.get(
        oauth_server.base_url + "/.well-known/oauth-authorization-server"
    )
    inserted = await oauth_server.http.get(
        oauth_server.base_url + "/.well-known/oauth-authorization-server/oauth"
    )
    assert plain.status_code == inserted.status_code == 200
    doc = plain.json()
    assert doc == inserted.json()
    assert set(doc) >= EXPECTED_KEYS
    issuer = oauth_server.issuer
    assert doc["issuer"] == issuer
    assert doc["token_endpoint"] == issuer + "/token"
    assert doc["revocation_endpoint"] == issuer + "/revoke"
    assert doc["introspection_endpoint"] == issuer + "/introspect"
    assert doc["device_authorization_endpoint"] == issuer + "/device/authorize"
    assert doc["response_types_supported"] == ["code"]
    assert doc["code_challenge_methods_supported"] == ["S256"]
    assert set(doc["grant_types_supported"]) == {
        "authorization_code",
        "refresh_token",
        "urn:ietf:params:oauth:grant-type:device_code",
    }
    assert set(doc["token_endpoint_auth_methods_supported"]) == {
        "client_secret_basic",
        "client_secret_post",
        "none",
    }
    assert doc["scopes_supported"] == list(oauth_server.config.scopes)
    assert doc["authorization_response_iss_parameter_supported"] is True


async def test_metadata_endpoints_work(oauth_server: OAuthServer):
    """Every advertised endpoint answers (not 404) at the advertised URL."""
    doc = (
        await oauth_server.http.get(
            oauth_server.base_url + "/.well-known/oauth-authorization-server"
        )
    ).json()
    for key in ("token_endpoint", "revocation_endpoint", "introspection_endpoint"):
        resp = await oauth_server.http.post(doc[key], data={})
        assert resp.status_code in (400, 401), key


async def test_authorization_endpoint_is_the_hosts_consent_page(start_oauth):
    srv = await start_oauth(authorization_endpoint="https://app.example/consent")
    doc = (await srv.http.get(srv.base_url + "/.well-known/oauth-authorization-server")).json()
    assert doc["authorization_endpoint"] == "https://app.example/consent"


# --- the gateway's mount -------------------------------------------------------


async def test_gateway_serves_metadata_with_public_url_issuer(gateway_client, settings):
    issuer = settings.public_url + "/oauth"
    for path in (
        "/.well-known/oauth-authorization-server",
        "/.well-known/oauth-authorization-server/oauth",
    ):
        resp = await gateway_client.get(path)
        assert resp.status == 200
        assert (await resp.json())["issuer"] == issuer


async def test_gateway_consent_and_admin_need_a_signed_in_account(gateway_client):
    for method, path in (
        ("GET", "/oauth/authorize/info"),
        ("POST", "/oauth/device/approve"),
        ("GET", "/admin/oauth/clients"),
        ("POST", "/admin/oauth/clients"),
    ):
        resp = await gateway_client.request(method, path)
        assert resp.status == 401, path
        body = await resp.json()
        assert set(body) == {"error", "error_description"}


async def test_gateway_oauth_paths_answer_in_oauth_shape(gateway_client):
    resp = await gateway_client.get("/oauth/token")
    assert resp.status == 405
    assert (await resp.json())["error"] == "method_not_allowed"
    resp = await gateway_client.post("/oauth/token", data={"grant_type": "refresh_token"})
    assert resp.status == 401
    assert (await resp.json())["error"] == "invalid_client"


async def test_only_oauth_serves_at_the_root(service_client):
    client = await service_client("oauth")
    resp = await client.get("/.well-known/oauth-authorization-server")
    assert resp.status == 200
    doc = await resp.json()
    assert doc["token_endpoint"].endswith("/token")
    assert "/oauth/" not in doc["token_endpoint"]
    resp = await client.post("/token", data={})
    assert resp.status == 400
    assert (await resp.json())["error"] == "invalid_request"


async def test_oauth_service_without_accounts_refuses_consent_and_admin(runtime, aiohttp_client):
    from gateway.services import OAuthService

    client = await aiohttp_client(OAuthService(runtime).create_app(prefix="/oauth"))
    for method, path in (("GET", "/oauth/authorize/info"), ("GET", "/admin/oauth/clients")):
        resp = await client.request(method, path, headers={"Cookie": "svc_session=anything"})
        assert resp.status == 401
        assert (await resp.json())["error"] == "login_required"
