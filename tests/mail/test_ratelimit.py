"""Rate limits: a token bucket per principal (10 a second sustained, 20 at once),
sign-in per IP, shared by every process; pages and assets spend none of it."""

from __future__ import annotations

import ipaddress

from aiohttp import web

from common.openapi import is_page
from mail.pages import assets
from tests.mail.factories import signed_in

LIMIT_HEADERS = ("ratelimit-limit", "ratelimit-remaining", "ratelimit-reset", "ratelimit-policy")


async def test_a_burst_of_20_then_429_with_the_specs_headers(make_client, clock):
    client = await make_client()  # the spec's defaults
    statuses = []
    for _ in range(20):
        resp = await client.get("/api/auth/signups")
        statuses.append(resp.status)
    assert statuses == [200] * 20
    assert {h: resp.headers[h] for h in LIMIT_HEADERS} == {
        "ratelimit-limit": "20",
        "ratelimit-remaining": "0",
        # Full again in two seconds, at ten a second.
        "ratelimit-reset": "2",
        "ratelimit-policy": "10;w=1;burst=20",
    }
    refused = await client.get("/api/auth/signups")
    assert refused.status == 429
    assert await refused.json() == {
        "statusCode": 429,
        "name": "rate_limit_exceeded",
        "message": "too many requests",
    }
    assert {h: refused.headers[h] for h in (*LIMIT_HEADERS, "retry-after")} == {
        "ratelimit-limit": "20",
        "ratelimit-remaining": "0",
        "ratelimit-reset": "2",
        "ratelimit-policy": "10;w=1;burst=20",
        # The next request passes in a tenth of a second: whole seconds, rounded up.
        "retry-after": "1",
    }
    clock.advance(1)
    assert (await client.get("/api/auth/signups")).status == 200


async def test_the_sustained_rate_is_10_a_second(make_client, clock):
    client = await make_client()

    async def status() -> int:
        return int((await client.get("/api/auth/signups")).status)

    for _ in range(20):
        assert await status() == 200
    # Emptied: from now on one request every tenth of a second, and no more.
    for _ in range(50):
        assert await status() == 429
        clock.advance(0.1)
        assert await status() == 200
    # Five seconds at 20 a second: half of them refused.
    passed = 0
    for _ in range(100):
        clock.advance(0.05)
        passed += await status() == 200
    assert passed == 50
    # Two quiet seconds refill the whole burst, and no more than it.
    clock.advance(60)
    assert [await status() for _ in range(21)] == [200] * 20 + [429]


async def test_the_settings_and_the_principal(make_client, runtime, clock):
    client = await make_client({"RATE_LIMIT_PER_SECOND": "3", "RATE_LIMIT_BURST": "3"})
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
    # A third of a second later, one more of alice's.
    clock.advance(0.34)
    statuses = [(await client.get("/api/auth/me", headers=alice)).status for _ in range(2)]
    assert statuses == [200, 429]


async def test_pages_and_assets_spend_nothing_of_the_api_budget(make_client, runtime, clock):
    client = await make_client({"RATE_LIMIT_BURST": "2"})
    _, headers = await signed_in(runtime)
    common_js = assets.url("js/common.js")
    # A signed-out visitor (or forty behind one NAT) opening the sign-in page many times,
    # and a signed-in person going through the panel's pages, in one instant.
    for _ in range(40):
        for path in ("/signin", common_js, assets.url("app.css"), "/assets/js/signin.js"):
            resp = await client.get(path)
            assert resp.status == 200, path
            assert "ratelimit-remaining" not in resp.headers
        for path in ("/", "/filters/new", "/domains", "/webmail", "/account"):
            resp = await client.get(path, headers=headers)
            assert resp.status == 200, path
    # Cacheable: versioned assets for a year, never revalidated.
    cached = await client.get(common_js)
    assert cached.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    # The API budget of both principals is whole: its first call leaves one of two.
    first = await client.get("/api/auth/signups")
    assert first.headers["ratelimit-remaining"] == "1"
    me = await client.get("/api/auth/me", headers=headers)
    assert me.headers["ratelimit-remaining"] == "1"
    # ...and the API still refuses past the burst, with Retry-After.
    await client.get("/api/auth/signups")
    refused = await client.get("/api/auth/signups")
    assert refused.status == 429 and refused.headers["retry-after"] == "1"
    # A path no route has is not a page: it spends (probing is not free).
    assert (await client.get("/no-such-page")).status == 429


async def test_every_page_is_outside_api_and_every_api_route_spends(make_client):
    """The boundary is the route's mark (common.openapi.page), checked over every route."""
    client = await make_client()
    app: web.Application = client.server.app
    pages, api = [], []
    for sub in [app, *(r._app for r in app.router.resources() if hasattr(r, "_app"))]:
        for resource in sub.router.resources():
            for route in resource:
                (pages if is_page(route.handler) else api).append(resource.canonical)
    assert pages and api
    assert not [p for p in pages if p.startswith("/api/")], "a page under /api"
    assert "/api/filters" in api and "/api/mail/folders" in api
    assert {"/signin", "/filters/new", "/webmail", "/assets/{name}"} <= set(pages)


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
    env = {"RATE_LIMIT_PER_SECOND": "4", "RATE_LIMIT_BURST": "4"}
    first = await make_client(env)
    second = await make_client(env)
    statuses = []
    for client in (first, second, first, second, first, second):
        statuses.append((await client.get("/api/auth/signups")).status)
    assert statuses == [200, 200, 200, 200, 429, 429]


async def test_client_ip_comes_through_trusted_proxies_only(make_client, runtime):
    env = {"RATE_LIMIT_PER_SECOND": "1", "RATE_LIMIT_BURST": "1"}
    client = await make_client(env)
    # Not trusted: a forged X-Forwarded-For does not buy a fresh budget.
    a = await client.get("/api/auth/signups", headers={"X-Forwarded-For": "203.0.113.1"})
    b = await client.get("/api/auth/signups", headers={"X-Forwarded-For": "203.0.113.2"})
    assert (a.status, b.status) == (200, 429)

    proxied = await make_client(env, trusted_proxies=(ipaddress.ip_network("127.0.0.0/8"),))
    c = await proxied.get("/api/auth/signups", headers={"X-Forwarded-For": "203.0.113.3"})
    d = await proxied.get("/api/auth/signups", headers={"X-Forwarded-For": "203.0.113.4"})
    e = await proxied.get("/api/auth/signups", headers={"X-Forwarded-For": "203.0.113.4"})
    assert (c.status, d.status, e.status) == (200, 200, 429)
