"""Account profile, notification preferences and deletion."""

from __future__ import annotations

from tests.mail.factories import PASSWORD, cookie, make_account, make_session, outbox, signed_in


async def test_update_profile(client, runtime):
    _, headers = await signed_in(runtime, name="Old")
    resp = await client.patch("/api/account", json={"name": "  New Name "}, headers=headers)
    assert resp.status == 200
    body = await resp.json()
    assert (body["object"], body["name"]) == ("account", "New Name")
    bad = await client.patch("/api/account", json={"name": 5}, headers=headers)
    assert (bad.status, (await bad.json())["name"]) == (400, "validation_error")
    unknown = await client.patch("/api/account", json={"email": "x@y.z"}, headers=headers)
    assert unknown.status == 400


async def test_notification_preferences(client, runtime):
    _, headers = await signed_in(runtime)
    me = await (await client.get("/api/auth/me", headers=headers)).json()
    assert me["notifications"] == {
        "dns_alerts": True,
        "quota_alerts": True,
        "billing": True,
        "product_news": False,
    }
    resp = await client.patch(
        "/api/account/notifications", json={"product_news": True, "billing": False}, headers=headers
    )
    assert await resp.json() == {
        "object": "notification_preferences",
        "dns_alerts": True,
        "quota_alerts": True,
        "billing": False,
        "product_news": True,
    }
    me = await (await client.get("/api/auth/me", headers=headers)).json()
    assert me["notifications"]["product_news"] is True
    for body in ({"product_news": "yes"}, {"spam": True}, {"billing": None}):
        bad = await client.patch("/api/account/notifications", json=body, headers=headers)
        assert (bad.status, (await bad.json())["name"]) == (400, "validation_error")


async def test_delete_account_removes_what_it_owns(client, runtime):
    account, headers = await signed_in(runtime)
    other_session = cookie(await make_session(runtime, account))
    wrong = await client.delete(
        "/api/account", json={"password": "not the password"}, headers=headers
    )
    assert wrong.status == 403
    missing = await client.delete("/api/account", headers=headers)
    assert missing.status == 422
    resp = await client.delete("/api/account", json={"password": PASSWORD}, headers=headers)
    assert resp.status == 204
    for h in (headers, other_session):
        assert (await client.get("/api/auth/me", headers=h)).status == 401
    for table in ("accounts", "sessions", "account_tokens"):
        assert await runtime.db.fetch_val(f"SELECT count(*) FROM mail.{table}") == 0
    # The farewell notice survives its account.
    [(row, msg)] = await outbox(runtime)
    assert (row["rcpt_to"], msg["Subject"]) == (
        account.email,
        "Security notice: the account was deleted",
    )


async def test_owner_cannot_leave_other_accounts_ownerless(client, runtime):
    _, headers = await signed_in(runtime, is_owner=True)
    await make_account(runtime)
    resp = await client.delete("/api/account", json={"password": PASSWORD}, headers=headers)
    assert resp.status == 403
    assert (await client.get("/api/auth/me", headers=headers)).status == 200
