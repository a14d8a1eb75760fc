"""No agent key can take over an account; people re-enter their password to (issue 11).

Taking over means changing who can sign in (a password or an email) or who
manages people (granting or removing admin/owner). A key is refused with 403
KEY_FORBIDDEN whatever it was granted; a person re-enters their own current
password, as PATCH /api/auth/me already asked.
"""

from __future__ import annotations

from common.passwords import hash_password_sync
from content.auth.permissions import PERMISSIONS
from tests.content.factories import PASSWORD, bearer, make_agent_key, make_session

NEW_PASSWORD = "the attacker's password"


async def _login(cms, email, password=PASSWORD):
    return await cms.post("/api/auth/login", json={"email": email, "password": password})


async def _email_of(cms, who, by):
    return (await (await cms.get(f"/api/users/{who.id}", headers=by.headers)).json())["email"]


def _refused_to_keys(status, body):
    assert status == 403, body
    assert body["code"] == "KEY_FORBIDDEN"
    assert body["details"]["permission"] == "users.control"


async def test_a_key_cannot_set_its_own_persons_password_and_become_them(cms, team, runtime):
    admin = team["admin"]
    key = bearer(await make_agent_key(runtime.db, runtime.clock, admin.id, list(PERMISSIONS)))
    for body in (
        {"password": NEW_PASSWORD},
        # Knowing the password would not help a key either: it is person-only.
        {"password": NEW_PASSWORD, "currentPassword": PASSWORD},
        {"email": "attacker@example.com"},
    ):
        resp = await cms.patch(f"/api/users/{admin.id}", json=body, headers=key)
        _refused_to_keys(resp.status, await resp.json())
    assert (await _login(cms, admin.email, NEW_PASSWORD)).status == 401
    assert (await _login(cms, admin.email)).status == 200
    assert (await _login(cms, "attacker@example.com", NEW_PASSWORD)).status == 401
    # Its person's sessions are untouched; plain edits under users.manage still work.
    assert (await cms.get("/api/auth/me", headers=admin.headers)).status == 200
    resp = await cms.patch(f"/api/users/{admin.id}", json={"name": "Ada"}, headers=key)
    assert resp.status == 200 and (await resp.json())["name"] == "Ada"


async def test_a_key_cannot_change_a_peers_email_or_password(cms, team, person, runtime):
    owner = team["owner"]
    peer = await person("admin")
    key = bearer(await make_agent_key(runtime.db, runtime.clock, owner.id, list(PERMISSIONS)))
    for body in ({"email": "attacker@example.com"}, {"password": NEW_PASSWORD}):
        resp = await cms.patch(f"/api/users/{peer.id}", json=body, headers=key)
        _refused_to_keys(resp.status, await resp.json())
    assert await _email_of(cms, peer, owner) == peer.email
    assert (await _login(cms, peer.email)).status == 200
    assert (await cms.get("/api/auth/me", headers=peer.headers)).status == 200


async def test_a_key_cannot_grant_or_remove_the_roles_that_manage_people(cms, team, runtime):
    owner = team["owner"]
    key = bearer(await make_agent_key(runtime.db, runtime.clock, owner.id, list(PERMISSIONS)))
    for who, role in (
        (team["viewer"], "admin"),
        (team["editor"], "owner"),
        (team["admin"], "editor"),
    ):
        resp = await cms.patch(f"/api/users/{who.id}", json={"role": role}, headers=key)
        _refused_to_keys(resp.status, await resp.json())
    resp = await cms.delete(f"/api/users/{team['admin'].id}", headers=key)
    _refused_to_keys(resp.status, await resp.json())
    assert (await cms.get("/api/auth/me", headers=team["admin"].headers)).status == 200
    # Moves below admin stay open to a key granted users.manage.
    resp = await cms.patch(f"/api/users/{team['viewer'].id}", json={"role": "author"}, headers=key)
    assert resp.status == 200 and (await resp.json())["role"] == "author"
    assert (await cms.delete(f"/api/users/{team['editor'].id}", headers=key)).status == 204
    # Nor can it add a person of any role, admin included.
    resp = await cms.post(
        "/api/users",
        json={"email": "bot@example.com", "password": NEW_PASSWORD, "role": "admin"},
        headers=key,
    )
    assert resp.status == 403 and (await resp.json())["code"] == "KEY_FORBIDDEN"


async def test_a_key_cannot_reach_its_persons_account_sessions_or_mint_keys(cms, team, runtime):
    owner = team["owner"]
    other = await make_session(runtime.db, runtime.clock, owner.id)
    key = bearer(await make_agent_key(runtime.db, runtime.clock, owner.id, list(PERMISSIONS)))
    sessions = await (await cms.get("/api/auth/sessions", headers=owner.headers)).json()
    session_id = next(s["id"] for s in sessions["data"] if not s["current"])
    for method, path, body in (
        ("GET", "/api/auth/sessions", None),
        ("DELETE", f"/api/auth/sessions/{session_id}", None),
        ("PATCH", "/api/auth/me", {"password": NEW_PASSWORD, "currentPassword": PASSWORD}),
        ("PATCH", "/api/auth/me", {"email": "attacker@example.com"}),
        (
            "POST",
            "/api/agent-keys",
            {"name": "x", "password": PASSWORD, "grants": ["content.read"]},
        ),
        ("POST", "/api/delivery-keys", {"name": "x", "types": ["*"]}),
    ):
        resp = await cms.request(method, path, json=body, headers=key)
        assert resp.status == 403, (method, path)
        assert (await resp.json())["code"] == "KEY_FORBIDDEN", (method, path)
    assert (await cms.get("/api/auth/me", headers=bearer(other))).status == 200
    assert (await _login(cms, owner.email)).status == 200


async def test_your_own_password_through_users_needs_the_current_one(cms, team, runtime):
    admin = team["admin"]
    other = await make_session(runtime.db, runtime.clock, admin.id)
    path = f"/api/users/{admin.id}"
    for sent, message in ((None, "is required"), ("not my password", "is wrong")):
        body = {"password": NEW_PASSWORD, "email": "new-admin@example.com"}
        if sent is not None:
            body["currentPassword"] = sent
        resp = await cms.patch(path, json=body, headers=admin.headers)
        assert resp.status == 403
        error = await resp.json()
        assert error["code"] == "PASSWORD_INCORRECT"
        assert error["details"]["fields"] == [{"key": "currentPassword", "message": message}]
    assert (await _login(cms, admin.email, NEW_PASSWORD)).status == 401
    resp = await cms.patch(
        path,
        json={
            "password": NEW_PASSWORD,
            "email": "new-admin@example.com",
            "currentPassword": PASSWORD,
        },
        headers=admin.headers,
    )
    assert resp.status == 200 and (await resp.json())["email"] == "new-admin@example.com"
    # As PATCH /api/auth/me: this session stays, the others end.
    assert (await cms.get("/api/auth/me", headers=admin.headers)).status == 200
    assert (await cms.get("/api/auth/me", headers=bearer(other))).status == 401
    assert (await _login(cms, "new-admin@example.com", NEW_PASSWORD)).status == 200


async def test_changing_someone_elses_credentials_asks_the_actors_own_password(cms, team, runtime):
    admin, viewer = team["admin"], team["viewer"]
    await runtime.db.execute(
        "UPDATE content.users SET password_hash = %s WHERE id = %s",
        (hash_password_sync("the viewer's own password"), viewer.id),
    )
    path = f"/api/users/{viewer.id}"
    change = {"email": "v2@example.com"}
    for sent in (None, "the viewer's own password"):
        body = change if sent is None else {**change, "currentPassword": sent}
        resp = await cms.patch(path, json=body, headers=admin.headers)
        assert resp.status == 403 and (await resp.json())["code"] == "PASSWORD_INCORRECT"
    assert await _email_of(cms, viewer, admin) == viewer.email
    resp = await cms.patch(
        path, json={**change, "currentPassword": PASSWORD}, headers=admin.headers
    )
    assert resp.status == 200 and (await resp.json())["email"] == "v2@example.com"


async def test_a_form_sent_back_whole_needs_no_password(cms, team):
    viewer = team["viewer"]
    resp = await cms.patch(
        f"/api/users/{viewer.id}",
        json={"name": "Vera", "email": viewer.email, "role": "viewer"},
        headers=team["admin"].headers,
    )
    assert resp.status == 200 and (await resp.json())["name"] == "Vera"
