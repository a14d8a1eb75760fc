"""Agent keys and delivery keys: minting, caps, expiry, revocation, the hard bans."""

from __future__ import annotations

import pytest

from common.crypto import sha256_hex
from content.auth.permissions import KEY_FORBIDDEN, PERMISSIONS, key_permissions
from tests.content.factories import PASSWORD, bearer, make_agent_key, make_delivery_key, make_type


async def _mint(cms, who, **body):
    payload = {"name": "ci bot", "password": PASSWORD, "grants": ["content.read"], **body}
    return await cms.post("/api/agent-keys", json=payload, headers=who.headers)


async def test_anyone_mints_an_agent_key_shown_once_and_stored_hashed(cms, team, runtime, clock):
    viewer = team["viewer"]
    resp = await _mint(cms, viewer)
    assert resp.status == 201
    body = await resp.json()
    token = body["key"]
    assert token.startswith("svcagt_") and body["hint"] == token[:11]
    assert body["grants"] == ["content.read"] and body["status"] == "active"
    expires = body["expiresAt"]
    assert expires.startswith(str(clock.now().year + 0)[:2])  # an ISO time
    stored = await runtime.db.fetch_one(
        "SELECT token_hash FROM content.agent_keys WHERE id = %s", (body["id"],)
    )
    assert stored["token_hash"] == sha256_hex(token) and token not in str(stored)
    listed = await (await cms.get("/api/agent-keys", headers=viewer.headers)).json()
    assert [k["id"] for k in listed["data"]] == [body["id"]]
    assert "key" not in listed["data"][0]
    me = await (await cms.get("/api/auth/me", headers=bearer(token))).json()
    assert me["credential"]["kind"] == "agent_key" and me["permissions"] == ["content.read"]


async def test_minting_rules(cms, team):
    author = team["author"]
    wrong = await _mint(cms, author, password="wrong password")
    assert wrong.status == 403 and (await wrong.json())["code"] == "PASSWORD_INCORRECT"
    missing = await _mint(cms, author, password=None)
    assert missing.status == 403
    beyond = await _mint(cms, author, grants=["content.read", "types.manage", "nope"])
    body = await beyond.json()
    assert beyond.status == 400
    assert {f["key"] for f in body["details"]["fields"]} == {"grants.1", "grants.2"}
    for days in (0, 366, "90"):
        resp = await _mint(cms, author, expiresInDays=days)
        assert (await resp.json())["details"]["fields"][0]["key"] == "expiresInDays"
    resp = await _mint(cms, author, expiresInDays=365)
    assert resp.status == 201


async def test_default_expiry_is_90_days_then_refused(cms, team, clock):
    token = (await (await _mint(cms, team["editor"])).json())["key"]
    clock.advance(days=89)
    assert (await cms.get("/api/types", headers=bearer(token))).status == 200
    clock.advance(days=1)
    resp = await cms.get("/api/types", headers=bearer(token))
    assert resp.status == 401 and (await resp.json())["code"] == "KEY_EXPIRED"


async def test_revoking_a_key_leaves_sessions_and_password_alone(cms, team):
    editor = team["editor"]
    created = await (await _mint(cms, editor)).json()
    other = await (await _mint(cms, editor)).json()
    resp = await cms.delete(f"/api/agent-keys/{created['id']}", headers=editor.headers)
    assert resp.status == 200 and (await resp.json())["status"] == "revoked"
    refused = await cms.get("/api/types", headers=bearer(created["key"]))
    assert refused.status == 401 and (await refused.json())["code"] == "KEY_REVOKED"
    assert (await cms.get("/api/types", headers=bearer(other["key"]))).status == 200
    assert (await cms.get("/api/types", headers=editor.headers)).status == 200
    login = await cms.post("/api/auth/login", json={"email": editor.email, "password": PASSWORD})
    assert login.status == 200
    # Someone else's key is not found.
    resp = await cms.delete(f"/api/agent-keys/{other['id']}", headers=team["owner"].headers)
    assert resp.status == 404


async def test_key_is_capped_by_role_at_every_request(cms, team, runtime):
    admin = team["admin"]
    token = await make_agent_key(
        runtime.db, runtime.clock, admin.id, ["users.manage", "types.manage"]
    )
    assert (await cms.get("/api/users", headers=bearer(token))).status == 200
    resp = await cms.patch(
        f"/api/users/{admin.id}",
        json={"role": "viewer", "currentPassword": PASSWORD},
        headers=team["owner"].headers,
    )
    assert resp.status == 200
    refused = await cms.get("/api/users", headers=bearer(token))
    assert refused.status == 403
    # Not granted, though the role has it:
    token2 = await make_agent_key(runtime.db, runtime.clock, team["owner"].id, ["content.read"])
    resp = await cms.get("/api/users", headers=bearer(token2))
    assert resp.status == 403 and "not granted" in (await resp.json())["error"]


async def test_an_agent_key_can_never_mint_a_key(cms, team, runtime):
    token = await make_agent_key(runtime.db, runtime.clock, team["owner"].id, list(PERMISSIONS))
    for path, body in (
        ("/api/agent-keys", {"name": "x", "password": PASSWORD, "grants": ["content.read"]}),
        ("/api/delivery-keys", {"name": "x", "types": ["*"]}),
    ):
        resp = await cms.post(path, json=body, headers=bearer(token))
        assert resp.status == 403
        assert (await resp.json())["code"] == "KEY_FORBIDDEN"
    assert (await cms.get("/api/delivery-keys", headers=bearer(token))).status == 200


@pytest.mark.parametrize("role", ["viewer", "author", "editor", "admin", "owner"])
def test_no_key_holds_the_banned_capabilities(role):
    everything = set(PERMISSIONS) | KEY_FORBIDDEN
    held = key_permissions(role, everything)
    assert not held & KEY_FORBIDDEN
    assert {
        "users.create",
        "keys.mint",
        "social.connect",
        "plugins.install",
        "ai.spend",
        # Taking over an account: your own, or anyone's (issue 11).
        "account.manage",
        "users.control",
    } == KEY_FORBIDDEN


async def test_delivery_keys_are_managed_with_keys_manage(cms, team, runtime, clock):
    await make_type(runtime.db, clock, "post", [])
    await make_type(runtime.db, clock, "page", [])
    editor = await cms.post(
        "/api/delivery-keys", json={"name": "s", "types": ["*"]}, headers=team["editor"].headers
    )
    assert editor.status == 403
    admin = team["admin"].headers
    bad = await cms.post(
        "/api/delivery-keys", json={"name": "s", "types": ["post", "ghost"]}, headers=admin
    )
    assert (await bad.json())["details"]["fields"] == [
        {"key": "types.1", "message": "is not a content type"}
    ]
    resp = await cms.post(
        "/api/delivery-keys", json={"name": "site", "types": ["post"]}, headers=admin
    )
    assert resp.status == 201
    created = await resp.json()
    key = created["key"]
    assert key.startswith("svc_") and not key.startswith("svcagt_")
    seen = await (await cms.get("/content", headers={"X-Api-Key": key})).json()
    assert [t["name"] for t in seen["data"]] == ["post"]
    resp = await cms.patch(
        f"/api/delivery-keys/{created['id']}", json={"types": ["post", "page"]}, headers=admin
    )
    assert (await resp.json())["types"] == ["page", "post"]
    seen = await (await cms.get("/content", headers={"X-Api-Key": key})).json()
    assert [t["name"] for t in seen["data"]] == ["page", "post"]
    listed = await (await cms.get("/api/delivery-keys", headers=admin)).json()
    assert "key" not in listed["data"][0]
    resp = await cms.delete(f"/api/delivery-keys/{created['id']}", headers=admin)
    assert (await resp.json())["status"] == "revoked"
    refused = await cms.get("/content", headers={"X-Api-Key": key})
    assert refused.status == 401 and (await refused.json())["code"] == "KEY_REVOKED"


async def test_credentials_are_not_interchangeable(cms, team, runtime, clock):
    delivery = await make_delivery_key(runtime.db, clock, ["*"])
    agent = await make_agent_key(runtime.db, clock, team["owner"].id, ["content.read"])
    for headers in ({"X-Api-Key": delivery}, bearer(delivery)):
        resp = await cms.get("/api/types", headers=headers)
        assert resp.status == 401
        assert (await resp.json())["code"] == "WRONG_CREDENTIAL"
    for headers in (bearer(agent), {"X-Api-Key": agent}, team["owner"].headers):
        resp = await cms.get("/content", headers=headers)
        assert resp.status == 401
        assert (await resp.json())["code"] == "WRONG_CREDENTIAL"
    ok = await cms.get("/content", headers={"X-Api-Key": delivery})
    assert ok.status == 200
    assert ok.headers["Cache-Control"].startswith("private")
    assert "X-Api-Key" in ok.headers["Vary"]
    assert (await cms.get("/content")).status == 401
    unknown = await cms.get("/content", headers={"X-Api-Key": "svc_nope"})
    assert (await unknown.json())["code"] == "KEY_INVALID"


async def test_delivery_through_the_gateway_prefix(gateway_client, runtime, clock):
    await make_type(runtime.db, clock, "post", [{"key": "body", "type": "markdown"}])
    key = await make_delivery_key(runtime.db, clock, ["post"])
    resp = await gateway_client.get("/cms/content", headers={"X-Api-Key": key})
    assert (await resp.json())["data"][0]["fields"][0]["key"] == "body"


async def test_delivery_origins_for_browsers(cms, settings, runtime, clock):
    from dataclasses import replace

    from content.context import CONTEXT

    ctx = cms.app[CONTEXT]
    object.__setattr__(
        ctx, "config", replace(ctx.config, delivery_origins=("https://site.example",))
    )
    key = await make_delivery_key(runtime.db, clock, ["*"])
    ok = await cms.options(
        "/content/post",
        headers={"Origin": "https://site.example", "Access-Control-Request-Method": "GET"},
    )
    assert ok.status == 204
    assert ok.headers["Access-Control-Allow-Origin"] == "https://site.example"
    assert "X-Api-Key" in ok.headers["Access-Control-Allow-Headers"]
    refused = await cms.options("/content", headers={"Origin": "https://evil.example"})
    assert refused.status == 403 and (await refused.json())["code"] == "ORIGIN_NOT_ALLOWED"
    resp = await cms.get("/content", headers={"X-Api-Key": key, "Origin": "https://site.example"})
    assert resp.headers["Access-Control-Allow-Origin"] == "https://site.example"
    other = await cms.get("/content", headers={"X-Api-Key": key, "Origin": "https://evil.example"})
    assert "Access-Control-Allow-Origin" not in other.headers
