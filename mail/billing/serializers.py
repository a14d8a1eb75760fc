"""Response shapes of billing, built only here."""

from __future__ import annotations

from typing import Any

from mail.billing.entitlement import Entitlement, Plan
from mail.billing.plans import FEATURES, LIMITS
from mail.billing.store import BillingAccount, PaymentMethod, Transaction


def plan(p: Plan) -> dict[str, Any]:
    return {
        "object": "plan",
        "id": p.id,
        "name": p.name,
        "description": p.description,
        "position": p.position,
        "default": p.is_default,
        "price": p.price,
        "currency": p.currency,
        "interval": p.interval,
        "features": {f: p.has(f) for f in FEATURES},
        "limits": {name: p.limit(name) for name in LIMITS},
    }


def subscription(row: BillingAccount) -> dict[str, Any]:
    return {
        "object": "subscription",
        "status": row.status,
        "plan_id": row.plan_id,
        "provider": row.provider,
        "current_period_start": row.current_period_start,
        "current_period_end": row.current_period_end,
        # Cancelled: still active until current_period_end.
        "cancel_at_period_end": row.status == "cancelled",
    }


def usage(ent: Entitlement) -> dict[str, Any]:
    """The plan with its features, limits and the usage of each: the entitlement and the Overview."""
    over = ent.over()
    return {
        "plan": plan(ent.plan),
        "features": {f: ent.plan.has(f) for f in FEATURES},
        "limits": {name: ent.plan.limit(name) for name in LIMITS},
        "usage": {
            name: {
                "used": ent.usage.get(name, 0),
                "limit": ent.plan.limit(name),
                "over": name in over,
            }
            for name in LIMITS
        },
        # After a downgrade: these resources are read-only until back under.
        "over_limits": over,
    }


def entitlement(ent: Entitlement, row: BillingAccount) -> dict[str, Any]:
    return {"object": "entitlement", **usage(ent), "subscription": subscription(row)}


def payment_method(m: PaymentMethod) -> dict[str, Any]:
    return {
        "object": "payment_method",
        "id": m.id,
        "provider_id": m.provider_id,
        "brand": m.brand,
        "last4": m.last4,
        "exp_month": m.exp_month,
        "exp_year": m.exp_year,
        "default": m.is_default,
        "created_at": m.created_at,
    }


def transaction_object(t: Transaction) -> dict[str, Any]:
    return {
        "object": "transaction",
        "id": t.id,
        "kind": t.kind,
        "provider_id": t.provider_id,
        "status": t.status,
        "amount": t.amount,
        "currency": t.currency,
        "description": t.description,
        "hosted_url": t.hosted_url,
        "created_at": t.created_at,
    }


def tax_id(row: BillingAccount) -> dict[str, Any]:
    return {"object": "tax_id", "type": row.tax_id_type, "value": row.tax_id_value}
