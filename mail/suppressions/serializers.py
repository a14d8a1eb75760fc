"""Response shapes of suppressions, with Resend's names (origin, source_id)."""

from __future__ import annotations

from typing import Any

from mta.mailstore import Suppression


def suppression(row: Suppression) -> dict[str, Any]:
    return {
        "object": "suppression",
        "id": row.id,
        "email": row.email,
        # bounce, complaint or manual; source_id is the email that bounced or complained.
        "origin": row.reason,
        "source_id": row.email_id,
        "created_at": row.created_at,
    }


def deleted(suppression_id: str) -> dict[str, Any]:
    return {"object": "suppression", "id": suppression_id, "deleted": True}
