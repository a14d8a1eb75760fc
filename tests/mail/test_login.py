"""POST /api/auth/login: identical replies and identical work for unknown and wrong."""

from __future__ import annotations

import pyotp

import mail.auth.service
from common import passwords
from tests.mail.factories import PASSWORD, make_account, signed_in


async def test_login_with_the_right_password(client, runtime):
    account = await make_account(runtime, email_address="ana@example.com")
    resp = await client.post(
        "/api/auth/login", json={"email": "Ana@Example.com", "password": PASSWORD}
    )
    assert resp.status == 200
    body = await resp.json()
    assert body["object"] == "account"
    assert body["id"] == account.id
    assert "password_hash" not in body and "totp_secret" not in body


async def test_unknown_address_and_wrong_password_reply_identically(client, runtime, monkeypatch):
    account = await make_account(runtime)
    calls: list[str | None] = []

    async def counting_verify(password_hash: str | None, password: str) -> bool:
        calls.append(password_hash)
        return await passwords.verify_password(password_hash, password)

    monkeypatch.setattr(mail.auth.service, "verify_password", counting_verify)

    wrong = await client.post(
        "/api/auth/login", json={"email": account.email, "password": "nope-nope"}
    )
    assert calls == [account.password_hash]
    unknown = await client.post(
        "/api/auth/login", json={"email": "nobody@example.com", "password": "nope-nope"}
    )
    # The unknown address ran one verification too, against the dummy hash.
    assert calls == [account.password_hash, None]

    assert wrong.status == unknown.status == 401
    assert (
        await wrong.json()
        == await unknown.json()
        == {
            "statusCode": 401,
            "name": "unauthorized",
            "message": "invalid email or password",
        }
    )
    assert "Set-Cookie" not in wrong.headers and "Set-Cookie" not in unknown.headers


async def test_each_login_is_a_new_session(client, runtime):
    account = await make_account(runtime)
    for _ in range(2):
        resp = await client.post(
            "/api/auth/login", json={"email": account.email, "password": PASSWORD}
        )
        assert resp.status == 200
    count = await runtime.db.fetch_val(
        "SELECT count(*) FROM mail.sessions WHERE account_id = %s", (account.id,)
    )
    assert count == 2


async def _enable_totp(client, headers, clock) -> str:
    setup = await (await client.post("/api/auth/totp/setup", headers=headers)).json()
    code = pyotp.TOTP(setup["secret"]).at(clock.now())
    resp = await client.post("/api/auth/totp/enable", json={"code": code}, headers=headers)
    assert resp.status == 200, await resp.text()
    assert (await resp.json())["totp_enabled"] is True
    return setup["secret"]


async def test_totp_setup_gives_secret_and_uri(client, runtime):
    account, headers = await signed_in(runtime, email_address="tess@example.com")
    resp = await client.post("/api/auth/totp/setup", headers=headers)
    assert resp.status == 200
    body = await resp.json()
    assert body["object"] == "totp_setup"
    assert body["otpauth_uri"] == pyotp.TOTP(body["secret"]).provisioning_uri(
        name="tess@example.com", issuer_name="localhost"
    )
    # Not enabled until confirmed; the secret is stored sealed, never in clear.
    me = await (await client.get("/api/auth/me", headers=headers)).json()
    assert me["totp_enabled"] is False
    stored = await runtime.db.fetch_val(
        "SELECT totp_pending_secret FROM mail.accounts WHERE id = %s", (account.id,)
    )
    assert body["secret"] not in stored


async def test_enable_refuses_a_wrong_code(client, runtime, clock):
    _, headers = await signed_in(runtime)
    await client.post("/api/auth/totp/setup", headers=headers)
    resp = await client.post("/api/auth/totp/enable", json={"code": "000000"}, headers=headers)
    assert resp.status == 400
    assert (await resp.json())["name"] == "validation_error"
    resp = await client.post("/api/auth/totp/enable", json={}, headers=headers)
    assert resp.status == 422


async def test_enable_needs_setup_first(client, runtime):
    _, headers = await signed_in(runtime)
    resp = await client.post("/api/auth/totp/enable", json={"code": "123456"}, headers=headers)
    assert resp.status == 409


async def test_login_asks_for_the_totp_code_once_enabled(client, runtime, clock):
    account, headers = await signed_in(runtime)
    secret = await _enable_totp(client, headers, clock)
    creds = {"email": account.email, "password": PASSWORD}

    missing = await client.post("/api/auth/login", json=creds)
    assert missing.status == 422
    assert await missing.json() == {
        "statusCode": 422,
        "name": "missing_required_field",
        "message": "totp_code is required",
    }
    wrong = await client.post("/api/auth/login", json={**creds, "totp_code": "000000"})
    assert wrong.status == 401
    assert (await wrong.json())["message"] == "invalid two-factor code"
    # A wrong password with a code still says only "invalid email or password".
    resp = await client.post(
        "/api/auth/login", json={**creds, "password": "wrong-one", "totp_code": "000000"}
    )
    assert (await resp.json())["message"] == "invalid email or password"

    clock.advance(60)
    code = pyotp.TOTP(secret).at(clock.now())
    ok = await client.post("/api/auth/login", json={**creds, "totp_code": code})
    assert ok.status == 200
    # The same code is never accepted twice.
    replay = await client.post("/api/auth/login", json={**creds, "totp_code": code})
    assert replay.status == 401


async def test_totp_attempts_are_limited_per_account(client, runtime, clock):
    account, headers = await signed_in(runtime)
    await _enable_totp(client, headers, clock)
    clock.advance(60)  # a fresh window: enabling spent one attempt
    creds = {"email": account.email, "password": PASSWORD, "totp_code": "000000"}
    statuses = [(await client.post("/api/auth/login", json=creds)).status for _ in range(6)]
    assert statuses == [401] * 5 + [429]


async def test_disable_asks_for_the_password(client, runtime, clock):
    account, headers = await signed_in(runtime)
    await _enable_totp(client, headers, clock)
    resp = await client.post(
        "/api/auth/totp/disable", json={"password": "wrong-one"}, headers=headers
    )
    assert resp.status == 403
    assert (await resp.json())["name"] == "forbidden"
    resp = await client.post("/api/auth/totp/disable", json={"password": PASSWORD}, headers=headers)
    assert resp.status == 200
    assert (await resp.json())["totp_enabled"] is False
    login = await client.post(
        "/api/auth/login", json={"email": account.email, "password": PASSWORD}
    )
    assert login.status == 200
    again = await client.post(
        "/api/auth/totp/disable", json={"password": PASSWORD}, headers=headers
    )
    assert again.status == 409
