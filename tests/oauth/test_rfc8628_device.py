"""RFC 8628 device authorization grant, polled with Authlib's client."""

from __future__ import annotations

import re

import jwt
import pytest
from authlib.integrations.base_client import OAuthError as AuthlibOAuthError

from oauth import new_user_code, normalize_user_code
from oauth.rfc8628 import USER_CODE_ALPHABET
from tests.conftest import TEST_SECRET
from tests.oauth.conftest import ALICE, BOB, OAuthServer
from tests.oauth.host import USER_HEADER, TestHost

DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
USER_CODE_RE = re.compile(rf"^[{USER_CODE_ALPHABET}]{{4}}-[{USER_CODE_ALPHABET}]{{4}}$")


async def start_device(srv: OAuthServer, client: dict, scope: str = "openid email") -> dict:
    auth = (client["client_id"], client["client_secret"]) if "client_secret" in client else None
    data = {"scope": scope}
    if auth is None:
        data["client_id"] = client["client_id"]
    resp = await srv.form("/device/authorize", data, auth=auth)
    assert resp.status_code == 200, resp.text
    return resp.json()


async def poll(srv: OAuthServer, client: dict, device_code: str):
    return await srv.form(
        "/token",
        {"grant_type": DEVICE_GRANT, "device_code": device_code, "client_id": client["client_id"]},
    )


async def decide(srv: OAuthServer, user_code: str, *, approve: bool = True, user: int = ALICE):
    return await srv.http.post(
        srv.url("/device/approve" if approve else "/device/deny"),
        json={"user_code": user_code},
        headers={USER_HEADER: str(user)},
    )


def test_user_codes_use_the_consonant_alphabet_and_normalize():
    codes = {new_user_code() for _ in range(50)}
    assert len(codes) == 50
    assert all(USER_CODE_RE.match(c) for c in codes)
    assert normalize_user_code(" bcdf-ghjk ") == "BCDFGHJK"
    assert normalize_user_code("BCDF GHJK") == "BCDFGHJK"


async def test_device_authorization_response(oauth_server: OAuthServer):
    client = await oauth_server.create_client(public=True)
    body = await start_device(oauth_server, client)
    assert USER_CODE_RE.match(body["user_code"])
    assert body["verification_uri"] == oauth_server.base_url + "/pair"
    assert body["verification_uri_complete"] == (
        f"{oauth_server.base_url}/pair?user_code={body['user_code']}"
    )
    assert body["expires_in"] == 600
    assert body["interval"] == 5
    assert len(body["device_code"]) >= 43


async def test_full_device_flow_with_authlib(oauth_server: OAuthServer, clock, host: TestHost):
    client = await oauth_server.create_client(public=True)
    started = await start_device(oauth_server, client)
    info = await oauth_server.http.get(
        oauth_server.url("/device/info"),
        params={"user_code": started["user_code"].lower().replace("-", " ")},
        headers={USER_HEADER: str(ALICE)},
    )
    assert info.status_code == 200
    assert info.json()["client"]["client_id"] == client["client_id"]
    assert info.json()["scopes"] == ["openid", "email"]
    assert info.json()["status"] == "pending"
    resp = await decide(oauth_server, started["user_code"].lower())
    assert resp.status_code == 200
    assert resp.json()["status"] == "approved"
    async with oauth_server.oauth_client(client, "none") as oauth:
        token = await oauth.fetch_token(
            oauth_server.url("/token"), grant_type=DEVICE_GRANT, device_code=started["device_code"]
        )
        claims = jwt.decode(
            token["access_token"],
            TEST_SECRET,
            algorithms=["HS256"],
            audience=oauth_server.issuer,
        )
        assert claims["sub"] == str(ALICE)
        assert claims["scope"] == "openid email"
        # Exchanged once, then gone.
        clock.advance(10)
        with pytest.raises(AuthlibOAuthError) as err:
            await oauth.fetch_token(
                oauth_server.url("/token"),
                grant_type=DEVICE_GRANT,
                device_code=started["device_code"],
            )
        assert err.value.error == "invalid_grant"
        refreshed = await oauth.refresh_token(
            oauth_server.url("/token"), refresh_token=token["refresh_token"]
        )
    assert refreshed["access_token"]
    assert "oauth.device.approved" in host.event_names()


async def test_polling_pending_and_slow_down_grows_the_interval(oauth_server: OAuthServer, clock):
    client = await oauth_server.create_client(public=True)
    started = await start_device(oauth_server, client)
    first = await poll(oauth_server, client, started["device_code"])
    assert first.status_code == 400
    assert first.json()["error"] == "authorization_pending"
    clock.advance(2)
    fast = await poll(oauth_server, client, started["device_code"])
    assert fast.json()["error"] == "slow_down"
    # The interval is now 10 s and stays so: 6 s later is still too fast.
    clock.advance(6)
    assert (await poll(oauth_server, client, started["device_code"])).json()["error"] == "slow_down"
    # Now 15 s. Waiting that long is fine.
    clock.advance(15)
    assert (await poll(oauth_server, client, started["device_code"])).json()[
        "error"
    ] == "authorization_pending"
    clock.advance(15)
    assert (await poll(oauth_server, client, started["device_code"])).json()[
        "error"
    ] == "authorization_pending"
    interval = await oauth_server.config.db.fetch_val(
        "SELECT poll_interval FROM oauth.oauth_device_codes"
    )
    assert interval == 15


async def test_denied_device_code_answers_access_denied(oauth_server: OAuthServer, host):
    client = await oauth_server.create_client(public=True)
    started = await start_device(oauth_server, client)
    resp = await decide(oauth_server, started["user_code"], approve=False)
    assert resp.status_code == 200
    assert resp.json()["status"] == "denied"
    answer = await poll(oauth_server, client, started["device_code"])
    assert answer.status_code == 400
    assert answer.json()["error"] == "access_denied"
    assert "oauth.device.denied" in host.event_names()


async def test_expired_device_code(oauth_server: OAuthServer, clock):
    client = await oauth_server.create_client(public=True)
    started = await start_device(oauth_server, client)
    clock.advance(601)
    answer = await poll(oauth_server, client, started["device_code"])
    assert answer.status_code == 400
    assert answer.json()["error"] == "expired_token"
    assert (await decide(oauth_server, started["user_code"])).status_code == 404
    info = await oauth_server.http.get(
        oauth_server.url("/device/info"),
        params={"user_code": started["user_code"]},
        headers={USER_HEADER: str(ALICE)},
    )
    assert info.status_code == 404


async def test_approved_but_expired_code_cannot_be_exchanged(oauth_server: OAuthServer, clock):
    client = await oauth_server.create_client(public=True)
    started = await start_device(oauth_server, client)
    await decide(oauth_server, started["user_code"])
    clock.advance(601)
    answer = await poll(oauth_server, client, started["device_code"])
    assert answer.json()["error"] == "expired_token"


async def test_a_code_is_answered_once(oauth_server: OAuthServer):
    client = await oauth_server.create_client(public=True)
    started = await start_device(oauth_server, client)
    assert (await decide(oauth_server, started["user_code"])).status_code == 200
    again = await decide(oauth_server, started["user_code"], approve=False, user=BOB)
    assert again.status_code == 400
    assert again.json()["error"] == "invalid_request"


async def test_device_code_is_bound_to_its_client(oauth_server: OAuthServer):
    client = await oauth_server.create_client(public=True)
    other = await oauth_server.create_client(public=True)
    started = await start_device(oauth_server, client)
    await decide(oauth_server, started["user_code"])
    answer = await poll(oauth_server, other, started["device_code"])
    assert answer.json()["error"] == "invalid_grant"
    assert (await poll(oauth_server, client, started["device_code"])).status_code == 200


async def test_pairing_routes_need_a_user_and_a_real_code(oauth_server: OAuthServer):
    client = await oauth_server.create_client(public=True)
    started = await start_device(oauth_server, client)
    resp = await oauth_server.http.post(
        oauth_server.url("/device/approve"), json={"user_code": started["user_code"]}
    )
    assert resp.status_code == 401
    assert (await decide(oauth_server, "BCDF-GHJK")).status_code == 404
    assert (await decide(oauth_server, "not a code")).status_code == 404


async def test_confidential_client_must_authenticate_to_start(oauth_server: OAuthServer):
    client = await oauth_server.create_client()
    resp = await oauth_server.form("/device/authorize", {"client_id": client["client_id"]})
    assert resp.status_code == 401
    assert resp.json()["error"] == "invalid_client"
    body = await start_device(oauth_server, client)
    assert body["device_code"]


async def test_device_scope_must_be_allowed(oauth_server: OAuthServer):
    client = await oauth_server.create_client(public=True, scopes=("openid",))
    resp = await oauth_server.form(
        "/device/authorize", {"client_id": client["client_id"], "scope": "openid email"}
    )
    assert resp.status_code == 400
    assert resp.json()["error"] == "invalid_scope"


async def test_verification_uri_comes_from_the_host(start_oauth):
    srv = await start_oauth(build_verification_uri=lambda request: "https://example.com/activate")
    client = await srv.create_client(public=True)
    body = await start_device(srv, client)
    assert body["verification_uri"] == "https://example.com/activate"
    assert body["verification_uri_complete"].startswith("https://example.com/activate?user_code=")


async def test_user_code_entry_is_rate_limited_per_user(oauth_server: OAuthServer, clock):
    client = await oauth_server.create_client(public=True)
    started = await start_device(oauth_server, client)
    for _ in range(30):
        assert (await decide(oauth_server, "BCDF-GHJK")).status_code == 404
    blocked = await decide(oauth_server, started["user_code"])
    assert blocked.status_code == 429
    assert blocked.json()["error"] == "slow_down"
    assert "Retry-After" in blocked.headers
    # Another user is not affected, and the window passes.
    assert (await decide(oauth_server, "BCDF-GHJK", user=BOB)).status_code == 404
    clock.advance(600)
    fresh = await start_device(oauth_server, client)
    assert (await decide(oauth_server, fresh["user_code"])).status_code == 200


async def test_device_authorization_is_rate_limited_per_address(oauth_server: OAuthServer, clock):
    client = await oauth_server.create_client(public=True)
    clock.advance(60 - clock.now().timestamp() % 60)  # the start of a window
    for _ in range(60):
        await start_device(oauth_server, client)
    resp = await oauth_server.form("/device/authorize", {"client_id": client["client_id"]})
    assert resp.status_code == 429
    assert resp.json()["error"] == "slow_down"
    clock.advance(60)
    assert (await start_device(oauth_server, client))["device_code"]
