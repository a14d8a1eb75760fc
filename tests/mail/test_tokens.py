"""Verification and reset tokens: random, stored hashed, single use, expiring."""

from __future__ import annotations

from common.crypto import sha256_hex
from tests.mail.factories import (
    PASSWORD,
    cookie,
    make_account,
    make_session,
    outbox,
    signed_in,
    token_from,
)

INVALID = {
    "statusCode": 400,
    "name": "validation_error",
    "message": "token is invalid, used or expired",
}


async def _last_token(runtime, kind: str) -> str:
    messages = [msg for row, msg in await outbox(runtime) if row["kind"] == kind]
    return token_from(messages[-1])


async def test_verify_email_once(client, runtime):
    account, headers = await signed_in(runtime, verified=False)
    resp = await client.post("/api/auth/verify/send", headers=headers)
    assert resp.status == 202
    token = await _last_token(runtime, "verify_email")
    # Only the SHA-256 of the token is stored.
    stored = await runtime.db.fetch_val("SELECT token_hash FROM mail.account_tokens")
    assert stored == sha256_hex(token)

    resp = await client.post("/api/auth/verify", json={"token": token})
    assert resp.status == 200
    assert await resp.json() == {
        "object": "email_verification",
        "email": account.email,
        "verified": True,
    }
    me = await (await client.get("/api/auth/me", headers=headers)).json()
    assert me["email_verified"] is True

    reused = await client.post("/api/auth/verify", json={"token": token})
    assert (reused.status, await reused.json()) == (400, INVALID)
    # Already verified: nothing more to send.
    assert (await client.post("/api/auth/verify/send", headers=headers)).status == 409


async def test_verification_token_expires_after_24_hours(client, runtime, clock):
    _, headers = await signed_in(runtime, verified=False)
    await client.post("/api/auth/verify/send", headers=headers)
    token = await _last_token(runtime, "verify_email")
    clock.advance(hours=24)
    resp = await client.post("/api/auth/verify", json={"token": token})
    assert (resp.status, await resp.json()) == (400, INVALID)


async def test_a_new_verification_retires_the_old_link(client, runtime):
    _, headers = await signed_in(runtime, verified=False)
    await client.post("/api/auth/verify/send", headers=headers)
    first = await _last_token(runtime, "verify_email")
    await client.post("/api/auth/verify/send", headers=headers)
    assert (await client.post("/api/auth/verify", json={"token": first})).status == 400


async def test_garbage_tokens_are_refused(client):
    for token in ("nope", "x" * 500):
        resp = await client.post("/api/auth/verify", json={"token": token})
        assert (resp.status, await resp.json()) == (400, INVALID)


async def test_forgot_replies_identically_whether_or_not_the_address_exists(client, runtime):
    account = await make_account(runtime)
    known = await client.post("/api/auth/password/forgot", json={"email": account.email})
    unknown = await client.post("/api/auth/password/forgot", json={"email": "ghost@example.com"})
    assert known.status == unknown.status == 202
    assert await known.json() == await unknown.json()
    # The work happens in a job; only the real account gets mail.
    await runtime.jobs.run_due()
    resets = [(row, msg) for row, msg in await outbox(runtime) if row["kind"] == "password_reset"]
    assert [row["rcpt_to"] for row, _ in resets] == [account.email]


async def test_reset_password_ends_every_session_and_is_single_use(client, runtime):
    account = await make_account(runtime)
    session = cookie(await make_session(runtime, account))
    await client.post("/api/auth/password/forgot", json={"email": account.email})
    await runtime.jobs.run_due()
    token = await _last_token(runtime, "password_reset")

    resp = await client.post(
        "/api/auth/password/reset", json={"token": token, "password": "brand new password"}
    )
    assert resp.status == 200
    assert (await client.get("/api/auth/me", headers=session)).status == 401
    old = await client.post("/api/auth/login", json={"email": account.email, "password": PASSWORD})
    assert old.status == 401
    new = await client.post(
        "/api/auth/login", json={"email": account.email, "password": "brand new password"}
    )
    assert new.status == 200
    again = await client.post(
        "/api/auth/password/reset", json={"token": token, "password": "x" * 12}
    )
    assert (again.status, await again.json()) == (400, INVALID)
    notices = [
        msg["Subject"] for row, msg in await outbox(runtime) if row["kind"] == "security_notice"
    ]
    assert notices == ["Security notice: the password was reset"]


async def test_reset_token_expires_after_an_hour(client, runtime, clock):
    account = await make_account(runtime)
    await client.post("/api/auth/password/forgot", json={"email": account.email})
    await runtime.jobs.run_due()
    token = await _last_token(runtime, "password_reset")
    clock.advance(hours=1)
    resp = await client.post(
        "/api/auth/password/reset", json={"token": token, "password": "x" * 12}
    )
    assert (resp.status, await resp.json()) == (400, INVALID)


async def test_reset_validates_the_new_password(client, runtime):
    resp = await client.post("/api/auth/password/reset", json={"token": "t", "password": "short"})
    assert (resp.status, (await resp.json())["name"]) == (400, "validation_error")


async def test_email_change_is_verified_before_it_takes_effect(client, runtime):
    _account, headers = await signed_in(runtime, email_address="old@example.com")
    resp = await client.post(
        "/api/account/email",
        json={"email": "New@Example.com", "password": PASSWORD},
        headers=headers,
    )
    assert resp.status == 202
    assert await resp.json() == {
        "object": "email_change",
        "pending_email": "new@example.com",
        "verification_sent": True,
    }
    me = await (await client.get("/api/auth/me", headers=headers)).json()
    assert me["email"] == "old@example.com"
    sent = await outbox(runtime)
    assert sorted((row["kind"], row["rcpt_to"]) for row, _ in sent) == [
        ("security_notice", "old@example.com"),
        ("verify_email", "new@example.com"),
    ]
    token = token_from(next(msg for row, msg in sent if row["kind"] == "verify_email"))
    assert (await client.post("/api/auth/verify", json={"token": token})).status == 200
    me = await (await client.get("/api/auth/me", headers=headers)).json()
    assert (me["email"], me["email_verified"]) == ("new@example.com", True)


async def test_email_change_refusals(client, runtime):
    other = await make_account(runtime, email_address="taken@example.com")
    _, headers = await signed_in(runtime)
    wrong = await client.post(
        "/api/account/email",
        json={"email": "x@example.com", "password": "wrong pw"},
        headers=headers,
    )
    assert (wrong.status, (await wrong.json())["name"]) == (403, "forbidden")
    taken = await client.post(
        "/api/account/email", json={"email": other.email, "password": PASSWORD}, headers=headers
    )
    assert taken.status == 409


async def test_password_change_ends_every_other_session(client, runtime):
    account, headers = await signed_in(runtime)
    other = cookie(await make_session(runtime, account))
    wrong = await client.post(
        "/api/account/password",
        json={"current_password": "not it at all", "new_password": "another password"},
        headers=headers,
    )
    assert wrong.status == 403
    resp = await client.post(
        "/api/account/password",
        json={"current_password": PASSWORD, "new_password": "another password"},
        headers=headers,
    )
    assert resp.status == 200
    assert (await client.get("/api/auth/me", headers=headers)).status == 200
    assert (await client.get("/api/auth/me", headers=other)).status == 401
    kinds = [row["kind"] for row, _ in await outbox(runtime)]
    assert kinds == ["security_notice"]
