"""Setup, the unattended owner, sign-in, sessions and the per-IP limit."""

from __future__ import annotations

import pytest

from common.settings import Settings
from tests.content.factories import PASSWORD, bearer


async def _login(cms, email, password=PASSWORD, **extra):
    return await cms.post("/api/auth/login", json={"email": email, "password": password, **extra})


async def test_first_visit_claims_the_site_once(cms):
    assert (await (await cms.get("/api/auth/setup")).json()) == {"setupRequired": True}
    body = {"email": "me@example.com", "password": "a long password", "name": "Me"}
    resp = await cms.post("/api/auth/setup", json=body)
    assert resp.status == 201
    created = await resp.json()
    assert created["user"]["role"] == "owner"
    me = await cms.get("/api/auth/me", headers=bearer(created["token"]))
    assert (await me.json())["user"]["email"] == "me@example.com"
    assert (await (await cms.get("/api/auth/setup")).json()) == {"setupRequired": False}
    again = await cms.post("/api/auth/setup", json={**body, "email": "other@example.com"})
    assert again.status == 409
    assert (await again.json())["code"] == "SETUP_DONE"


async def test_setup_validates(cms):
    resp = await cms.post("/api/auth/setup", json={"email": "bad", "password": "short"})
    assert resp.status == 400
    keys = {f["key"] for f in (await resp.json())["details"]["fields"]}
    assert keys == {"email", "password"}


@pytest.fixture
def bootstrap_settings(settings: Settings) -> Settings:
    env = {
        "BOOTSTRAP_EMAIL": "boot@example.com",
        "BOOTSTRAP_PASSWORD": "bootstrap password",
        "BOOTSTRAP_NAME": "Boot",
    }
    object.__setattr__(settings, "environ", env)
    return settings


async def test_bootstrap_creates_first_owner_unattended(bootstrap_settings, cms):
    resp = await _login(cms, "boot@example.com", "bootstrap password")
    assert resp.status == 200
    body = await resp.json()
    assert body["user"] == {**body["user"], "role": "owner", "name": "Boot"}
    assert (await (await cms.get("/api/auth/setup")).json()) == {"setupRequired": False}


async def test_bootstrap_does_nothing_when_people_exist(bootstrap_settings, runtime, person):
    from content import ContentService

    await person("owner")
    service = ContentService(runtime)
    async with service.lifespan():
        pass
    count = await runtime.db.fetch_val("SELECT count(*) FROM content.users")
    assert count == 1


async def test_login_bearer_and_wrong_password(cms, person):
    owner = await person("owner")
    resp = await _login(cms, owner.email.upper())
    assert resp.status == 200
    body = await resp.json()
    assert "token" in body and "Set-Cookie" not in resp.headers
    assert resp.headers["Cache-Control"] == "no-store"
    me = await cms.get("/api/auth/me", headers=bearer(body["token"]))
    assert me.status == 200
    bad = await _login(cms, owner.email, "wrong password")
    assert bad.status == 401 and (await bad.json())["code"] == "INVALID_CREDENTIALS"
    nobody = await _login(cms, "nobody@example.com")
    assert nobody.status == 401 and (await nobody.json())["code"] == "INVALID_CREDENTIALS"


async def test_cookie_session_and_csrf(cms, person):
    editor = await person("editor")
    resp = await _login(cms, editor.email, mode="cookie")
    assert resp.status == 200
    assert "token" not in await resp.json()
    cookie = resp.cookies["cms_session"]
    assert cookie["httponly"] and cookie["samesite"] == "Lax" and cookie["path"] == "/"
    me = await cms.get("/api/auth/me")
    assert me.status == 200
    assert (await me.json())["credential"]["kind"] == "session"
    # A cookie-borne write from another site is refused; from our own origin it passes.
    evil = await cms.post("/api/auth/logout", headers={"Origin": "https://evil.example"})
    assert evil.status == 403 and (await evil.json())["code"] == "CSRF_REJECTED"
    cross = await cms.post("/api/auth/logout", headers={"Sec-Fetch-Site": "cross-site"})
    assert cross.status == 403
    ok = await cms.post("/api/auth/logout", headers={"Origin": "http://localhost:4300"})
    assert ok.status == 204
    cms.session.cookie_jar.clear()


async def test_logout_revokes_the_stored_session(cms, person):
    viewer = await person("viewer")
    assert (await cms.post("/api/auth/logout", headers=viewer.headers)).status == 204
    resp = await cms.get("/api/auth/me", headers=viewer.headers)
    assert resp.status == 401 and (await resp.json())["code"] == "SESSION_INVALID"


async def test_sessions_list_and_revoke_one(cms, person, runtime):
    from tests.content.factories import make_session

    viewer = await person("viewer")
    other_token = await make_session(runtime.db, runtime.clock, viewer.id)
    listed = await (await cms.get("/api/auth/sessions", headers=viewer.headers)).json()
    assert len(listed["data"]) == 2
    other = next(s for s in listed["data"] if not s["current"])
    intruder = await person("owner")
    refused = await cms.delete(f"/api/auth/sessions/{other['id']}", headers=intruder.headers)
    assert refused.status == 404
    resp = await cms.delete(f"/api/auth/sessions/{other['id']}", headers=viewer.headers)
    assert resp.status == 204
    assert (await cms.get("/api/auth/me", headers=bearer(other_token))).status == 401
    assert (await cms.get("/api/auth/me", headers=viewer.headers)).status == 200


async def test_session_expires_by_the_clock(cms, person, clock):
    viewer = await person("viewer")
    clock.advance(days=31)
    assert (await cms.get("/api/auth/me", headers=viewer.headers)).status == 401


async def test_per_ip_sign_in_limit_with_trusted_proxies(cms, person, settings, clock):
    object.__setattr__(settings, "trusted_proxies", ())
    viewer = await person("viewer")
    for _ in range(10):
        resp = await _login(cms, viewer.email, "wrong password")
        assert resp.status == 401
    resp = await _login(cms, viewer.email)
    assert resp.status == 429
    assert (await resp.json())["code"] == "RATE_LIMITED"
    assert int(resp.headers["Retry-After"]) > 0
    clock.advance(seconds=15 * 60)
    assert (await _login(cms, viewer.email)).status == 200


async def test_forwarded_for_is_believed_only_from_trusted_proxies(cms, person, settings):
    import ipaddress

    viewer = await person("viewer")
    # Untrusted: X-Forwarded-For is ignored, so varying it does not buy attempts.
    for i in range(10):
        await _login(cms, viewer.email, "wrong", headers={"X-Forwarded-For": f"10.0.0.{i}"})
    assert (await _login(cms, viewer.email, headers={"X-Forwarded-For": "10.9.9.9"})).status == 429
    # Behind a trusted proxy each client has its own budget.
    object.__setattr__(settings, "trusted_proxies", (ipaddress.ip_network("127.0.0.0/8"),))
    resp = await _login(cms, viewer.email, headers={"X-Forwarded-For": "203.0.113.7"})
    assert resp.status == 200


async def _login(cms, email, password=PASSWORD, headers=None, **extra):
    return await cms.post(
        "/api/auth/login", json={"email": email, "password": password, **extra}, headers=headers
    )


async def test_only_content_serves_the_cms_at_the_root_in_a_real_process(
    gateway_process, database_url
):
    import aiohttp

    gw = gateway_process(
        "--only",
        "content",
        env={
            "DATABASE_URL": database_url,
            "BOOTSTRAP_EMAIL": "root@example.com",
            "BOOTSTRAP_PASSWORD": "unattended owner pw",
            "RUN_WORKERS": "false",
        },
    )
    async with aiohttp.ClientSession() as http:
        login = await http.post(
            f"{gw.base_url}/api/auth/login",
            json={"email": "root@example.com", "password": "unattended owner pw"},
        )
        assert login.status == 200
        token = (await login.json())["token"]
        me = await http.get(f"{gw.base_url}/api/auth/me", headers=bearer(token))
        assert (await me.json())["user"]["role"] == "owner"


async def test_people_change_their_own_name_email_and_password(cms, person, runtime):
    from tests.content.factories import make_agent_key, make_session

    viewer = await person("viewer")
    other_session = await make_session(runtime.db, runtime.clock, viewer.id)
    resp = await cms.patch("/api/auth/me", json={"name": "Vera"}, headers=viewer.headers)
    assert resp.status == 200 and (await resp.json())["name"] == "Vera"
    resp = await cms.patch("/api/auth/me", json={"role": "owner"}, headers=viewer.headers)
    assert resp.status == 400 and (await resp.json())["details"]["fields"][0]["key"] == "role"
    resp = await cms.patch(
        "/api/auth/me",
        json={"password": "my new password", "currentPassword": "wrong"},
        headers=viewer.headers,
    )
    assert resp.status == 403 and (await resp.json())["code"] == "PASSWORD_INCORRECT"
    resp = await cms.patch(
        "/api/auth/me",
        json={
            "password": "my new password",
            "currentPassword": PASSWORD,
            "email": "vera@example.com",
        },
        headers=viewer.headers,
    )
    assert resp.status == 200 and (await resp.json())["email"] == "vera@example.com"
    # This session stays; the others end.
    assert (await cms.get("/api/auth/me", headers=viewer.headers)).status == 200
    assert (await cms.get("/api/auth/me", headers=bearer(other_session))).status == 401
    login = await _login(cms, "vera@example.com", "my new password")
    assert login.status == 200
    key = await make_agent_key(runtime.db, runtime.clock, viewer.id, ["content.read"])
    resp = await cms.patch("/api/auth/me", json={"name": "Bot"}, headers=bearer(key))
    assert resp.status == 403 and (await resp.json())["code"] == "KEY_FORBIDDEN"
