"""Response shapes of mailbox recovery, built only here."""

from __future__ import annotations

from typing import Any

from mail.recovery.service import Check


def check(found: Check) -> dict[str, Any]:
    return {"object": "recovery_check", "domain": found.domain, "available": found.available}


def requested(message: str) -> dict[str, Any]:
    return {"object": "recovery_request", "message": message}


def reset(email: str) -> dict[str, Any]:
    return {"object": "recovery_reset", "email": email, "message": "The new password is set."}
