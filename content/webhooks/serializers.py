"""The JSON of a webhook (its secret only in the create answer) and of an attempt."""

from __future__ import annotations

from typing import Any

from content.webhooks.store import Attempt, Webhook


def webhook_json(row: Webhook) -> dict[str, Any]:
    return {
        "id": row.id,
        "name": row.name,
        "url": row.url,
        "events": row.events,
        "enabled": row.enabled,
        "secretHint": row.secret_hint,
        "createdAt": row.created_at,
        "updatedAt": row.updated_at,
    }


def attempt_json(row: Attempt) -> dict[str, Any]:
    return {
        "id": row.id,
        "messageId": row.message_id,
        "event": row.event,
        "attempt": row.attempt,
        "at": row.at,
        "status": row.status,
        "ok": row.ok,
        "error": row.error,
        "durationMs": row.duration_ms,
    }
