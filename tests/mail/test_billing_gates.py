"""Plans gate every feature and limit from one function: 402 plan_required, 413 quota_exceeded."""

from __future__ import annotations

import asyncio

from mail.billing import entitlement
from tests.mail.billing_helpers import plans_file, settings  # noqa: F401
from tests.mail.factories import signed_in
from tests.mail.hosting_fixtures import add_domain, cloudflare, dns_server  # noqa: F401
from tests.mail.sending_helpers import api_key, bearer, sending_domain

MESSAGE = {"from": "hello@example.com", "to": "ann@example.org", "subject": "Hi", "text": "x"}


async def error_of(resp, status: int, name: str, mentions: str) -> None:
    body = await resp.json()
    assert resp.status == status, body
    assert body["name"] == name and body["statusCode"] == status
    assert mentions in body["message"], body


async def move_to(client, headers, plan_id: str) -> None:
    resp = await client.post("/api/subscription", json={"plan_id": plan_id}, headers=headers)
    assert resp.status == 200, await resp.text()


async def test_plans_are_listed_by_position_and_the_entitlement_shows_usage(client, runtime):
    _, headers = await signed_in(runtime)
    plans = await (await client.get("/api/plans", headers=headers)).json()
    assert [p["id"] for p in plans["data"]] == ["starter", "pro", "locked"]
    starter = plans["data"][0]
    assert starter["default"] is True and starter["limits"]["domains"] == 1
    assert starter["features"]["filters"] is False and starter["features"]["api_sending"] is True

    await add_domain(client, headers, "example.com")
    ent = await (await client.get("/api/entitlement", headers=headers)).json()
    assert ent["plan"]["id"] == "starter"
    assert ent["usage"]["domains"] == {"used": 1, "limit": 1, "over": False}
    assert ent["usage"]["addresses"]["used"] == 0
    assert ent["features"]["webhooks"] is False and ent["over_limits"] == []
    assert (await client.get("/api/entitlement")).status == 401


async def test_domains_limit_413_and_feature_402(client, runtime):
    _, headers = await signed_in(runtime)
    await add_domain(client, headers, "example.com")
    resp = await client.post("/api/domains", json={"name": "second.example"}, headers=headers)
    await error_of(resp, 413, "quota_exceeded", "domains")
    await move_to(client, headers, "locked")
    resp = await client.post("/api/domains", json={"name": "third.example"}, headers=headers)
    await error_of(resp, 402, "plan_required", "custom_domains")


async def test_addresses_limit_413(client, runtime):
    _, headers = await signed_in(runtime)
    domain = await add_domain(client, headers, "example.com")
    url = f"/api/domains/{domain['id']}/addresses"
    body = {"local_part": "ann", "password": "correct horse battery"}
    assert (await client.post(url, json=body, headers=headers)).status == 201
    resp = await client.post(url, json={**body, "local_part": "bob"}, headers=headers)
    await error_of(resp, 413, "quota_exceeded", "addresses")


async def test_api_keys_limit_413_and_feature_402(client, runtime):
    _, headers = await signed_in(runtime)
    await api_key(client, headers)
    resp = await client.post("/api/api-keys", json={"name": "two"}, headers=headers)
    await error_of(resp, 413, "quota_exceeded", "api_keys")
    await move_to(client, headers, "locked")
    resp = await client.post("/api/api-keys", json={"name": "three"}, headers=headers)
    await error_of(resp, 402, "plan_required", "api_sending")


async def test_filters_feature_402(client, runtime):
    _, headers = await signed_in(runtime)
    body = {"address_id": "00000000-0000-4000-8000-000000000000", "name": "f", "script": "keep;"}
    resp = await client.post("/api/filters", json=body, headers=headers)
    await error_of(resp, 402, "plan_required", "filters")


async def test_sends_per_month_413_and_api_sending_402_at_the_sending_api(
    client,
    runtime,
    clock,
    dns_server,  # noqa: F811
):
    _, headers = await signed_in(runtime)
    await sending_domain(client, headers, dns_server)
    key = bearer(await api_key(client, headers))
    for _ in range(2):
        resp = await client.post("/api/emails", json=MESSAGE, headers=key)
        assert resp.status == 200, await resp.text()
    resp = await client.post("/api/emails", json=MESSAGE, headers=key)
    await error_of(resp, 413, "quota_exceeded", "sends_per_month")
    assert await runtime.db.fetch_val("SELECT count(*) FROM mail.sent_emails") == 2
    await move_to(client, headers, "locked")
    resp = await client.post("/api/emails", json=MESSAGE, headers=key)
    await error_of(resp, 402, "plan_required", "api_sending")
    await move_to(client, headers, "starter")
    # A batch that does not fit is refused whole; the next calendar month has a new allowance.
    clock.advance(days=31)
    batch = [MESSAGE, MESSAGE, MESSAGE]
    resp = await client.post("/api/emails/batch", json=batch, headers=key)
    await error_of(resp, 413, "quota_exceeded", "sends_per_month")
    resp = await client.post("/api/emails/batch", json=batch[:2], headers=key)
    assert resp.status == 200, await resp.text()
    assert await runtime.db.fetch_val("SELECT count(*) FROM mail.sent_emails") == 4


async def test_two_requests_racing_for_the_last_slot_one_wins(client, runtime):
    _, headers = await signed_in(runtime)
    domain = await add_domain(client, headers, "example.com")
    url = f"/api/domains/{domain['id']}/addresses"

    async def create(local: str) -> int:
        body = {"local_part": local, "password": "correct horse battery"}
        return (await client.post(url, json=body, headers=headers)).status

    statuses = await asyncio.gather(*(create(f"user{i}") for i in range(6)))
    assert sorted(statuses) == [201, 413, 413, 413, 413, 413]
    assert await runtime.db.fetch_val("SELECT count(*) FROM mail.addresses") == 1


async def test_reserve_waits_for_the_transaction_holding_the_slot(client, runtime, clock):
    """The lock, step by step: the second reservation counts only after the first commits."""
    account, headers = await signed_in(runtime)
    await client.get("/api/plans", headers=headers)  # plans synchronised at start
    first_holds = asyncio.Event()
    release = asyncio.Event()

    async def first() -> None:
        async with runtime.db.transaction() as conn:
            await entitlement.reserve(conn, account.id, "domains", now=clock.now())
            await conn_insert_domain(conn, account.id, "a.example", clock.now())
            first_holds.set()
            await release.wait()

    async def second() -> str:
        await first_holds.wait()
        async with runtime.db.transaction() as conn:
            try:
                await entitlement.reserve(conn, account.id, "domains", now=clock.now())
            except Exception as exc:
                return getattr(exc, "name", repr(exc))
            return "reserved"

    task_first = asyncio.create_task(first())
    task_second = asyncio.create_task(second())
    await first_holds.wait()
    await asyncio.sleep(0.2)
    assert not task_second.done()  # blocked on the account's row
    release.set()
    await task_first
    assert await task_second == "quota_exceeded"


async def conn_insert_domain(conn, account_id: str, name: str, now) -> None:
    from mail.domains import store

    await store.insert(conn, account_id=account_id, name=name, description="", now=now)


async def test_a_downgrade_deletes_nothing_and_makes_the_excess_read_only(client, runtime):
    _, headers = await signed_in(runtime)
    await move_to(client, headers, "pro")  # a paid plan: goes through checkout
    # Put the account on pro as the provider's event would, then add two domains.
    account_id = await runtime.db.fetch_val("SELECT account_id::text FROM mail.billing_accounts")
    await runtime.db.execute(
        "UPDATE mail.billing_accounts SET plan_id = 'pro', status = 'active' WHERE account_id = %s",
        (account_id,),
    )
    one = await add_domain(client, headers, "one.example")
    await add_domain(client, headers, "two.example")
    await runtime.db.execute(
        "UPDATE mail.billing_accounts SET plan_id = NULL, status = 'lapsed' WHERE account_id = %s",
        (account_id,),
    )
    ent = await (await client.get("/api/entitlement", headers=headers)).json()
    assert ent["plan"]["id"] == "starter" and ent["over_limits"] == ["domains"]
    assert ent["usage"]["domains"] == {"used": 2, "limit": 1, "over": True}
    listed = await (await client.get("/api/domains", headers=headers)).json()
    assert listed["total"] == 2  # nothing deleted
    resp = await client.patch(
        f"/api/domains/{one['id']}", json={"description": "x"}, headers=headers
    )
    await error_of(resp, 413, "quota_exceeded", "read-only")
    # Deleting is allowed; back under the limit, the rest is writable again.
    assert (await client.delete(f"/api/domains/{one['id']}", headers=headers)).status == 204
    (left,) = [d for d in listed["data"] if d["id"] != one["id"]]
    resp = await client.patch(
        f"/api/domains/{left['id']}", json={"description": "y"}, headers=headers
    )
    assert resp.status == 200, await resp.text()


async def test_transfers_feature_402(client, runtime):
    from tests.mail.transfer_fixtures import make_destination

    account, headers = await signed_in(runtime)
    address_id = await make_destination(runtime, account)
    body = {"address_id": address_id, "host": "imap.example.org", "username": "b", "password": "p"}
    resp = await client.post("/api/transfers", json=body, headers=headers)
    await error_of(resp, 402, "plan_required", "transfers")
    assert await runtime.db.fetch_val("SELECT count(*) FROM mail.transfers") == 0


async def test_webhooks_feature_402_and_limit_413(client, runtime):
    _, headers = await signed_in(runtime)
    hook = {"endpoint": "https://hooks.example.org/mail"}
    resp = await client.post("/api/webhooks", json=hook, headers=headers)
    await error_of(resp, 402, "plan_required", "webhooks")
    await runtime.db.execute(
        """UPDATE mail.plans SET features = features || '{"webhooks": true}',
                                 limits = limits || '{"webhooks": 1}' WHERE id = 'starter'"""
    )
    assert (await client.post("/api/webhooks", json=hook, headers=headers)).status == 201
    resp = await client.post("/api/webhooks", json=hook, headers=headers)
    await error_of(resp, 413, "quota_exceeded", "webhooks")
    ent = await (await client.get("/api/entitlement", headers=headers)).json()
    assert ent["usage"]["webhooks"] == {"used": 1, "limit": 1, "over": False}
    overview = await (await client.get("/api/overview", headers=headers)).json()
    assert overview["plan"]["usage"]["webhooks"] == ent["usage"]["webhooks"]
    assert overview["plan"]["plan"]["id"] == "starter"
