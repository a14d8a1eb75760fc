"""Subscriptions through Stripe (a local stand-in) and its signed webhook, the clock moved by hand."""

from __future__ import annotations

import json

from tests.mail.billing_helpers import (  # noqa: F401
    WEBHOOK_SECRET,
    event,
    plans_file,
    post_event,
    settings,
    signed,
)
from tests.mail.factories import signed_in
from tests.mail.hosting_fixtures import cloudflare, dns_server  # noqa: F401

DAY = 86400


def now_ts(clock) -> int:
    return int(clock.now().timestamp())


async def entitlement(client, headers) -> dict:
    return await (await client.get("/api/entitlement", headers=headers)).json()


async def activity(runtime, account_id: str) -> list[str]:
    rows = await runtime.db.fetch_all(
        "SELECT action FROM mail.billing_activity WHERE account_id = %s ORDER BY id", (account_id,)
    )
    return [r["action"] for r in rows]


async def subscribed_to_pro(client, runtime, clock, standin, *, days: int = 5):
    """Checkout against the stand-in, then the events Stripe sends when it completes."""
    account, headers = await signed_in(runtime)
    resp = await client.post("/api/subscription", json={"plan_id": "pro"}, headers=headers)
    assert resp.status == 200, await resp.text()
    answer = await resp.json()
    assert answer["status"] == "pending"
    assert answer["url"].startswith("https://checkout.stripe.com/c/pay/cs_test_")
    (session,) = standin.sessions.values()
    assert session["mode"] == "subscription" and session["line_items"]["0"]["price"] == "price_pro"
    assert session["metadata"] == {"account_id": account.id, "plan_id": "pro"}
    assert "/billing/return?session_id={CHECKOUT_SESSION_ID}" in session["success_url"]
    customer = session["customer"]
    assert standin.customers[customer]["email"] == account.email
    sub = standin.add_subscription(
        customer, "price_pro", session["subscription_data"]["metadata"], now_ts(clock) + days * DAY
    )
    t = now_ts(clock)
    completed = {**session, "status": "complete", "subscription": sub["id"]}
    resp = await post_event(client, event("checkout.session.completed", completed, created=t), t)
    assert resp.status == 200, await resp.text()
    resp = await post_event(client, event("customer.subscription.created", sub, created=t), t)
    assert resp.status == 200, await resp.text()
    return account, headers, sub


async def test_provider_is_stripe_and_a_free_plan_needs_no_checkout(client, runtime):
    account, headers = await signed_in(runtime)
    provider = await (await client.get("/api/billing/provider", headers=headers)).json()
    assert provider == {"object": "billing_provider", "provider": "stripe"}
    resp = await client.post("/api/subscription", json={"plan_id": "locked"}, headers=headers)
    assert (await resp.json())["status"] == "active"
    assert (await entitlement(client, headers))["plan"]["id"] == "locked"
    resp = await client.post("/api/subscription", json={"plan_id": "nope"}, headers=headers)
    assert resp.status == 404
    assert "subscription.changed" in await activity(runtime, account.id)


async def test_subscribe_renew_cancel_and_end_at_period_end(client, runtime, clock, stripe_standin):
    account, headers, sub = await subscribed_to_pro(client, runtime, clock, stripe_standin)
    ent = await entitlement(client, headers)
    assert ent["plan"]["id"] == "pro" and ent["subscription"]["status"] == "active"
    assert ent["features"]["webhooks"] is True
    first_end = ent["subscription"]["current_period_end"]

    # Renewal: the invoice of the next period is paid.
    t = now_ts(clock) + 60
    invoice = {
        "id": "in_renew_1",
        "object": "invoice",
        "customer": sub["customer"],
        "status": "paid",
        "subscription": sub["id"],
        "amount_paid": 900,
        "currency": "eur",
        "created": t,
        "hosted_invoice_url": "https://invoice.stripe.com/i/in_renew_1",
        "lines": {"object": "list", "data": [{"period": {"start": t, "end": t + 10 * DAY}}]},
    }
    assert (await post_event(client, event("invoice.paid", invoice, created=t), t)).status == 200
    ent = await entitlement(client, headers)
    assert ent["subscription"]["current_period_end"] > first_end
    listed = await (await client.get("/api/billing/transactions", headers=headers)).json()
    (txn,) = listed["data"]
    assert (txn["kind"], txn["status"], txn["amount"], txn["currency"]) == (
        "invoice",
        "paid",
        900,
        "eur",
    )
    one = await client.get(f"/api/billing/transactions/{txn['id']}", headers=headers)
    assert (await one.json())["hosted_url"].endswith("in_renew_1")

    # Cancel: at period end, still active until then.
    resp = await client.post("/api/subscription/cancel", headers=headers)
    assert resp.status == 200, await resp.text()
    assert (await resp.json())["status"] == "cancelled"
    assert stripe_standin.subscriptions[sub["id"]]["cancel_at_period_end"] is True
    clock.advance(days=9)
    await runtime.jobs.run_due()
    ent = await entitlement(client, headers)
    assert ent["plan"]["id"] == "pro" and ent["subscription"]["status"] == "cancelled"
    clock.advance(days=1, seconds=120)
    await runtime.jobs.run_due()
    ent = await entitlement(client, headers)
    assert ent["plan"]["id"] == "starter" and ent["subscription"]["status"] == "lapsed"
    actions = await activity(runtime, account.id)
    for action in (
        "checkout.started",
        "subscription.active",
        "subscription.renewed",
        "subscription.cancelled",
        "subscription.ended",
    ):
        assert action in actions, actions


async def test_unpaid_lapses_after_the_grace_and_the_job_renews_a_missed_event(
    client, runtime, clock, stripe_standin
):
    _, headers, sub = await subscribed_to_pro(client, runtime, clock, stripe_standin, days=2)
    # Stripe renewed, but its event never arrived: the job asks Stripe and renews.
    stripe_standin.subscriptions[sub["id"]]["current_period_end"] = now_ts(clock) + 4 * DAY
    clock.advance(days=2, seconds=60)
    await runtime.jobs.run_due()
    ent = await entitlement(client, headers)
    assert ent["plan"]["id"] == "pro" and ent["subscription"]["status"] == "active"
    # Not renewed this time: entitled through the grace (3 days), then back on the default.
    clock.advance(days=3)
    await runtime.jobs.run_due()
    assert (await entitlement(client, headers))["plan"]["id"] == "pro"
    clock.advance(days=2)  # five days past the period end
    await runtime.jobs.run_due()
    ent = await entitlement(client, headers)
    assert ent["plan"]["id"] == "starter" and ent["subscription"]["status"] == "lapsed"


async def test_webhook_signature_tampering_old_timestamps_replays_and_order(
    client, runtime, clock, stripe_standin
):
    account, headers, sub = await subscribed_to_pro(client, runtime, clock, stripe_standin)
    t = now_ts(clock) + 100
    cancelled = {**sub, "status": "canceled"}
    payload = event("customer.subscription.updated", cancelled, created=t, event_id="evt_cancel")

    async def plan() -> str:
        return (await entitlement(client, headers))["plan"]["id"]

    # Tampered body: the signature no longer matches; 400 and nothing changes.
    sig = signed(payload, t)
    tampered = payload.replace('"canceled"', '"active"  ')
    resp = await client.post("/api/webhooks/payments", data=tampered.encode(), headers=sig)
    assert resp.status == 400 and (await resp.json())["name"] == "validation_error"
    # Wrong secret, no header, a timestamp outside the tolerance (the library's scheme all along).
    for headers_ in (
        signed(payload, t, secret="whsec_other"),
        {"Content-Type": "application/json"},
        signed(payload, now_ts(clock) - 301),  # Stripe's libraries: 300 s
    ):
        resp = await client.post("/api/webhooks/payments", data=payload.encode(), headers=headers_)
        assert resp.status == 400
    assert await plan() == "pro"
    assert (
        await runtime.db.fetch_val(
            "SELECT count(*) FROM mail.payment_events WHERE id = 'evt_cancel'"
        )
        == 0
    )

    # A header carrying several v1 (a secret being rolled): one matching is enough.
    good = signed(payload, t)["Stripe-Signature"]
    rolled = {"Stripe-Signature": f"t={t},v1={'0' * 64},{good.split(',')[1]}"}
    resp = await client.post("/api/webhooks/payments", data=payload.encode(), headers=rolled)
    assert resp.status == 200, await resp.text()
    assert await plan() == "starter"

    # Replayed: the same id changes nothing, even after the state moved on.
    await runtime.db.execute(
        "UPDATE mail.billing_accounts SET plan_id = 'pro', status = 'active' WHERE account_id = %s",
        (account.id,),
    )
    resp = await post_event(client, payload, t)
    assert resp.status == 200 and (await resp.json())["duplicate"] is True
    assert await plan() == "pro"

    # Out of order: an update created before the last applied one changes nothing.
    older = event(
        "customer.subscription.updated",
        {**sub, "status": "canceled"},
        created=t - 50,
        event_id="evt_old",
    )
    assert (await post_event(client, older, t)).status == 200
    assert await plan() == "pro"

    # Unknown types are acknowledged and ignored.
    unknown = event(
        "customer.discount.created", {"id": "di_1", "customer": sub["customer"]}, created=t
    )
    resp = await post_event(client, unknown, t)
    assert resp.status == 200 and (await resp.json()) == {"received": True}


async def test_out_of_order_invoice_events_keep_the_newest_state(
    client, runtime, clock, stripe_standin
):
    _, headers, sub = await subscribed_to_pro(client, runtime, clock, stripe_standin)
    t = now_ts(clock)
    base = {
        "id": "in_1",
        "object": "invoice",
        "customer": sub["customer"],
        "amount_due": 900,
        "currency": "eur",
        "created": t,
    }
    paid = event("invoice.paid", {**base, "status": "paid", "amount_paid": 900}, created=t + 20)
    finalized = event("invoice.finalized", {**base, "status": "open"}, created=t + 10)
    assert (await post_event(client, paid, t)).status == 200
    assert (await post_event(client, finalized, t)).status == 200  # arrives late
    listed = await (await client.get("/api/billing/transactions", headers=headers)).json()
    assert [x["status"] for x in listed["data"]] == ["paid"]


async def test_setup_checkout_payment_methods_and_tax_id(client, runtime, clock, stripe_standin):
    account, headers = await signed_in(runtime)
    resp = await client.post("/api/billing/checkout/setup", headers=headers)
    assert resp.status == 200, await resp.text()
    answer = await resp.json()
    assert answer["object"] == "checkout_session" and answer["url"].startswith(
        "https://checkout.stripe.com/"
    )
    session = stripe_standin.sessions[answer["checkout_id"]]
    assert session["mode"] == "setup"

    # The card the hosted page collected reaches us as payment_method.attached.
    pm = stripe_standin.add_card("visa", "4242")
    stripe_standin.methods[pm]["customer"] = session["customer"]
    t = now_ts(clock)
    resp = await post_event(
        client, event("payment_method.attached", stripe_standin.methods[pm], created=t), t
    )
    assert resp.status == 200
    # A second card recorded through the API (collected by Stripe.js).
    pm2 = stripe_standin.add_card("mastercard", "4444")
    resp = await client.post(
        "/api/billing/payment-methods", json={"payment_method_id": pm2}, headers=headers
    )
    assert resp.status == 201, await resp.text()
    second = await resp.json()
    assert (second["brand"], second["last4"], second["default"]) == ("mastercard", "4444", False)
    resp = await client.post(
        f"/api/billing/payment-methods/{second['id']}/default", headers=headers
    )
    assert (await resp.json())["default"] is True
    customer = stripe_standin.customers[session["customer"]]
    assert customer["invoice_settings"]["default_payment_method"] == pm2
    listed = await (await client.get("/api/billing/payment-methods", headers=headers)).json()
    assert [m["last4"] for m in listed["data"]] == ["4444", "4242"]
    # Unknown at Stripe: its error becomes ours.
    resp = await client.post(
        "/api/billing/payment-methods", json={"payment_method_id": "pm_nope"}, headers=headers
    )
    assert resp.status == 400 and "No such PaymentMethod" in (await resp.json())["message"]
    resp = await client.delete(f"/api/billing/payment-methods/{second['id']}", headers=headers)
    assert resp.status == 200
    assert stripe_standin.methods[pm2]["customer"] is None
    # Another account sees none of them.
    _, other = await signed_in(runtime)
    resp = await client.delete(
        f"/api/billing/payment-methods/{listed['data'][1]['id']}", headers=other
    )
    assert resp.status == 404

    # Tax id: checked per type here, then by Stripe.
    resp = await client.put(
        "/api/billing/tax-id", json={"type": "eu_vat", "value": "not vat"}, headers=headers
    )
    assert resp.status == 400
    resp = await client.put(
        "/api/billing/tax-id", json={"type": "eu_vat", "value": "de123456789"}, headers=headers
    )
    assert resp.status == 200, await resp.text()
    assert (await resp.json()) == {"object": "tax_id", "type": "eu_vat", "value": "DE123456789"}
    (stored,) = stripe_standin.tax_ids.values()
    assert stored["value"] == "DE123456789" and stored["customer"] == session["customer"]
    resp = await client.put(
        "/api/billing/tax-id", json={"type": "gb_vat", "value": "GB123456789"}, headers=headers
    )
    assert resp.status == 200
    assert [v["type"] for v in stripe_standin.tax_ids.values()] == ["gb_vat"]  # the old one removed
    got = await (await client.get("/api/billing/tax-id", headers=headers)).json()
    assert got["type"] == "gb_vat"
    actions = await activity(runtime, account.id)
    assert {
        "customer.created",
        "payment_method.added",
        "payment_method.default",
        "payment_method.removed",
        "tax_id.set",
    } <= set(actions)
    # The secret key travelled as Stripe wants it; the webhook secret never left.
    assert all(
        h.get("Authorization", "").startswith("Bearer sk_test_")
        for *_, h in stripe_standin.requests
    )
    assert WEBHOOK_SECRET not in json.dumps([r[2] for r in stripe_standin.requests])
