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
