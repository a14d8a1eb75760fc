"""Stored sessions behind svc_session: cookie attributes, expiry, revocation."""

from __future__ import annotations

from http.cookies import SimpleCookie

from tests.mail.factories import PASSWORD, cookie, make_account, make_session, signed_in


def _set_cookie(resp) -> SimpleCookie:
    jar: SimpleCookie = SimpleCookie()
    for header in resp.headers.getall("Set-Cookie"):
        jar.load(header)
    return jar


async def test_login_sets_a_hardened_cookie(client, runtime):
    account = await make_account(runtime)
    resp = await client.post("/api/auth/login", json={"email": account.email, "password": PASSWORD})
    assert resp.status == 200
    morsel = _set_cookie(resp)["svc_session"]
    assert morsel["httponly"] is True
    assert morsel["samesite"] == "Lax"
    assert morsel["max-age"] == str(14 * 24 * 3600)
    assert morsel["path"] == "/"
    assert not morsel["secure"]  # PUBLIC_URL is http in tests
    # The cookie is what signs later requests in.
    me = await client.get("/api/auth/me", headers=cookie(morsel.value))
    assert (await me.json())["email"] == account.email


async def test_cookie_is_secure_when_public_url_is_https(make_client, runtime):
    client = await make_client(public_url="https://mail.example.com")
    account = await make_account(runtime)
    resp = await client.post("/api/auth/login", json={"email": account.email, "password": PASSWORD})
    assert resp.status == 200
    assert _set_cookie(resp)["svc_session"]["secure"] is True


async def test_session_expires_after_14_days(client, runtime, clock):
    _, headers = await signed_in(runtime)
    clock.advance(days=14, seconds=-1)
    assert (await client.get("/api/auth/me", headers=headers)).status == 200
    clock.advance(seconds=1)
    resp = await client.get("/api/auth/me", headers=headers)
    assert resp.status == 401
    assert (await resp.json())["name"] == "unauthorized"


async def test_use_does_not_extend_a_session(client, runtime, clock):
    _, headers = await signed_in(runtime)
    for _ in range(14):
        clock.advance(days=1)
        await client.get("/api/auth/me", headers=headers)
    assert (await client.get("/api/auth/me", headers=headers)).status == 401


async def test_logout_takes_effect_on_the_next_request(client, runtime):
    _, headers = await signed_in(runtime)
    resp = await client.post("/api/auth/logout", headers=headers)
    assert resp.status == 204
    assert _set_cookie(resp)["svc_session"].value == ""
    assert (await client.get("/api/auth/me", headers=headers)).status == 401
    assert (await client.post("/api/auth/logout", headers=headers)).status == 401


async def test_unknown_or_garbage_cookie_is_unauthenticated(client):
    for value in ("nope", "x" * 500):
        resp = await client.get("/api/auth/me", headers=cookie(value))
        assert resp.status == 401


async def test_sessions_list_shows_ip_agent_and_current(client, runtime, clock):
    account, headers = await signed_in(runtime)
    clock.advance(120)
    await make_session(runtime, account, ip="198.51.100.7", user_agent="Thunderbird")
    resp = await client.get("/api/account/sessions", headers={**headers, "User-Agent": "Firefox"})
    body = await resp.json()
    assert body["total"] == 2
    by_agent = {s["user_agent"]: s for s in body["data"]}
    # The current session was seen just now, from this client.
    assert by_agent["Firefox"]["current"] is True
    assert by_agent["Firefox"]["ip"] == "127.0.0.1"
    assert by_agent["Firefox"]["last_seen_at"] == clock.now().isoformat()
    assert by_agent["Thunderbird"] == {
        "object": "session",
        "id": by_agent["Thunderbird"]["id"],
        "created_at": clock.now().isoformat(),
        "last_seen_at": clock.now().isoformat(),
        "expires_at": by_agent["Thunderbird"]["expires_at"],
        "ip": "198.51.100.7",
        "user_agent": "Thunderbird",
        "current": False,
    }


async def test_revoke_others_keeps_only_this_session(client, runtime):
    account, headers = await signed_in(runtime)
    others = [cookie(await make_session(runtime, account)) for _ in range(2)]
    _, stranger = await signed_in(runtime)
    resp = await client.post("/api/account/sessions/revoke-others", headers=headers)
    assert resp.status == 200
    assert await resp.json() == {"object": "sessions_revoked", "revoked": 2}
    for other in others:
        assert (await client.get("/api/auth/me", headers=other)).status == 401
    assert (await client.get("/api/auth/me", headers=headers)).status == 200
    assert (await client.get("/api/auth/me", headers=stranger)).status == 200


async def test_revoke_one_session(client, runtime):
    account, headers = await signed_in(runtime)
    other = cookie(await make_session(runtime, account, user_agent="old phone"))
    data = (await (await client.get("/api/account/sessions", headers=headers)).json())["data"]
    target = next(s["id"] for s in data if s["user_agent"] == "old phone")
    assert (await client.delete(f"/api/account/sessions/{target}", headers=headers)).status == 204
    assert (await client.get("/api/auth/me", headers=other)).status == 401
    assert (await client.get("/api/auth/me", headers=headers)).status == 200


async def test_expired_sessions_are_swept(client, runtime, clock):
    _, _headers = await signed_in(runtime)
    clock.advance(days=15)
    await runtime.jobs.schedule_recurring()
    await runtime.jobs.run_due()
    assert await runtime.db.fetch_val("SELECT count(*) FROM mail.sessions") == 0
