"""Response shapes of webhooks, their events and attempts, built only here.

The secret appears only in the create and rotate answers (``with_secret``).
"""

from __future__ import annotations

from typing import Any

from common.webhooks import Outcome
from mail.webhooks.store import Attempt, Delivery, Webhook
from mta.mailstore import Event


def webhook(row: Webhook) -> dict[str, Any]:
    return {
        "object": "webhook",
        "id": row.id,
        "endpoint": row.endpoint,
        "description": row.description,
        "events": row.events,
        "enabled": row.enabled,
        "status": "enabled" if row.enabled else "disabled",
        "disabled_reason": row.disabled_reason,
        "secret_hint": row.secret_hint,
        "consecutive_failures": row.consecutive_failures,
        "failing_since": row.failing_since,
        "last_success_at": row.last_success_at,
        "created_at": row.created_at,
        "updated_at": row.updated_at,
    }


def with_secret(row: Webhook, secret: str) -> dict[str, Any]:
    """Create and rotate only: the one time the secret is shown."""
    return {**webhook(row), "secret": secret}


def event(row: Delivery) -> dict[str, Any]:
    return {
        "object": "webhook_event",
        "id": row.event_id,
        "webhook_id": row.webhook_id,
        "type": row.event_type,
        "created_at": row.event_created_at,
        "message_id": row.message_id,
        "status": row.status,
        "attempt_count": row.attempts,
        "last_attempt_at": row.last_attempt_at,
        "last_status": row.last_status,
        "next_attempt_at": row.next_attempt_at,
    }


def attempt(row: Attempt) -> dict[str, Any]:
    return {
        "object": "webhook_attempt",
        "attempt": row.attempt,
        "trigger": row.trigger,
        "at": row.at,
        "status": row.status,
        "ok": row.ok,
        "error": row.error,
        "duration_ms": row.duration_ms,
        "response": row.response,
    }


def event_detail(row: Delivery, stored: Event | None, attempts: list[Attempt]) -> dict[str, Any]:
    return {
        **event(row),
        # None only if the event log lost the row (it is kept with the account).
        "payload": None if stored is None else stored.payload,
        "attempts": [attempt(a) for a in attempts],
    }


def test_result(type_: str, outcome: Outcome) -> dict[str, Any]:
    return {
        "object": "webhook_test",
        "type": type_,
        "ok": outcome.ok,
        "status": outcome.status,
        "duration_ms": outcome.duration_ms,
        "response": outcome.response,
        "error": outcome.error,
    }
