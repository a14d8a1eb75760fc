"""Response shapes of the sending API: Resend's email object, with our delivery detail."""

from __future__ import annotations

from typing import Any

from mail.sending.service import EmailDetail
from mail.sending.store import SentEmail


def _or_none(values: list[str]) -> list[str] | None:
    return values or None  # Resend answers null for an empty cc, bcc or reply_to


def list_item(email: SentEmail, last_event: str) -> dict[str, Any]:
    return {
        "object": "email",
        "id": email.id,
        "to": email.to_addresses,
        "from": email.from_address,
        "created_at": email.created_at,
        "subject": email.subject,
        "bcc": _or_none(email.bcc),
        "cc": _or_none(email.cc),
        "reply_to": _or_none(email.reply_to),
        "last_event": last_event,
        "scheduled_at": email.scheduled_at,
    }


def email(detail: EmailDetail) -> dict[str, Any]:
    sent, status = detail.email, detail.status
    return {
        **list_item(sent, status.status if status else "queued"),
        "message_id": sent.message_id,
        "html": sent.html,
        "text": sent.text,
        "tags": sent.tags,
        "headers": sent.headers,
        "attachments": sent.attachments,
        # Beyond Resend's object: where each recipient stands and what its server said.
        "recipients": [
            {
                "email": r.email,
                "status": r.status,
                "attempts": r.attempts,
                "last_attempt_at": r.last_attempt_at,
                "next_attempt_at": r.next_attempt_at,
                "last_reply": r.last_reply or None,
            }
            for r in (status.recipients if status else [])
        ],
        "events": [
            {"id": e.id, "type": e.type, "created_at": e.created_at, "data": e.payload.get("data")}
            for e in detail.events
        ],
    }


def page(items: list[dict[str, Any]], has_more: bool) -> dict[str, Any]:
    return {"object": "list", "has_more": has_more, "data": items}


def email_ref(email_id: str) -> dict[str, Any]:
    """PATCH and cancel answer Resend's ``{object: "email", id}``."""
    return {"object": "email", "id": email_id}
