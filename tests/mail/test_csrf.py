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
        # PUBLIC_URL is http://localhost:4300: another scheme or port is another origin.
        {"Origin": "https://localhost:4300"},
        {"Origin": "http://localhost:4301"},
        {"Referer": "https://localhost:4300/settings"},
        # A header the API does not read as its key exempts nothing (a Bearer one is
        # the sending API's key: test_a_junk_bearer_key_with_the_cookie_is_refused_too).
        {"Authorization": "Basic Zm9vOmJhcg==", "Origin": "https://evil.example"},
        {"Authorization": "Token junk", "Referer": "https://evil.example/"},
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


async def test_reads_are_not_checked(client, runtime):
    _, auth = await signed_in(runtime)
    resp = await client.get("/api/auth/me", headers={**auth, "Origin": "https://evil.example"})
    assert resp.status == 200


async def test_the_request_own_origin_counts_with_its_scheme(client, runtime):
    _, auth = await signed_in(runtime)
    own = f"{client.host}:{client.port}"
    resp = await client.patch(PATCH[0], json=PATCH[1], headers={**auth, "Origin": f"https://{own}"})
    assert resp.status == 403
    resp = await client.patch(PATCH[0], json=PATCH[1], headers={**auth, "Origin": f"http://{own}"})
    assert resp.status == 200


async def test_a_json_body_sent_as_text_plain_is_not_parsed(client, runtime):
    # text/plain is what a cross-site form or no-cors fetch can send without a preflight.
    account, auth = await signed_in(runtime)
    resp = await client.patch(
        PATCH[0],
        data='{"name": "Mallory was here"}',
        headers={**auth, "Content-Type": "text/plain"},
    )
    assert resp.status == 400
    assert (await resp.json())["name"] == "validation_error"
    me = await (await client.get("/api/auth/me", headers=auth)).json()
    assert me["name"] == account.name


async def test_trusted_origins_setting(make_client, runtime):
    client = await make_client({"TRUSTED_ORIGINS": "https://panel.example.com"})
    _, auth = await signed_in(runtime)
    resp = await client.patch(
        PATCH[0], json=PATCH[1], headers={**auth, "Origin": "https://panel.example.com"}
    )
    assert resp.status == 200


async def test_a_junk_bearer_key_with_the_cookie_is_refused_too(client, runtime):
    # A Bearer header on /api/ is an API key (the sending API): it replaces the
    # cookie, so a forged one cannot ride on the session; a bad one is refused.
    _, auth = await signed_in(runtime)
    headers = {**auth, "Authorization": "Bearer junk", "Origin": "https://evil.example"}
    resp = await client.patch(PATCH[0], json=PATCH[1], headers=headers)
    assert resp.status == 403
    assert (await resp.json())["name"] == "invalid_api_key"
