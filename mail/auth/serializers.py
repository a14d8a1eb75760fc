"""Response shapes of sessions and two-factor enrolment, built only here."""

from __future__ import annotations

from typing import Any

from mail.auth.store import Session


def session(s: Session, current_id: str | None) -> dict[str, Any]:
    return {
        "object": "session",
        "id": s.id,
        "created_at": s.created_at,
        "last_seen_at": s.last_seen_at,
        "expires_at": s.expires_at,
        "ip": s.ip,
        "user_agent": s.user_agent,
        "current": s.id == current_id,
    }


def totp_setup(secret: str, uri: str) -> dict[str, Any]:
    # The secret is shown once, here; it is stored sealed.
    return {"object": "totp_setup", "secret": secret, "otpauth_uri": uri}


def revoked(count: int) -> dict[str, Any]:
    return {"object": "sessions_revoked", "revoked": count}
