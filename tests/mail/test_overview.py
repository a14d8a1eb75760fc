"""GET /api/overview: the Overview's numbers, from the event log and the counters."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from mail.overview import service as overview_service
from mail.transfers import store as transfers_store
from mta import mailstore
from tests.mail.factories import signed_in
from tests.mail.hosting_fixtures import add_domain, settings  # noqa: F401


async def events(runtime: Any, account_id: str, type_: str, n: int, days_ago: float) -> None:
    when = runtime.clock.now() - timedelta(days=days_ago)
    async with runtime.db.transaction() as conn:
        for i in range(n):
            await mailstore.record_event(conn, account_id, type_, {"subject": f"{type_} {i}"}, when)


async def conn_execute(conn: Any, transfer_id: str, state: str) -> None:
    """A transfer moved on as its runner would (a terminal state erases the password)."""
    from common.db import execute

    await execute(
        conn,
        "UPDATE mail.transfers SET state = %s,"
        " password_sealed = CASE WHEN %s IN ('completed', 'failed', 'cancelled') THEN NULL"
        " ELSE password_sealed END WHERE id = %s",
        (state, state, transfer_id),
    )


async def test_the_overview_counts_mail_storage_rates_and_recent_activity(client, runtime):
    account, headers = await signed_in(runtime)
    other, _ = await signed_in(runtime)
    domain = await add_domain(client, headers, "over.example")
    await add_domain(client, headers, "view.example")
    for local, quota in (("ann", 1000), ("bob", 3000)):
        resp = await client.post(
            f"/api/domains/{domain['id']}/addresses",
            json={"local_part": local, "password": "a long mailbox password", "quota_bytes": quota},
            headers=headers,
        )
        assert resp.status == 201
        address = await resp.json()
        await runtime.db.execute(
            "INSERT INTO mta.quota_usage (address_id, used_bytes, emails) VALUES (%s, %s, %s)",
            (address["id"], 400, 4),
        )
    await events(runtime, account.id, "email.received", 3, 0.1)
    await events(runtime, account.id, "email.received", 2, 5)
    await events(runtime, account.id, "email.received", 7, 40)  # outside the 30 days
    await events(runtime, account.id, "email.sent", 8, 2)
    await events(runtime, account.id, "email.sent", 2, 0.5)
    await events(runtime, account.id, "email.bounced", 1, 2)
    await events(runtime, account.id, "email.complained", 1, 1)
    await events(runtime, other.id, "email.received", 50, 0.1)  # another account's
    resp = await client.get("/api/overview", headers=headers)
    assert resp.status == 200
    body = await resp.json()
    assert body["object"] == "overview"
    # The plan and its usage, from the entitlement function (the built-in plan: no limits).
    assert body["plan"]["plan"]["id"] == "free" and body["plan"]["over_limits"] == []
    assert body["plan"]["usage"]["domains"] == {"used": 2, "limit": None, "over": False}
    assert body["plan"]["usage"]["addresses"]["used"] == 2
    assert body["domains"]["total"] == 2
    assert [d["name"] for d in body["domains"]["data"]] == ["over.example", "view.example"]
    assert body["domains"]["data"][0]["address_count"] == 2
    assert sum(body["domains"]["dns_status"].values()) == 2
    assert body["addresses"] == {"total": 2}
    assert body["storage"] == {"used_bytes": 800, "emails": 8, "quota_bytes": 4000}
    assert body["mail"]["last_24h"]["received"] == 3 and body["mail"]["last_24h"]["sent"] == 2
    assert body["mail"]["last_30d"]["received"] == 5 and body["mail"]["last_30d"]["sent"] == 10
    daily = body["mail"]["daily"]
    assert len(daily) == 30
    assert daily[-1]["date"] == runtime.clock.now().date().isoformat()
    assert sum(d["received"] for d in daily) == 5 and sum(d["sent"] for d in daily) == 10
    five_days_ago = (runtime.clock.now() - timedelta(days=5)).date().isoformat()
    assert next(d for d in daily if d["date"] == five_days_ago)["received"] == 2
    assert body["rates"] == {"bounce_rate": 0.1, "complaint_rate": 0.1}
    recent = body["recent_activity"]
    assert len(recent) == overview_service.RECENT
    assert recent[0]["created_at"] >= recent[-1]["created_at"]
    assert all(r["type"] != "email.received" or "subject" in r["data"] for r in recent)
    assert body["webhooks"] == {"failing": []}
    assert body["transfers"] == {"running": []}
    # Closed days rolled up into the daily counts: the same numbers, read from there.
    async with runtime.db.transaction() as conn:
        assert await mailstore.roll_up_event_counts(conn, runtime.clock.now()) > 0
        assert await mailstore.roll_up_event_counts(conn, runtime.clock.now()) == 0
    rolled = await runtime.db.fetch_val(
        "SELECT sum(count) FROM mta.event_days WHERE account_id = %s", (account.id,)
    )
    assert rolled >= 5  # at least the days 5, 2 and 40 back
    await events(runtime, account.id, "email.received", 1, 0)
    again = await (await client.get("/api/overview", headers=headers)).json()
    assert again["mail"]["last_30d"]["received"] == 6
    assert again["mail"]["daily"][:-1] == daily[:-1]
    assert again["mail"]["daily"][-1]["received"] == daily[-1]["received"] + 1
    assert again["rates"] == body["rates"]


async def test_an_empty_account_failing_webhooks_and_running_transfers(client, runtime):
    account, headers = await signed_in(runtime)
    other, _ = await signed_in(runtime)
    domain = await add_domain(client, headers, "moving.example")
    resp = await client.post(
        f"/api/domains/{domain['id']}/addresses",
        json={"local_part": "ann", "password": "a long mailbox password"},
        headers=headers,
    )
    address = await resp.json()
    resp = await client.post(
        f"/api/domains/{domain['id']}/addresses",
        json={"local_part": "bob", "password": "a long mailbox password"},
        headers=headers,
    )
    second = await resp.json()
    now = runtime.clock.now()
    async with runtime.db.transaction() as conn:
        for owner, state, into in (
            (account.id, "completed", address),
            (account.id, "running", address),
            (other.id, "queued", second),
        ):
            transfer_id = await transfers_store.insert(
                conn,
                account_id=owner,
                address_id=into["id"],
                host="imap.old.example",
                port=993,
                tls="implicit",
                username="ann",
                password_sealed="sealed",
                now=now,
            )
            if state != "queued":
                await conn_execute(conn, transfer_id, state)
    await runtime.db.execute(
        "INSERT INTO mail.webhooks (account_id, endpoint, events, secret_sealed, secret_hint,"
        " consecutive_failures, failing_since, created_at, updated_at)"
        " VALUES (%s, 'https://x.example/h', '{email.sent}', 's', 'whsec_abcd', 3, %s, %s, %s)",
        (account.id, runtime.clock.now(), runtime.clock.now(), runtime.clock.now()),
    )
    body = await (await client.get("/api/overview", headers=headers)).json()
    assert body["domains"]["total"] == 1 and body["storage"]["used_bytes"] == 0
    assert body["rates"] == {"bounce_rate": None, "complaint_rate": None}
    assert all(d["received"] == 0 and d["sent"] == 0 for d in body["mail"]["daily"])
    [failing] = body["webhooks"]["failing"]
    assert failing["consecutive_failures"] == 3 and "secret" not in str(failing)
    # Only this account's transfers that are still under way, as GET /api/transfers/:id.
    [running] = body["transfers"]["running"]
    assert running["object"] == "transfer" and running["state"] == "running"
    assert running["source"]["host"] == "imap.old.example" and "password" not in str(running)
    assert (await client.get("/api/overview")).status == 401
