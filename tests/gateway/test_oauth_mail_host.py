"""The OAuth server hosted by mail's accounts, walked through the whole gateway over HTTP.

A signed-in mail account (svc_session cookie) consents; the instance owner
administers clients; tokens carry the account's sub, email and name.
"""

from __future__ import annotations

import base64
import hashlib
from datetime import UTC, datetime
from urllib.parse import parse_qs, urlsplit

import aiohttp
import jwt
import pytest

from common.clock import ManualClock
from tests.conftest import TEST_SECRET
from tests.mail.factories import cookie, make_account, make_session, signed_in

REDIRECT_URI = "https://client.example/callback"
VERIFIER = "a-pkce-code-verifier-that-is-long-enough-0123456789"
CHALLENGE = (
    base64.urlsafe_b64encode(hashlib.sha256(VERIFIER.encode()).digest()).rstrip(b"=").decode()
)
ISSUER = "http://localhost:4300/oauth"


@pytest.fixture
def clock() -> ManualClock:
    # Real "now", so PyJWT (which reads the machine clock) agrees with the server.
    return ManualClock(datetime.now(UTC).replace(microsecond=0))


async def _create_client(client, headers) -> dict:
    resp = await client.post(
        "/admin/oauth/clients",
        json={
            "name": "Mail app",
            "public": False,
            "allowed_scopes": ["openid", "profile", "email"],
            "redirect_uris": [REDIRECT_URI],
        },
        headers=headers,
    )
    assert resp.status == 201, await resp.text()
    return await resp.json()


def _authorize_query(client_id: str) -> dict[str, str]:
    return {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT_URI,
        "scope": "openid email",
        "state": "s-123",
        "code_challenge": CHALLENGE,
        "code_challenge_method": "S256",
    }


async def test_authorization_code_flow_with_pkce_as_a_mail_account(gateway_client, runtime):
    client = gateway_client
    owner, owner_headers = await signed_in(runtime, is_owner=True)
    oauth_client = await _create_client(client, owner_headers)
    basic = (oauth_client["client_id"], oauth_client["client_secret"])

    user = await make_account(runtime, email_address="una@example.com", name="Una")
    headers = cookie(await make_session(runtime, user))
    query = _authorize_query(oauth_client["client_id"])

    info = await client.get("/oauth/authorize/info", params=query, headers=headers)
    assert info.status == 200, await info.text()
    assert (await info.json())["client"]["name"] == "Mail app"

    approve = await client.post("/oauth/authorize/approve", json=query, headers=headers)
    assert approve.status == 200, await approve.text()
    redirect = urlsplit((await approve.json())["redirect_url"])
    params = parse_qs(redirect.query)
    assert params["state"] == ["s-123"]
    code = params["code"][0]

    auth = aiohttp.BasicAuth(*basic)
    token = await client.post(
        "/oauth/token",
        data={
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": REDIRECT_URI,
            "code_verifier": VERIFIER,
        },
        auth=auth,
    )
    assert token.status == 200, await token.text()
    tokens = await token.json()
    claims = jwt.decode(
        tokens["access_token"], TEST_SECRET, algorithms=["HS256"], audience=ISSUER, issuer=ISSUER
    )
    assert (claims["sub"], claims["email"], claims["name"]) == (
        str(user.number),
        "una@example.com",
        "Una",
    )
    assert claims["sub"] != str(owner.number)

    refreshed = await client.post(
        "/oauth/token",
        data={"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]},
        auth=auth,
    )
    assert refreshed.status == 200, await refreshed.text()
    new_tokens = await refreshed.json()
    assert new_tokens["refresh_token"] != tokens["refresh_token"]

    revoked = await client.post(
        "/oauth/revoke", data={"token": new_tokens["refresh_token"]}, auth=auth
    )
    assert revoked.status == 200
    after = await client.post(
        "/oauth/token",
        data={"grant_type": "refresh_token", "refresh_token": new_tokens["refresh_token"]},
        auth=auth,
    )
    assert after.status == 400
    assert (await after.json())["error"] == "invalid_grant"


async def test_consent_needs_a_live_mail_session(gateway_client, runtime):
    client = gateway_client
    _, owner_headers = await signed_in(runtime, is_owner=True)
    oauth_client = await _create_client(client, owner_headers)
    query = _authorize_query(oauth_client["client_id"])

    assert (await client.get("/oauth/authorize/info", params=query)).status == 401
    _, headers = await signed_in(runtime)
    assert (await client.get("/oauth/authorize/info", params=query, headers=headers)).status == 200
    # Logout on the mail side ends it here on the very next request.
    assert (await client.post("/api/auth/logout", headers=headers)).status == 204
    assert (await client.get("/oauth/authorize/info", params=query, headers=headers)).status == 401
    # A cross-site approve is refused even with a live cookie.
    _, headers = await signed_in(runtime)
    forged = await client.post(
        "/oauth/authorize/approve",
        json=query,
        headers={**headers, "Origin": "https://evil.example"},
    )
    assert forged.status == 401
    # An Authorization header no route here accepts does not exempt it from the check.
    forged = await client.post(
        "/oauth/authorize/approve",
        json=query,
        headers={**headers, "Origin": "https://evil.example", "Authorization": "Basic eDp5"},
    )
    assert forged.status == 401


async def test_only_the_instance_owner_administers_clients(gateway_client, runtime):
    _, member = await signed_in(runtime)
    assert (await gateway_client.get("/admin/oauth/clients")).status == 401
    assert (await gateway_client.get("/admin/oauth/clients", headers=member)).status == 403
    _, owner = await signed_in(runtime, is_owner=True)
    assert (await gateway_client.get("/admin/oauth/clients", headers=owner)).status == 200
