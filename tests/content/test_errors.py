"""Every failure of the CMS renders as {error, code, details}."""

from __future__ import annotations

from tests.content.factories import bearer


def _shape(body):
    assert set(body) == {"error", "code", "details"}
    return body["code"]


async def test_unknown_route_and_wrong_verb(cms):
    resp = await cms.get("/api/nope")
    assert resp.status == 404 and _shape(await resp.json()) == "NOT_FOUND"
    resp = await cms.put("/api/auth/login")
    assert resp.status == 405 and _shape(await resp.json()) == "METHOD_NOT_ALLOWED"


async def test_bad_json_is_400(cms):
    resp = await cms.post(
        "/api/auth/login", data="{nope", headers={"Content-Type": "application/json"}
    )
    assert resp.status == 400 and _shape(await resp.json()) == "BAD_JSON"


async def test_a_body_that_is_not_json_is_415(cms):
    resp = await cms.post("/api/auth/login", data="email=a", headers={"Content-Type": "text/plain"})
    assert resp.status == 415 and _shape(await resp.json()) == "UNSUPPORTED_MEDIA_TYPE"
    resp = await cms.post(
        "/api/auth/login", data="[1]", headers={"Content-Type": "application/json"}
    )
    assert resp.status == 400 and _shape(await resp.json()) == "BAD_JSON"


async def test_validation_names_fields(cms):
    resp = await cms.post("/api/auth/login", json={"email": ""})
    assert resp.status == 400
    body = await resp.json()
    assert _shape(body) == "VALIDATION_FAILED"
    assert {f["key"] for f in body["details"]["fields"]} == {"email", "password"}


async def test_unauthenticated_is_401(cms):
    resp = await cms.get("/api/users")
    assert resp.status == 401 and _shape(await resp.json()) == "UNAUTHORIZED"
    resp = await cms.get("/api/users", headers=bearer("not-a-session"))
    assert resp.status == 401 and _shape(await resp.json()) == "SESSION_INVALID"
    resp = await cms.get("/api/users", headers={"Authorization": "Basic abc"})
    assert resp.status == 401


async def test_mounted_under_cms_in_the_gateway(gateway_client, team):
    resp = await gateway_client.get("/cms/api/auth/me", headers=team["viewer"].headers)
    assert resp.status == 200
    assert (await resp.json())["user"]["role"] == "viewer"
    resp = await gateway_client.get("/cms/api/nope")
    assert _shape(await resp.json()) == "NOT_FOUND"
