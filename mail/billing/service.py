"""Billing: the entitlement view, subscriptions, checkout, payment methods, transactions, tax id.

Every change an account's billing goes through is recorded in
``mail.billing_activity`` in the transaction that makes it.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from common.db import Conn
from mail.accounts.store import Account
from mail.billing import entitlement, store
from mail.billing.entitlement import Entitlement, Plan
from mail.billing.store import BillingAccount, PaymentMethod, Transaction
from mail.billing.stripe import Stripe, StripeError
from mail.context import MailContext
from mail.errors import MailError, conflict, forbidden, not_found, validation_error
from mail.web.lists import ListParams


def provider(ctx: MailContext) -> str:
    return ctx.billing.provider


def stripe(ctx: MailContext) -> Stripe:
    if ctx.billing.provider != "stripe":
        raise forbidden("no payment provider is configured on this instance")
    return Stripe(ctx.billing)


def provider_error(exc: StripeError) -> MailError:
    """A Stripe refusal of what the person sent is theirs to fix (400); anything else is ours."""
    if exc.type in ("invalid_request_error", "card_error") and exc.status < 500:
        return validation_error(f"payment provider: {exc.message}")
    return MailError("application_error", "the payment provider is unavailable", status=502)


async def plans(ctx: MailContext) -> list[Plan]:
    async with ctx.db.connection() as conn:
        return await store.visible_plans(conn)


async def current(ctx: MailContext, account_id: str) -> tuple[Entitlement, BillingAccount]:
    """What GET /api/entitlement and the Overview show: one function, one answer."""
    async with ctx.db.connection() as conn:
        ent = await entitlement.entitlement(conn, account_id, ctx.clock.now())
        row = await store.account(conn, account_id)
    return ent, row


# --- subscriptions -----------------------------------------------------------


async def _subscribable(conn: Conn, plan_id: object) -> Plan:
    if not isinstance(plan_id, str):
        raise validation_error("plan_id must be a string")
    plan = await store.plan(conn, plan_id)
    if plan is None or not (plan.visible or plan.is_default):
        raise not_found("plan")
    return plan


async def subscribe(ctx: MailContext, account: Account, plan_id: object) -> dict[str, Any]:
    """A free plan at once; a paid plan through the provider's hosted checkout."""
    now = ctx.clock.now()
    async with ctx.db.transaction() as conn:
        plan = await _subscribable(conn, plan_id)
        row = await store.account(conn, account.id, for_update=True)
        # A paid plan goes through checkout, below: outside the transaction, as
        # the provider call can be slow.
        if not plan.price:
            if row.subscription_id and row.status in ("active", "past_due"):
                raise conflict(
                    "cancel the paid subscription first: it stays active until its period ends"
                )
            await store.update_account(
                conn,
                account.id,
                {
                    "plan_id": None if plan.is_default else plan.id,
                    "status": "none" if plan.is_default else "active",
                    "current_period_start": now,
                    "current_period_end": None,
                    "subscription_id": None,
                },
                now,
            )
            await store.record_activity(
                conn,
                account.id,
                "subscription.changed",
                {"plan": plan.id, "from": row.plan_id},
                now,
            )
            return {"object": "subscription", "status": "active", "plan_id": plan.id}
    checkout = await checkout_subscription(ctx, account, plan.id)
    return {"object": "subscription", "status": "pending", "plan_id": plan.id, **checkout}


async def cancel(ctx: MailContext, account: Account) -> BillingAccount:
    """Cancel at period end: still active until then (a plan without a period ends now)."""
    now = ctx.clock.now()
    async with ctx.db.connection() as conn:
        row = await store.account(conn, account.id)
    if row.plan_id is None or row.status not in ("active", "past_due"):
        raise conflict("there is no active subscription to cancel")
    if row.subscription_id:
        try:
            await stripe(ctx).update_subscription(
                row.subscription_id, {"cancel_at_period_end": True}
            )
        except StripeError as exc:
            raise provider_error(exc) from None
    async with ctx.db.transaction() as conn:
        row = await store.account(conn, account.id, for_update=True)
        if row.current_period_end is not None and row.current_period_end > now:
            await store.update_account(conn, account.id, {"status": "cancelled"}, now)
        else:
            await end(conn, row, "lapsed", now)
        await store.record_activity(
            conn, account.id, "subscription.cancelled", {"plan": row.plan_id}, now
        )
        return await store.account(conn, account.id)


async def end(conn: Conn, row: BillingAccount, status: str, now: datetime) -> None:
    """Back on the default plan. Nothing is deleted: over-limit resources turn read-only."""
    await store.update_account(
        conn,
        row.account_id,
        {"plan_id": None, "status": status, "current_period_end": None, "subscription_id": None},
        now,
    )


# --- checkout ------------------------------------------------------------------


async def _customer(ctx: MailContext, account: Account) -> str:
    async with ctx.db.connection() as conn:
        row = await store.account(conn, account.id)
    if row.customer_id:
        return row.customer_id
    try:
        customer = await stripe(ctx).create_customer(account.email, account.id)
    except StripeError as exc:
        raise provider_error(exc) from None
    now = ctx.clock.now()
    async with ctx.db.transaction() as conn:
        row = await store.account(conn, account.id, for_update=True)
        if row.customer_id:  # a concurrent checkout made one first: keep that one
            return row.customer_id
        await store.update_account(
            conn, account.id, {"customer_id": customer["id"], "provider": "stripe"}, now
        )
        await store.record_activity(
            conn, account.id, "customer.created", {"customer": customer["id"]}, now
        )
    return str(customer["id"])


def _urls(ctx: MailContext) -> dict[str, str]:
    base = ctx.settings.public_url.rstrip("/")
    return {
        "success_url": f"{base}/billing/return?session_id={{CHECKOUT_SESSION_ID}}",
        "cancel_url": f"{base}/billing?checkout=cancelled",
    }


async def checkout_subscription(
    ctx: MailContext, account: Account, plan_id: object
) -> dict[str, Any]:
    async with ctx.db.connection() as conn:
        plan = await _subscribable(conn, plan_id)
    if not plan.price or not plan.stripe_price_id:
        raise validation_error(f"the plan {plan.id} is not sold through the payment provider")
    client = stripe(ctx)
    customer = await _customer(ctx, account)
    metadata = {"account_id": account.id, "plan_id": plan.id}
    try:
        session = await client.checkout_session(
            {
                "mode": "subscription",
                "customer": customer,
                "client_reference_id": account.id,
                "line_items": [{"price": plan.stripe_price_id, "quantity": 1}],
                "metadata": metadata,
                "subscription_data": {"metadata": metadata},
                **_urls(ctx),
            }
        )
    except StripeError as exc:
        raise provider_error(exc) from None
    await _note(ctx, account.id, "checkout.started", {"mode": "subscription", "plan": plan.id})
    return {"checkout_id": session["id"], "url": session["url"]}


async def checkout_setup(ctx: MailContext, account: Account) -> dict[str, Any]:
    client = stripe(ctx)
    customer = await _customer(ctx, account)
    try:
        session = await client.checkout_session(
            {
                "mode": "setup",
                "customer": customer,
                "client_reference_id": account.id,
                "payment_method_types": ["card"],
                "metadata": {"account_id": account.id},
                **_urls(ctx),
            }
        )
    except StripeError as exc:
        raise provider_error(exc) from None
    await _note(ctx, account.id, "checkout.started", {"mode": "setup"})
    return {"checkout_id": session["id"], "url": session["url"]}


async def _note(ctx: MailContext, account_id: str, action: str, detail: dict[str, Any]) -> None:
    async with ctx.db.transaction() as conn:
        await store.record_activity(conn, account_id, action, detail, ctx.clock.now())


# --- payment methods -------------------------------------------------------------


async def methods(ctx: MailContext, account: Account) -> list[PaymentMethod]:
    async with ctx.db.connection() as conn:
        return await store.methods(conn, account.id)


async def record_method(ctx: MailContext, account: Account, provider_id: str) -> PaymentMethod:
    """Attach a payment method the browser collected (Stripe.js) to the account's customer."""
    client = stripe(ctx)
    customer = await _customer(ctx, account)
    try:
        pm = await client.attach_payment_method(provider_id, customer)
    except StripeError as exc:
        raise provider_error(exc) from None
    now = ctx.clock.now()
    async with ctx.db.transaction() as conn:
        method_id = await store.upsert_method(conn, account.id, pm, now)
        await store.record_activity(
            conn, account.id, "payment_method.added", {"method": pm["id"]}, now
        )
        found = await store.method(conn, account.id, method_id)
    assert found is not None
    return found


async def _owned_method(ctx: MailContext, account: Account, method_id: str) -> PaymentMethod:
    async with ctx.db.connection() as conn:
        found = await store.method(conn, account.id, method_id)
    if found is None:
        raise not_found("payment method")
    return found


async def default_method(ctx: MailContext, account: Account, method_id: str) -> PaymentMethod:
    found = await _owned_method(ctx, account, method_id)
    async with ctx.db.connection() as conn:
        row = await store.account(conn, account.id)
    if row.customer_id:
        try:
            await stripe(ctx).set_default_payment_method(row.customer_id, found.provider_id)
        except StripeError as exc:
            raise provider_error(exc) from None
    now = ctx.clock.now()
    async with ctx.db.transaction() as conn:
        await store.set_default_method(conn, account.id, found.provider_id)
        await store.record_activity(
            conn, account.id, "payment_method.default", {"method": found.provider_id}, now
        )
        updated = await store.method(conn, account.id, method_id)
    assert updated is not None
    return updated


async def remove_method(ctx: MailContext, account: Account, method_id: str) -> None:
    found = await _owned_method(ctx, account, method_id)
    try:
        await stripe(ctx).detach_payment_method(found.provider_id)
    except StripeError as exc:
        if exc.code != "resource_missing":  # already gone at Stripe: forget it here too
            raise provider_error(exc) from None
    now = ctx.clock.now()
    async with ctx.db.transaction() as conn:
        await store.delete_method_by_provider(conn, account.id, found.provider_id)
        await store.record_activity(
            conn, account.id, "payment_method.removed", {"method": found.provider_id}, now
        )


# --- transactions -------------------------------------------------------------------


async def list_transactions(
    ctx: MailContext, account: Account, params: ListParams
) -> tuple[list[Transaction], int]:
    async with ctx.db.connection() as conn:
        return await store.transactions(
            conn, account.id, params.order_by, params.limit, params.offset
        )


async def read_transaction(ctx: MailContext, account: Account, transaction_id: str) -> Transaction:
    async with ctx.db.connection() as conn:
        found = await store.transaction(conn, account.id, transaction_id)
    if found is None:
        raise not_found("transaction")
    return found


# --- tax id -----------------------------------------------------------------------------

# The formats Stripe checks for the types most customers have (docs.stripe.com/billing/customer/tax-ids).
TAX_ID_FORMATS = {
    "eu_vat": r"[A-Z]{2}[0-9A-Z+*.]{2,13}",
    "gb_vat": r"GB[0-9]{9}([0-9]{3})?",
    "us_ein": r"[0-9]{2}-[0-9]{7}",
    "ch_vat": r"CHE-?[0-9]{3}\.?[0-9]{3}\.?[0-9]{3} ?(MWST|TVA|IVA)?",
    "no_vat": r"[0-9]{9}MVA",
    "au_abn": r"[0-9]{11}",
    "ca_bn": r"[0-9]{9}",
    "in_gst": r"[0-9]{2}[A-Z]{5}[0-9]{4}[A-Z][1-9A-Z]Z[0-9A-Z]",
    "jp_cn": r"[0-9]{13}",
    "nz_gst": r"[0-9]{8,9}",
}


def check_tax_id(type_: str, value: str) -> str:
    pattern = TAX_ID_FORMATS.get(type_)
    if pattern is None:
        raise validation_error(f"type must be one of {', '.join(sorted(TAX_ID_FORMATS))}")
    value = value.strip().upper() if type_ != "ch_vat" else value.strip()
    if not re.fullmatch(pattern, value):
        raise validation_error(f"value is not a valid {type_} number")
    return value


async def tax_id(ctx: MailContext, account: Account) -> BillingAccount:
    async with ctx.db.connection() as conn:
        return await store.account(conn, account.id)


async def set_tax_id(ctx: MailContext, account: Account, type_: str, value: str) -> BillingAccount:
    value = check_tax_id(type_, value)
    provider_id = None
    if ctx.billing.provider == "stripe":
        client = stripe(ctx)
        customer = await _customer(ctx, account)
        async with ctx.db.connection() as conn:
            old = await store.account(conn, account.id)
        try:
            created = await client.create_tax_id(customer, type_, value)
            if old.tax_id_provider_id:
                await client.delete_tax_id(customer, old.tax_id_provider_id)
        except StripeError as exc:
            raise provider_error(exc) from None
        provider_id = str(created["id"])
    now = ctx.clock.now()
    async with ctx.db.transaction() as conn:
        await store.account(conn, account.id, for_update=True)
        await store.update_account(
            conn,
            account.id,
            {"tax_id_type": type_, "tax_id_value": value, "tax_id_provider_id": provider_id},
            now,
        )
        await store.record_activity(conn, account.id, "tax_id.set", {"type": type_}, now)
        return await store.account(conn, account.id)
