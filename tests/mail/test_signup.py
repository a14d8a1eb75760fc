"""Sign-up: the first account owns the instance; later ones follow SIGNUPS_ENABLED."""

from __future__ import annotations

from tests.mail.factories import make_account, outbox, signed_in

NEW = {"email": "First@Example.com", "password": "a long enough password", "name": "Ada"}


async def test_first_signup_owns_the_instance_and_is_signed_in(client, runtime):
    status = await (await client.get("/api/auth/signups")).json()
    assert status == {"object": "signups", "open": True, "first_account": True}
    resp = await client.post("/api/auth/signup", json=NEW)
    assert resp.status == 201, await resp.text()
    body = await resp.json()
    assert body["object"] == "account"
    assert (body["email"], body["name"], body["is_owner"]) == ("first@example.com", "Ada", True)
    assert body["email_verified"] is False
    assert "password_hash" not in body
    # The reply's cookie signs the new account in.
    me = await client.get("/api/auth/me")
    assert (await me.json())["id"] == body["id"]
    # A verification message was queued.
    [(row, msg)] = await outbox(runtime)
    assert row["kind"] == "verify_email"
    assert msg["To"] == "first@example.com"


async def test_second_signup_is_not_the_owner(client, runtime):
    await make_account(runtime, is_owner=True)
    resp = await client.post("/api/auth/signup", json=NEW)
    assert resp.status == 201
    assert (await resp.json())["is_owner"] is False


async def test_closed_signups_admit_only_the_first(make_client, runtime):
    client = await make_client({"SIGNUPS_ENABLED": "false"})
    status = await (await client.get("/api/auth/signups")).json()
    assert status == {"object": "signups", "open": True, "first_account": True}
    assert (await client.post("/api/auth/signup", json=NEW)).status == 201
    status = await (await client.get("/api/auth/signups")).json()
    assert status == {"object": "signups", "open": False, "first_account": False}
    resp = await client.post("/api/auth/signup", json={**NEW, "email": "second@example.com"})
    assert resp.status == 403
    assert await resp.json() == {
        "statusCode": 403,
        "name": "forbidden",
        "message": "signups are closed on this instance",
    }


async def test_duplicate_email_is_a_conflict(client, runtime):
    await make_account(runtime, email_address="first@example.com")
    resp = await client.post("/api/auth/signup", json=NEW)
    assert resp.status == 409
    assert (await resp.json())["name"] == "conflict"


async def test_signup_validation(client):
    cases = [
        ({"password": "long enough pw"}, 422, "missing_required_field"),
        ({"email": "a@example.com"}, 422, "missing_required_field"),
        ({"email": "not an address", "password": "long enough pw"}, 400, "validation_error"),
        ({"email": "a@example.com", "password": "short"}, 400, "validation_error"),
        ({"email": "a@example.com", "password": 12345678}, 400, "validation_error"),
        (
            {"email": "a@example.com", "password": "long enough pw", "name": "x" * 101},
            400,
            "validation_error",
        ),
        (
            {"email": "a@example.com", "password": "long enough pw", "admin": True},
            400,
            "validation_error",
        ),
    ]
    for body, status, name in cases:
        resp = await client.post("/api/auth/signup", json=body)
        assert (resp.status, (await resp.json())["name"]) == (status, name), body


async def test_referral_code_links_the_signup(client, runtime):
    referrer, headers = await signed_in(runtime, is_owner=True)
    ref = await (await client.get("/api/account/referrals", headers=headers)).json()
    assert ref == {
        "object": "referrals",
        "code": referrer.referral_code,
        "url": f"http://localhost:4300/signup?ref={referrer.referral_code}",
        "signups": 0,
        "verified_signups": 0,
    }
    resp = await client.post(
        "/api/auth/signup", json={**NEW, "referral_code": referrer.referral_code}
    )
    assert resp.status == 201
    # An unknown code does not stop a sign-up.
    resp = await client.post(
        "/api/auth/signup",
        json={**NEW, "email": "b@example.com", "referral_code": "nope"},
    )
    assert resp.status == 201
    client.session.cookie_jar.clear()  # act as the referrer again, not the newcomer
    ref = await (await client.get("/api/account/referrals", headers=headers)).json()
    assert (ref["signups"], ref["verified_signups"]) == (1, 0)
