"""The gateway's mounts: each service answers in its own error shape."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    ("path", "shape"),
    [
        ("/nope", {"statusCode": 404, "name": "not_found"}),
        ("/api/nope", {"statusCode": 404, "name": "not_found"}),
        ("/cms/nope", {"code": "NOT_FOUND"}),
        ("/cms", {"code": "NOT_FOUND"}),
        ("/oauth/nope", {"error": "not_found"}),
        ("/admin/oauth/nope", {"error": "not_found"}),
    ],
)
async def test_unknown_path_answers_in_owning_service_shape(gateway_client, path, shape):
    resp = await gateway_client.get(path)
    assert resp.status == 404
    body = await resp.json()
    for key, value in shape.items():
        assert body[key] == value
    if "code" in shape:
        assert set(body) == {"error", "code", "details"}
    elif "statusCode" in shape:
        assert set(body) == {"statusCode", "name", "message"}
    else:
        assert set(body) == {"error", "error_description"}


async def test_healthz_reports_database(gateway_client, runtime):
    resp = await gateway_client.get("/healthz")
    assert resp.status == 200
    assert await resp.json() == {"status": "ok"}


async def test_healthz_503_when_database_is_gone(gateway_client, runtime):
    await runtime.db.close()
    resp = await gateway_client.get("/healthz")
    assert resp.status == 503
    assert (await resp.json())["status"] == "unavailable"


async def test_wrong_verb_on_healthz_is_405(gateway_client):
    resp = await gateway_client.post("/healthz")
    assert resp.status == 405


async def test_host_mount_serves_a_service_at_the_root_of_its_host(runtime, aiohttp_client):
    from dataclasses import replace

    from common.runtime import Runtime
    from gateway.app import build_app

    settings = replace(runtime.settings, host_mounts=(("cms.example.com", "content"),))
    app = build_app(Runtime(settings, runtime.db, runtime.clock, runtime.jobs))
    client = await aiohttp_client(app)
    resp = await client.get("/nope", headers={"Host": "cms.example.com"})
    assert (await resp.json())["code"] == "NOT_FOUND"
    resp = await client.get("/nope", headers={"Host": "mail.example.com"})
    assert (await resp.json())["name"] == "not_found"


@pytest.mark.parametrize(
    ("module", "expected"),
    [
        ("mail.errors", {"statusCode": 405, "name": "method_not_allowed"}),
        ("content.errors", {"code": "METHOD_NOT_ALLOWED"}),
        ("oauth.errors", {"error": "method_not_allowed"}),
    ],
)
async def test_wrong_verb_answers_405_in_the_service_shape(aiohttp_client, module, expected):
    import importlib

    from aiohttp import web

    from common.web import error_middleware

    async def ok(request):
        return web.json_response({})

    app = web.Application(middlewares=[error_middleware(importlib.import_module(module).render)])
    app.router.add_get("/thing", ok)
    client = await aiohttp_client(app)
    resp = await client.delete("/thing")
    assert resp.status == 405
    assert resp.headers["Allow"] == "GET, HEAD"
    body = await resp.json()
    assert {k: body[k] for k in expected} == expected


async def test_unexpected_error_is_a_500_in_shape_without_details(aiohttp_client):
    from aiohttp import web

    from common.web import error_middleware
    from mail.errors import render

    async def boom(request):
        raise RuntimeError("secret internals")

    app = web.Application(middlewares=[error_middleware(render)])
    app.router.add_get("/boom", boom)
    client = await aiohttp_client(app)
    resp = await client.get("/boom")
    assert resp.status == 500
    assert await resp.json() == {
        "statusCode": 500,
        "name": "application_error",
        "message": "internal error",
    }


async def test_housekeeping_forgets_old_windows_and_recurring_slots(runtime, clock):
    from common.ratelimit import RateLimiter
    from gateway import housekeeping

    housekeeping.register(runtime)
    await RateLimiter(runtime.db, clock).hit("k", 1)
    await runtime.jobs.enqueue("unrelated", {}, key="user-key")
    assert await runtime.jobs.run_due() == 1  # the first sweep slot
    clock.advance(days=8)
    assert await runtime.jobs.run_due() == 1  # a later slot purges the first
    keys = await runtime.db.fetch_all("SELECT key FROM common.jobs ORDER BY id")
    assert next(k["key"] for k in keys) == "user-key"
    assert len(keys) == 2
    assert await runtime.db.fetch_val("SELECT count(*) FROM common.rate_limits") == 0


async def test_mail_names_always_carry_their_table_status(aiohttp_client):
    from aiohttp import web

    from common.web import error_middleware
    from mail.errors import STATUS_BY_NAME, render

    async def too_big(request):
        await request.read()
        return web.json_response({})

    async def unsupported(request):
        raise web.HTTPUnsupportedMediaType()

    app = web.Application(middlewares=[error_middleware(render)], client_max_size=10)
    app.router.add_post("/big", too_big)
    app.router.add_get("/media", unsupported)
    client = await aiohttp_client(app)
    for resp in (await client.post("/big", data=b"x" * 100), await client.get("/media")):
        body = await resp.json()
        assert resp.status == body["statusCode"] == STATUS_BY_NAME[body["name"]]
    big = await client.post("/big", data=b"x" * 100)
    assert (await big.json())["name"] == "quota_exceeded"


async def test_a_mail_host_mount_routes_oauth_for_its_consent_and_pairing_pages(
    runtime, aiohttp_client
):
    """/authorize and /pair on a mail host call /oauth on their own origin."""
    from dataclasses import replace

    from common.runtime import Runtime
    from gateway.app import build_app

    settings = replace(runtime.settings, host_mounts=(("mail.example.net", "mail"),))
    app = build_app(Runtime(settings, runtime.db, runtime.clock, runtime.jobs))
    client = await aiohttp_client(app)
    host = {"Host": "mail.example.net"}
    resp = await client.get("/.well-known/oauth-authorization-server/oauth", headers=host)
    assert resp.status == 200
    assert (await resp.json())["authorization_endpoint"].endswith("/authorize")
    # Signed out, the consent route is the OAuth server's own 401, not mail's 404.
    resp = await client.get("/oauth/authorize/info", headers=host)
    assert resp.status != 404
    resp = await client.get("/pair", headers=host, allow_redirects=False)
    assert resp.status == 303 and resp.headers["Location"].startswith("/signin?next=")


async def test_the_gateways_oauth_server_offers_the_mail_scope_jmap_takes(gateway_client):
    """Without OAUTH_SCOPES, a mail client can ask for JMAP access (docs/mail.md)."""
    resp = await gateway_client.get("/.well-known/oauth-authorization-server/oauth")
    scopes = (await resp.json())["scopes_supported"]
    assert {"openid", "profile", "email", "mail"} <= set(scopes)
