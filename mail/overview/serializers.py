"""The Overview's response shape, built only here."""

from __future__ import annotations

from typing import Any

from mail.billing import serializers as billing_serializers
from mail.overview.service import Overview


def _totals(counts: dict[str, int]) -> dict[str, int]:
    return {
        "received": counts.get("email.received", 0),
        "sent": counts.get("email.sent", 0),
        "delivered": counts.get("email.delivered", 0),
        "bounced": counts.get("email.bounced", 0),
        "complained": counts.get("email.complained", 0),
    }


def overview(o: Overview) -> dict[str, Any]:
    health: dict[str, int] = {}
    for d in o.domains:
        health[d.dns_status] = health.get(d.dns_status, 0) + 1
    return {
        "object": "overview",
        "generated_at": o.now,
        "domains": {
            "total": o.domain_total,
            "dns_status": health,
            "data": [
                {
                    "object": "domain",
                    "id": d.id,
                    "name": d.name,
                    "dns_status": d.dns_status,
                    "dns_checked_at": d.dns_checked_at,
                    "address_count": d.address_count,
                }
                for d in o.domains
            ],
        },
        "addresses": {"total": o.address_count},
        "storage": {
            "used_bytes": o.used_bytes,
            "emails": o.stored_emails,
            "quota_bytes": o.quota_bytes,
        },
        "mail": {
            "last_24h": _totals(o.last_24h),
            "last_30d": _totals(o.last_30d),
            "daily": [
                {"date": day.day.isoformat(), "received": day.received, "sent": day.sent}
                for day in o.daily
            ],
        },
        "rates": {
            "bounce_rate": o.rate("email.bounced"),
            "complaint_rate": o.rate("email.complained"),
        },
        "recent_activity": [
            {
                "object": "event",
                "id": e.id,
                "type": e.type,
                "created_at": e.created_at,
                "data": e.payload.get("data", {}),
            }
            for e in o.recent
        ],
        "webhooks": {
            "failing": [
                {
                    "object": "webhook",
                    "id": w.id,
                    "endpoint": w.endpoint,
                    "enabled": w.enabled,
                    "disabled_reason": w.disabled_reason,
                    "consecutive_failures": w.consecutive_failures,
                    "failing_since": w.failing_since,
                }
                for w in o.failing_webhooks
            ],
        },
        "transfers": {"running": o.running_transfers},
        # The plan and its usage, as GET /api/entitlement shows them (mail/billing/).
        "plan": billing_serializers.usage(o.entitlement),
    }
