"""User management: the permission, the rank rules and the last-owner rule."""

from __future__ import annotations

import pytest

from tests.content.factories import PASSWORD, bearer, make_agent_key


def _confirmed(**changes: str) -> dict[str, str]:
    """A change that needs the acting person's password, with it."""
    return {**changes, "currentPassword": PASSWORD}


async def test_list_and_get_need_users_manage(cms, team):
    for role in ("viewer", "author", "editor"):
        resp = await cms.get("/api/users", headers=team[role].headers)
        assert resp.status == 403
        body = await resp.json()
        assert body["code"] == "FORBIDDEN" and body["details"]["permission"] == "users.manage"
    resp = await cms.get("/api/users?limit=2&page=2", headers=team["admin"].headers)
    assert resp.status == 200
    body = await resp.json()
    assert body["meta"] == {"total": 5, "page": 2, "limit": 2}
    assert len(body["data"]) == 2
    one = await cms.get(f"/api/users/{team['viewer'].id}", headers=team["admin"].headers)
    assert (await one.json())["role"] == "viewer"
    missing = await cms.get("/api/users/nope", headers=team["admin"].headers)
    assert missing.status == 404


async def test_admin_creates_up_to_own_rank(cms, team):
    admin = team["admin"].headers
    new = {"email": "new@example.com", "password": "a good password", "role": "admin"}
    resp = await cms.post("/api/users", json=new, headers=admin)
    assert resp.status == 201
    created = await resp.json()
    assert created["role"] == "admin" and "password" not in str(created)
    login = await cms.post(
        "/api/auth/login", json={"email": new["email"], "password": new["password"]}
    )
    assert login.status == 200
    above = await cms.post(
        "/api/users", json={**new, "email": "o@example.com", "role": "owner"}, headers=admin
    )
    assert above.status == 403 and (await above.json())["code"] == "RANK"
    dup = await cms.post("/api/users", json=new, headers=admin)
    assert dup.status == 409
    assert (await dup.json())["details"]["fields"][0]["key"] == "email"
    bad = await cms.post("/api/users", json={"email": "x", "role": "boss"}, headers=admin)
    assert {f["key"] for f in (await bad.json())["details"]["fields"]} == {
        "email",
        "role",
        "password",
    }
    assert (await cms.post("/api/users", json=new, headers=team["editor"].headers)).status == 403


async def test_admin_cannot_edit_or_promote_above_own_rank(cms, team):
    admin = team["admin"].headers
    resp = await cms.patch(f"/api/users/{team['owner'].id}", json={"name": "x"}, headers=admin)
    assert resp.status == 403 and (await resp.json())["code"] == "RANK"
    resp = await cms.patch(f"/api/users/{team['editor'].id}", json={"role": "owner"}, headers=admin)
    assert resp.status == 403
    resp = await cms.patch(
        f"/api/users/{team['editor'].id}",
        json={"role": "admin", "name": "Ed", "currentPassword": PASSWORD},
        headers=admin,
    )
    assert resp.status == 200
    assert (await resp.json())["role"] == "admin"
    resp = await cms.delete(f"/api/users/{team['owner'].id}", headers=admin)
    assert resp.status == 403
    resp = await cms.patch(f"/api/users/{team['viewer'].id}", json={"shoeSize": 3}, headers=admin)
    assert resp.status == 400


async def test_demotion_applies_on_the_next_request(cms, team):
    editor = team["editor"]
    assert (await cms.get("/api/users", headers=editor.headers)).status == 403
    resp = await cms.patch(
        f"/api/users/{editor.id}", json=_confirmed(role="admin"), headers=team["owner"].headers
    )
    assert resp.status == 200
    assert (await cms.get("/api/users", headers=editor.headers)).status == 200
    await cms.patch(
        f"/api/users/{editor.id}", json=_confirmed(role="viewer"), headers=team["owner"].headers
    )
    assert (await cms.get("/api/users", headers=editor.headers)).status == 403


async def test_last_owner_cannot_be_deleted_or_demoted(cms, team, person):
    owner = team["owner"]
    demote = _confirmed(role="admin")
    resp = await cms.patch(f"/api/users/{owner.id}", json=demote, headers=owner.headers)
    assert resp.status == 409 and (await resp.json())["code"] == "LAST_OWNER"
    resp = await cms.delete(f"/api/users/{owner.id}", headers=owner.headers)
    assert resp.status == 409 and (await resp.json())["code"] == "LAST_OWNER"
    second = await person("owner")
    resp = await cms.patch(f"/api/users/{owner.id}", json=demote, headers=second.headers)
    assert resp.status == 200
    resp = await cms.delete(f"/api/users/{second.id}", headers=second.headers)
    assert resp.status == 409
    # With two owners again, one may go.
    await cms.patch(f"/api/users/{owner.id}", json=_confirmed(role="owner"), headers=second.headers)
    assert (await cms.delete(f"/api/users/{second.id}", headers=owner.headers)).status == 204
    assert (await cms.get("/api/auth/me", headers=second.headers)).status == 401


async def test_password_change_ends_that_users_sessions(cms, team):
    viewer = team["viewer"]
    resp = await cms.patch(
        f"/api/users/{viewer.id}",
        json=_confirmed(password="brand new password"),
        headers=team["admin"].headers,
    )
    assert resp.status == 200
    assert (await cms.get("/api/auth/me", headers=viewer.headers)).status == 401
    login = await cms.post(
        "/api/auth/login", json={"email": viewer.email, "password": "brand new password"}
    )
    assert login.status == 200


@pytest.mark.parametrize("grants", [["users.manage"], ["users.manage", "keys.manage"]])
async def test_agent_key_can_never_add_a_user(cms, team, runtime, grants):
    token = await make_agent_key(runtime.db, runtime.clock, team["owner"].id, grants)
    listed = await cms.get("/api/users", headers=bearer(token))
    assert listed.status == 200
    resp = await cms.post(
        "/api/users",
        json={"email": "bot@example.com", "password": PASSWORD, "role": "viewer"},
        headers=bearer(token),
    )
    assert resp.status == 403
    assert (await resp.json())["code"] == "KEY_FORBIDDEN"


async def test_activity_records_people_changes_for_admins_only(cms, team):
    await cms.patch(
        f"/api/users/{team['viewer'].id}", json={"name": "V"}, headers=team["admin"].headers
    )
    resp = await cms.get("/api/activity", headers=team["admin"].headers)
    body = await resp.json()
    item = body["data"][0]
    assert item["action"] == "user.updated"
    assert item["actor"]["userId"] == team["admin"].id
    assert item["subject"] == {"kind": "user", "id": team["viewer"].id}
    viewer_view = await (await cms.get("/api/activity", headers=team["viewer"].headers)).json()
    assert viewer_view["data"] == []
