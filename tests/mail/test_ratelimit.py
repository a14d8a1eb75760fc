"""Rate limits: per principal, per IP, sign-in per IP; shared by every process."""

from __future__ import annotations

import ipaddress

from tests.mail.factories import signed_in

LIMIT_HEADERS = ("ratelimit-limit", "ratelimit-remaining", "ratelimit-reset")


async def test_default_is_10_per_second_per_ip_with_headers(make_client, clock):
    client = await make_client()  # the spec's defaults
    statuses = []
    for _ in range(10):
        resp = await client.get("/api/auth/signups")
        statuses.append(resp.status)
    assert statuses == [200] * 10
    assert resp.headers["ratelimit-limit"] == "10"
    assert resp.headers["ratelimit-remaining"] == "0"
    refused = await client.get("/api/auth/signups")
    assert refused.status == 429
    assert await refused.json() == {
        "statusCode": 429,
        "name": "rate_limit_exceeded",
        "message": "too many requests",
    }
    assert {h: refused.headers[h] for h in (*LIMIT_HEADERS, "retry-after")} == {
        "ratelimit-limit": "10",
        "ratelimit-remaining": "0",
        "ratelimit-reset": "1",
        "retry-after": "1",
    }
    clock.advance(1)
    assert (await client.get("/api/auth/signups")).status == 200


async def test_the_setting_and_the_principal(make_client, runtime, clock):
    client = await make_client({"RATE_LIMIT_PER_SECOND": "3"})
    _, alice = await signed_in(runtime)
    _, bob = await signed_in(runtime)
    assert [(await client.get("/api/auth/me", headers=alice)).status for _ in range(4)] == [
        200,
        200,
        200,
        429,
    ]
    # Another account from the same IP has its own budget, and so has the anonymous IP.
    assert (await client.get("/api/auth/me", headers=bob)).status == 200
    assert (await client.get("/api/auth/signups")).status == 200


async def test_sign_in_is_limited_to_5_per_second_per_ip(make_client, clock):
    client = await make_client({"RATE_LIMIT_PER_SECOND": "100"})
    # Incomplete bodies: refused by the handler (422), yet counted as attempts.
    creds = {"email": "nobody@example.com"}
    statuses = [(await client.post("/api/auth/login", json=creds)).status for _ in range(6)]
    assert statuses == [422] * 5 + [429]
    signup = await client.post(
        "/api/auth/signup", json={"email": "x@example.com", "password": "p" * 9}
    )
    assert signup.status == 429
    assert signup.headers["ratelimit-limit"] == "5"
    # Other routes from the same IP are not affected.
    assert (await client.get("/api/auth/signups")).status == 200
    clock.advance(1)
    assert (await client.post("/api/auth/login", json=creds)).status == 422


async def test_two_processes_share_one_budget(make_client):
    """Two app instances, each with its own pool, spend one Postgres-held budget."""
    first = await make_client({"RATE_LIMIT_PER_SECOND": "4"})
    second = await make_client({"RATE_LIMIT_PER_SECOND": "4"})
    statuses = []
    for client in (first, second, first, second, first, second):
        statuses.append((await client.get("/api/auth/signups")).status)
    assert statuses == [200, 200, 200, 200, 429, 429]


async def test_client_ip_comes_through_trusted_proxies_only(make_client, runtime):
    client = await make_client({"RATE_LIMIT_PER_SECOND": "1"})
    # Not trusted: a forged X-Forwarded-For does not buy a fresh budget.
    a = await client.get("/api/auth/signups", headers={"X-Forwarded-For": "203.0.113.1"})
    b = await client.get("/api/auth/signups", headers={"X-Forwarded-For": "203.0.113.2"})
    assert (a.status, b.status) == (200, 429)

    proxied = await make_client(
        {"RATE_LIMIT_PER_SECOND": "1"},
        trusted_proxies=(ipaddress.ip_network("127.0.0.0/8"),),
    )
    c = await proxied.get("/api/auth/signups", headers={"X-Forwarded-For": "203.0.113.3"})
    d = await proxied.get("/api/auth/signups", headers={"X-Forwarded-For": "203.0.113.4"})
    e = await proxied.get("/api/auth/signups", headers={"X-Forwarded-For": "203.0.113.4"})
    assert (c.status, d.status, e.status) == (200, 200, 429)
