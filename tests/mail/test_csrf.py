"""Cross-site request forgery: state-changing browser requests must be same-origin."""

from __future__ import annotations

import pytest

from tests.mail.factories import signed_in

PATCH = ("/api/account", {"name": "Mallory was here"})


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "https://evil.example"},
        {"Origin": "null"},
        {"Referer": "https://evil.example/page"},
        {"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"},
        {"Sec-Fetch-Site": "cross-site"},
    ],
)
async def test_cross_origin_state_change_is_refused(client, runtime, headers):
    account, auth = await signed_in(runtime)
    resp = await client.patch(PATCH[0], json=PATCH[1], headers={**auth, **headers})
    assert resp.status == 403
    assert await resp.json() == {
        "statusCode": 403,
        "name": "forbidden",
        "message": "cross-origin request refused",
    }
    me = await (await client.get("/api/auth/me", headers=auth)).json()
    assert me["name"] == account.name


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://localhost:4300"},  # PUBLIC_URL's origin
        {"Referer": "http://localhost:4300/settings"},
        {"Sec-Fetch-Site": "same-origin"},
        {},  # not a browser: no cookie can ride along cross-site
    ],
)
async def test_same_origin_state_change_passes(client, runtime, headers):
    _, auth = await signed_in(runtime)
    resp = await client.patch(PATCH[0], json=PATCH[1], headers={**auth, **headers})
    assert resp.status == 200
    assert (await resp.json())["name"] == "Mallory was here"


async def test_cross_origin_login_is_refused_too(client):
    resp = await client.post(
        "/api/auth/login",
        json={"email": "a@example.com", "password": "whatever1"},
        headers={"Origin": "https://evil.example"},
    )
    assert resp.status == 403


async def test_reads_and_bearer_requests_are_not_checked(client, runtime):
    _, auth = await signed_in(runtime)
    resp = await client.get("/api/auth/me", headers={**auth, "Origin": "https://evil.example"})
    assert resp.status == 200
    # An Authorization header is not ambient: the check leaves it to the route.
    resp = await client.post(
        "/api/auth/logout",
        headers={"Authorization": "Bearer x", "Origin": "https://evil.example"},
    )
    assert resp.status == 401


async def test_trusted_origins_setting(make_client, runtime):
    client = await make_client({"TRUSTED_ORIGINS": "https://panel.example.com"})
    _, auth = await signed_in(runtime)
    resp = await client.patch(
        PATCH[0], json=PATCH[1], headers={**auth, "Origin": "https://panel.example.com"}
    )
    assert resp.status == 200
