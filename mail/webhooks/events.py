"""The event types an endpoint can subscribe to, and a sample of each for POST .../test.

Events are rows of the account's event log (mta.events, written through
``mta.mailstore.record_event`` in the transaction of the change each
reports). The payload a receiver gets is the row's payload verbatim:
``{"type", "created_at", "data"}``, Resend's shape. docs/mail.md lists every
type with its ``data``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from mta import mailstore

# Resend's email events (written by the outbound queue and the sending API),
# email.received (inbound delivery), and the panel's domain and address events.
EMAIL_EVENTS: tuple[str, ...] = (
    "email.scheduled",
    "email.sent",
    "email.delivered",
    "email.delivery_delayed",
    "email.bounced",
    "email.complained",
    "email.failed",
    "email.canceled",
    "email.suppressed",
    "email.received",
)
DOMAIN_EVENTS: tuple[str, ...] = ("domain.created", "domain.updated", "domain.deleted")
ADDRESS_EVENTS: tuple[str, ...] = ("address.created", "address.updated", "address.deleted")
EVENT_TYPES: tuple[str, ...] = EMAIL_EVENTS + DOMAIN_EVENTS + ADDRESS_EVENTS

SAMPLE_EMAIL_ID = "00000000-0000-4000-8000-000000000000"


# Resend's timestamps: ISO 8601 in UTC with milliseconds, as the event log writes them.
iso = mailstore.event_time


def sample(type_: str, now: datetime) -> dict[str, Any]:
    """A made-up event of ``type_`` in the shape real ones have (nothing of the account's)."""
    when = iso(now)
    data: dict[str, Any]
    if type_.startswith("email."):
        data = {
            "email_id": SAMPLE_EMAIL_ID,
            "created_at": when,
            "from": "Acme <sender@example.com>",
            "to": ["recipient@example.com"],
            "subject": "A sample event",
        }
        if type_ == "email.received":
            data.update({"cc": [], "bcc": [], "message_id": "<sample@example.com>"})
        if type_ == "email.bounced":
            data["bounce"] = {
                "type": "Permanent",
                "subType": "General",
                "message": "550 5.1.1 no such user",
            }
        if type_ == "email.suppressed":
            data["suppressed"] = {
                "message": mailstore.SUPPRESSED_MESSAGE,
                "type": mailstore.SUPPRESSED_TYPE,
                "recipient": "recipient@example.com",
            }
    elif type_.startswith("domain."):
        data = {
            "id": SAMPLE_EMAIL_ID,
            "name": "example.com",
            "status": "verified",
            "created_at": when,
        }
    else:
        data = {
            "id": SAMPLE_EMAIL_ID,
            "email": "someone@example.com",
            "domain_id": SAMPLE_EMAIL_ID,
            "created_at": when,
        }
    return {"type": type_, "created_at": when, "data": data}
