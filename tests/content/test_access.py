"""Who reaches which admin route: every role, both admin credential kinds, and the refusals."""

from __future__ import annotations

import pytest

from content.auth.credentials import require
from content.auth.permissions import KEY_FORBIDDEN, PERMISSIONS
from content.auth.principal import Principal, User
from content.errors import Forbidden
from tests.content.factories import bearer, make_agent_key, make_delivery_key, make_type

# Read routes and the least role that reaches each.
READS = [
    ("/api/auth/me", "viewer"),
    ("/api/agent-keys", "viewer"),
    ("/api/types", "viewer"),
    ("/api/types/post", "viewer"),
    ("/api/field-types", "viewer"),
    ("/api/entries", "viewer"),
    ("/api/activity", "viewer"),
    ("/api/trash", "author"),
    ("/api/users", "admin"),
    ("/api/delivery-keys", "admin"),
]
RANKS = ["viewer", "author", "editor", "admin", "owner"]
# The permission each read route needs, for agent keys.
NEEDS = {
    "/api/types": "content.read",
    "/api/types/post": "content.read",
    "/api/field-types": "content.read",
    "/api/entries": "content.read",
    "/api/activity": "content.read",
    "/api/trash": "content.write",
    "/api/users": "users.manage",
    "/api/delivery-keys": "keys.manage",
}


@pytest.fixture
async def site(cms, team, runtime, clock):
    await make_type(runtime.db, clock, "post", [])
    return team


async def test_each_role_on_each_read_route(cms, site):
    for (path, least), role in ((r, role) for r in READS for role in RANKS):
        resp = await cms.get(path, headers=site[role].headers)
        expected = 200 if RANKS.index(role) >= RANKS.index(least) else 403
        assert resp.status == expected, (role, path, await resp.text())
        assert resp.content_type == "application/json"


async def test_agent_keys_need_the_grant_and_the_role(cms, site, runtime, clock):
    for path, permission in sorted(NEEDS.items()):
        await _agent_key_case(cms, site, runtime, clock, path, permission)


async def _agent_key_case(cms, site, runtime, clock, path, permission):
    owner = site["owner"]
    granted = await make_agent_key(runtime.db, clock, owner.id, [permission])
    assert (await cms.get(path, headers=bearer(granted))).status == 200
    others = [
        p
        for p in PERMISSIONS
        if p != permission and not (permission == "content.write" and p == "content.read")
    ]
    ungranted = await make_agent_key(runtime.db, clock, owner.id, others)
    assert (await cms.get(path, headers=bearer(ungranted))).status == 403
    # Granted, but held by a viewer: only what a viewer could do.
    viewer_key = await make_agent_key(runtime.db, clock, site["viewer"].id, [permission])
    expected = 200 if permission == "content.read" else 403
    assert (await cms.get(path, headers=bearer(viewer_key))).status == expected
    expired = await make_agent_key(runtime.db, clock, owner.id, [permission], days=1)
    clock.advance(days=1)
    assert (await (await cms.get(path, headers=bearer(expired))).json())["code"] == "KEY_EXPIRED"
    revoked = await make_agent_key(runtime.db, clock, owner.id, [permission], revoked=True)
    assert (await (await cms.get(path, headers=bearer(revoked))).json())["code"] == "KEY_REVOKED"


async def test_delivery_keys_are_refused_on_every_admin_route(cms, runtime, clock):
    key = await make_delivery_key(runtime.db, clock, ["*"])
    for path, _ in READS:
        for headers in ({"X-Api-Key": key}, bearer(key)):
            resp = await cms.get(path, headers=headers)
            assert resp.status == 401, path
            assert (await resp.json())["code"] == "WRONG_CREDENTIAL"


@pytest.mark.parametrize("capability", sorted(KEY_FORBIDDEN))
def test_the_permission_layer_refuses_banned_capabilities_to_keys(capability):
    owner = User(id="u", email="o@example.com", name="O", role="owner")
    person = Principal(user=owner, kind="session")
    require(person, capability)  # a person who holds the role may
    key = Principal(
        user=owner, kind="agent_key", key_id="k", grants=frozenset(PERMISSIONS) | KEY_FORBIDDEN
    )
    with pytest.raises(Forbidden) as caught:
        require(key, capability)
    assert caught.value.code == "KEY_FORBIDDEN"


async def test_cookie_session_under_the_gateway_mount(gateway_client, person):
    from tests.content.factories import PASSWORD

    editor = await person("editor")
    resp = await gateway_client.post(
        "/cms/api/auth/login", json={"email": editor.email, "password": PASSWORD, "mode": "cookie"}
    )
    assert resp.status == 200
    assert resp.cookies["cms_session"]["path"] == "/cms"
    me = await gateway_client.get("/cms/api/auth/me")
    assert (await me.json())["user"]["id"] == editor.id
    ok = await gateway_client.post(
        "/cms/api/auth/logout", headers={"Origin": "http://localhost:4300"}
    )
    assert ok.status == 204
