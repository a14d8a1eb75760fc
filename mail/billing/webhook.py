"""POST /api/webhooks/payments: Stripe's signed events (docs.stripe.com/webhooks).

The body is the raw bytes as received; ``Stripe-Signature`` is
``t=<unix time>,v1=<hex>[,v1=<hex>...]`` (several v1 while a secret rolls),
each the HMAC-SHA256 of ``"<t>.<body>"`` under STRIPE_WEBHOOK_SECRET. The
timestamp must be within the tolerance of our clock and at least one v1 must
match, every one compared in constant time, before the body is parsed.

An event is applied in one transaction with the row that records its id:
a replay (same id) changes nothing; an event older than the last one applied
to the subscription changes nothing either (out of order). Unknown types are
acknowledged and ignored.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import uuid
from datetime import UTC, datetime
from typing import Any

from common.crypto import constant_time_equals
from common.db import Conn, fetch_val
from mail.billing import store
from mail.billing.service import end
from mail.context import MailContext
from mail.errors import validation_error


class BadSignature(Exception):
    pass


def verify(body: bytes, header: str | None, secret: str, now: float, tolerance: int) -> None:
    """Raise BadSignature unless ``header`` signs ``body`` with ``secret`` within ``tolerance``."""
    if not header or not secret:
        raise BadSignature("missing signature")
    timestamp: int | None = None
    signatures: list[str] = []
    for part in header.split(","):
        key, _, value = part.strip().partition("=")
        if key == "t":
            try:
                timestamp = int(value)
            except ValueError:
                raise BadSignature("bad timestamp") from None
        elif key == "v1":
            signatures.append(value)
    if timestamp is None or not signatures:
        raise BadSignature("no timestamp or no v1 signature")
    expected = hmac.new(
        secret.encode(), str(timestamp).encode() + b"." + body, hashlib.sha256
    ).hexdigest()
    # Every v1 is compared (no early exit on a match), each in constant time.
    matched = False
    for candidate in signatures:
        matched |= constant_time_equals(expected, candidate)
    if not matched:
        raise BadSignature("no matching signature")
    if abs(now - timestamp) > tolerance:
        raise BadSignature("timestamp outside the tolerance")


def _ts(value: Any) -> datetime | None:
    return datetime.fromtimestamp(int(value), UTC) if isinstance(value, int) else None


async def receive(ctx: MailContext, body: bytes, header: str | None) -> dict[str, Any]:
    now = ctx.clock.now()
    try:
        verify(
            body,
            header,
            ctx.billing.stripe_webhook_secret,
            now.timestamp(),
            ctx.billing.webhook_tolerance_seconds,
        )
    except BadSignature:
        raise validation_error("invalid signature") from None
    try:
        event = json.loads(body)
    except ValueError:
        raise validation_error("the body is not JSON") from None
    if not isinstance(event, dict) or not isinstance(event.get("id"), str):
        raise validation_error("not an event")
    type_ = str(event.get("type") or "")
    created = _ts(event.get("created")) or now
    obj = (event.get("data") or {}).get("object") or {}
    async with ctx.db.transaction() as conn:
        account_id = await _account_of(conn, obj)
        if not await store.first_event(conn, event["id"], type_, created, account_id, now):
            return {"received": True, "duplicate": True}
        handler = HANDLERS.get(type_)
        if handler is not None and account_id is not None:
            await handler(conn, account_id, obj, created, now)
    return {"received": True}


async def _account_of(conn: Conn, obj: dict[str, Any]) -> str | None:
    customer = obj.get("customer")
    if isinstance(customer, str):
        found = await store.account_by_customer(conn, customer)
        if found:
            return found
    metadata = obj.get("metadata") or {}
    candidate = metadata.get("account_id") or obj.get("client_reference_id")
    if isinstance(candidate, str) and _is_uuid(candidate):
        found = await fetch_val(
            conn, "SELECT id::text FROM mail.accounts WHERE id = %s", (candidate,)
        )
        return None if found is None else str(found)
    return None


def _is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


async def _newer(conn: Conn, account_id: str, created: datetime) -> bool:
    """Lock the account's row; True if this event is not older than the last one applied."""
    row = await store.account(conn, account_id, for_update=True)
    return row.provider_event_at is None or created >= row.provider_event_at


_STATUS = {
    "active": "active",
    "trialing": "active",
    "past_due": "past_due",
    "canceled": "lapsed",
    "unpaid": "lapsed",
    "incomplete_expired": "lapsed",
}


def _period(sub: dict[str, Any]) -> tuple[datetime | None, datetime | None]:
    start, end_ = sub.get("current_period_start"), sub.get("current_period_end")
    items = (sub.get("items") or {}).get("data") or []
    if end_ is None and items:  # newer API versions keep the period on the item
        start, end_ = items[0].get("current_period_start"), items[0].get("current_period_end")
    return _ts(start), _ts(end_)


async def _subscription(
    conn: Conn, account_id: str, sub: dict[str, Any], created: datetime, now: datetime
) -> None:
    if not await _newer(conn, account_id, created):
        return
    plan_id = (sub.get("metadata") or {}).get("plan_id")
    plan = await store.plan(conn, plan_id) if isinstance(plan_id, str) else None
    if plan is None:
        items = (sub.get("items") or {}).get("data") or []
        price = ((items[0].get("price") or {}).get("id")) if items else None
        plan = await store.plan_by_price(conn, price) if isinstance(price, str) else None
    status = _STATUS.get(str(sub.get("status")), "past_due")
    row = await store.account(conn, account_id)
    if status == "lapsed" or plan is None:
        await end(conn, row, "lapsed", now)
        await store.update_account(conn, account_id, {"provider_event_at": created}, now)
        await store.record_activity(
            conn, account_id, "subscription.lapsed", {"subscription": sub.get("id")}, now
        )
        return
    if status == "active" and sub.get("cancel_at_period_end"):
        status = "cancelled"
    start, end_ = _period(sub)
    await store.update_account(
        conn,
        account_id,
        {
            "plan_id": plan.id,
            "status": status,
            "subscription_id": sub.get("id"),
            "provider": "stripe",
            "current_period_start": start,
            "current_period_end": end_,
            "provider_event_at": created,
        },
        now,
    )
    await store.record_activity(
        conn,
        account_id,
        f"subscription.{status}",
        {"plan": plan.id, "period_end": end_.isoformat() if end_ else None},
        now,
    )


async def _subscription_deleted(
    conn: Conn, account_id: str, sub: dict[str, Any], created: datetime, now: datetime
) -> None:
    if not await _newer(conn, account_id, created):
        return
    row = await store.account(conn, account_id)
    await end(conn, row, "lapsed", now)
    await store.update_account(conn, account_id, {"provider_event_at": created}, now)
    await store.record_activity(
        conn, account_id, "subscription.ended", {"subscription": sub.get("id")}, now
    )


async def _checkout_completed(
    conn: Conn, account_id: str, session: dict[str, Any], created: datetime, now: datetime
) -> None:
    changes: dict[str, Any] = {"provider": "stripe"}
    if isinstance(session.get("customer"), str):
        changes["customer_id"] = session["customer"]
    await store.account(conn, account_id, for_update=True)
    await store.update_account(conn, account_id, changes, now)
    await store.record_activity(
        conn, account_id, "checkout.completed", {"mode": session.get("mode")}, now
    )


async def _invoice(
    conn: Conn, account_id: str, invoice: dict[str, Any], created: datetime, now: datetime
) -> None:
    await store.upsert_transaction(
        conn,
        account_id,
        {
            "provider_id": str(invoice.get("id")),
            "kind": "invoice",
            "status": str(invoice.get("status") or "open"),
            "amount": int(invoice.get("amount_paid") or invoice.get("amount_due") or 0),
            "currency": str(invoice.get("currency") or "usd"),
            "description": str(invoice.get("description") or invoice.get("number") or "Invoice"),
            "hosted_url": invoice.get("hosted_invoice_url"),
            "created_at": _ts(invoice.get("created")) or created,
        },
        created,
    )
    await store.record_activity(
        conn,
        account_id,
        "invoice." + str(invoice.get("status")),
        {"invoice": invoice.get("id")},
        now,
    )


async def _invoice_paid(
    conn: Conn, account_id: str, invoice: dict[str, Any], created: datetime, now: datetime
) -> None:
    await _invoice(conn, account_id, invoice, created, now)
    # A paid renewal extends the period (never shortens it: events may come late).
    lines = (invoice.get("lines") or {}).get("data") or []
    period_end = _ts((lines[0].get("period") or {}).get("end")) if lines else None
    row = await store.account(conn, account_id, for_update=True)
    if (
        period_end is not None
        and row.subscription_id is not None
        and invoice.get("subscription") in (None, row.subscription_id)
        and (row.current_period_end is None or period_end > row.current_period_end)
    ):
        status = "cancelled" if row.status == "cancelled" else "active"
        await store.update_account(
            conn, account_id, {"current_period_end": period_end, "status": status}, now
        )
        await store.record_activity(
            conn, account_id, "subscription.renewed", {"period_end": period_end.isoformat()}, now
        )


async def _invoice_failed(
    conn: Conn, account_id: str, invoice: dict[str, Any], created: datetime, now: datetime
) -> None:
    await _invoice(conn, account_id, invoice, created, now)
    if await _newer(conn, account_id, created):
        row = await store.account(conn, account_id)
        if row.status == "active":
            await store.update_account(
                conn, account_id, {"status": "past_due", "provider_event_at": created}, now
            )


async def _charge(
    conn: Conn, account_id: str, charge: dict[str, Any], created: datetime, now: datetime
) -> None:
    status = "refunded" if charge.get("refunded") else str(charge.get("status") or "pending")
    await store.upsert_transaction(
        conn,
        account_id,
        {
            "provider_id": str(charge.get("id")),
            "kind": "charge",
            "status": status,
            "amount": int(charge.get("amount") or 0),
            "currency": str(charge.get("currency") or "usd"),
            "description": str(charge.get("description") or "Charge"),
            "hosted_url": charge.get("receipt_url"),
            "created_at": _ts(charge.get("created")) or created,
        },
        created,
    )


async def _method_attached(
    conn: Conn, account_id: str, pm: dict[str, Any], created: datetime, now: datetime
) -> None:
    await store.upsert_method(conn, account_id, pm, now)
    await store.record_activity(
        conn, account_id, "payment_method.added", {"method": pm.get("id")}, now
    )


async def _method_detached(
    conn: Conn, account_id: str, pm: dict[str, Any], created: datetime, now: datetime
) -> None:
    await store.delete_method_by_provider(conn, account_id, str(pm.get("id")))


HANDLERS = {
    "checkout.session.completed": _checkout_completed,
    "customer.subscription.created": _subscription,
    "customer.subscription.updated": _subscription,
    "customer.subscription.deleted": _subscription_deleted,
    "invoice.paid": _invoice_paid,
    "invoice.payment_succeeded": _invoice_paid,
    "invoice.payment_failed": _invoice_failed,
    "invoice.finalized": _invoice,
    "invoice.voided": _invoice,
    "charge.succeeded": _charge,
    "charge.refunded": _charge,
    "payment_method.attached": _method_attached,
    "payment_method.detached": _method_detached,
}
